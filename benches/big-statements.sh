#!/usr/bin/env bash
# Big statements in MariaDB: RIPTIDE vs InnoDB in one private server (issue 15).
#
# Usage: benches/big-statements.sh [--rows N] [--reps N] [--engines "riptide innodb"]
#                                  [--plugin PATH] [--out DIR] [--keep]
#
# What it measures, per engine, --reps times (default 3), engines interleaved within each
# repetition, and the median of each figure:
#
#   load     INSERT INTO big SELECT seq, seq % 1000, CONCAT('row', seq) FROM seq_1_to_N
#            (autocommit: the time includes the commit), into a fresh
#            big (id INT PRIMARY KEY, a INT, b VARCHAR(20), KEY(a)).
#   copy     INSERT INTO big2 SELECT * FROM big (same shape as big; the source scan takes
#            shared row locks in both engines under REPEATABLE READ).
#   forupd   BEGIN; SELECT COUNT(*) FROM (SELECT * FROM big FOR UPDATE) d; COMMIT
#            the SELECT and the COMMIT timed separately (server clock, SYSDATE(6)).
#
# and mariadbd's resident memory around each statement: VmRSS before, the peak (VmHWM, reset
# through /proc/PID/clear_refs before the statement; needs root), VmRSS right after the
# commit and 10 s later (an allocator that returns memory in the background shows there).
#
# The server: mariadbd of the installed MariaDB, its own data folder under --out (default
# target/big-statements), a copy of the plugin (default target/plugin/ha_riptide.so, build
# it with `cargo xtask plugin`), defaults for both engines as `cargo xtask run` (InnoDB
# buffer pool 128 MiB, no binary log). A fresh data folder for every run. Output: one line
# per statement in DIR/runs.tsv and a median table in DIR/summary.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=1000000
REPS=3
ENGINES="riptide innodb"
PLUGIN="$ROOT/target/plugin/ha_riptide.so"
OUT="$ROOT/target/big-statements"
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --rows) ROWS=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --engines) ENGINES=$2; shift 2 ;;
        --plugin) PLUGIN=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done

[ -f "$PLUGIN" ] || { echo "no plugin at $PLUGIN (cargo xtask plugin)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DATA="$OUT/data"
SOCK="$OUT/mysqld.sock"
PIDF="$OUT/mysqld.pid"
PLUGDIR="$OUT/plugin"
LOG="$OUT/mysqld.err"

stop_server() {
    if [ -S "$SOCK" ]; then
        mariadb -S "$SOCK" -uroot -e shutdown 2>/dev/null || true
    fi
    for _ in $(seq 1 600); do
        [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null || break
        sleep 0.1
    done
}
trap '[ $KEEP = 1 ] || stop_server' EXIT

stop_server
rm -rf "$DATA" "$PLUGDIR"
mkdir -p "$PLUGDIR"
cp "$PLUGIN" "$PLUGDIR/ha_riptide.so"
mariadb-install-db --no-defaults --datadir="$DATA" --user=root \
    --auth-root-authentication-method=normal --skip-test-db >/dev/null
setsid mariadbd --no-defaults --datadir="$DATA" --socket="$SOCK" --pid-file="$PIDF" \
    --log-error="$LOG" --skip-networking --plugin-dir="$PLUGDIR" \
    --plugin-load-add=ha_riptide.so --plugin-maturity=experimental --user=root \
    </dev/null >/dev/null 2>&1 &
for _ in $(seq 1 600); do
    mariadb -S "$SOCK" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.1
done
PID=$(cat "$PIDF")
mariadb -S "$SOCK" -uroot -e 'CREATE DATABASE IF NOT EXISTS test'
SQL() { mariadb -S "$SOCK" -uroot -N -B test -e "$1"; }
SQL "SELECT 'riptide loaded' FROM information_schema.ENGINES WHERE ENGINE='RIPTIDE'" | grep -q loaded

kib() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$PID/status"; }
mib() { echo $(( $1 / 1024 )); }

RUNS="$OUT/runs.tsv"
printf 'rep\tengine\tstatement\tseconds\tcommit_seconds\trss_before_mib\trss_peak_mib\trss_after_mib\trss_after10s_mib\n' >"$RUNS"

# measure REP ENGINE NAME SQL: runs SQL (which prints the statement's and the commit's
# seconds on one line) and records the memory around it.
measure() {
    local rep=$1 engine=$2 name=$3 sql=$4
    local before peak after after10 times
    before=$(kib VmRSS)
    echo 5 >"/proc/$PID/clear_refs"
    times=$(SQL "$sql")
    peak=$(kib VmHWM)
    after=$(kib VmRSS)
    sleep 10
    after10=$(kib VmRSS)
    set -- $times
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$engine" "$name" "$1" "${2:-}" \
        "$(mib "$before")" "$(mib "$peak")" "$(mib "$after")" "$(mib "$after10")" | tee -a "$RUNS"
}

T='SET @t0 = SYSDATE(6)'
DT='TIMESTAMPDIFF(MICROSECOND, @t0, @t1) / 1e6'
for rep in $(seq 1 "$REPS"); do
    for engine in $ENGINES; do
        SQL "DROP TABLE IF EXISTS big, big2;
             CREATE TABLE big (id INT PRIMARY KEY, a INT, b VARCHAR(20), KEY(a)) ENGINE=$engine;
             CREATE TABLE big2 LIKE big"
        measure "$rep" "$engine" load "$T;
            INSERT INTO big SELECT seq, seq % 1000, CONCAT('row', seq) FROM seq_1_to_$ROWS;
            SET @t1 = SYSDATE(6); SELECT $DT, ''"
        measure "$rep" "$engine" copy "$T; INSERT INTO big2 SELECT * FROM big;
            SET @t1 = SYSDATE(6); SELECT $DT, ''"
        measure "$rep" "$engine" forupd "BEGIN; $T;
            SELECT COUNT(*) INTO @n FROM (SELECT * FROM big FOR UPDATE) d;
            SET @t1 = SYSDATE(6); COMMIT; SET @t2 = SYSDATE(6);
            SELECT $DT, TIMESTAMPDIFF(MICROSECOND, @t1, @t2) / 1e6"
        SQL 'DROP TABLE big, big2'
    done
done

# Medians per engine and statement.
{
    echo "rows $ROWS, $REPS repetitions, median (min-max); memory in MiB of mariadbd VmRSS/VmHWM"
    echo
    echo '| engine | statement | seconds | commit s | RSS before | peak | after | after 10 s |'
    echo '|---|---|---:|---:|---:|---:|---:|---:|'
    awk -F'\t' 'NR > 1 { k = $2 "\t" $3; keys[k] = 1; for (c = 4; c <= 9; c++) v[k, c] = v[k, c] " " $c }
        function med(s,   a, n, i, j, t, lo, hi) {
            n = split(s, a, " "); if (n == 0 || a[1] == "") return "-";
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
            lo = a[1]; hi = a[n];
            return (n > 1) ? a[int((n + 1) / 2)] " (" lo "-" hi ")" : a[1]
        }
        END { for (k in keys) { split(k, p, "\t"); printf "| %s | %s |", p[1], p[2];
              for (c = 4; c <= 9; c++) printf " %s |", med(v[k, c]); printf "\n" } }' "$RUNS" | sort
} | tee "$OUT/summary.md"
