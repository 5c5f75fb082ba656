#!/usr/bin/env bash
# Calls across the C ABI per row (issue 16): how many times mariadbd calls the exported
# riptide_* functions of ha_riptide.so, per row or per statement, for everyday statements.
# Counted with uprobes (perf probe) on every C ABI function (riptide_*) of the given .so,
# so any build can be measured the same way, the ones from before the handler-level cursors
# included (which have no call counter of their own).
#
# Usage: benches/ffi-calls.sh [--plugin PATH]... [--rows N] [--statements N] [--out DIR]
#
# Each --plugin (default target/plugin/ha_riptide.so) gets a private mariadbd with a fresh
# data folder under --out (default target/ffi-calls), a table
#   t (id INT PRIMARY KEY, k INT, v VARCHAR(20), KEY (k))  with N rows (default 10,000)
# and, for each workload below, the calls counted while it runs (perf stat -p on the server),
# divided by the rows or statements it handles:
#   pk_scan     SELECT SUM(LENGTH(v)) FROM t IGNORE INDEX (k)        per row
#   sec_scan    SELECT SUM(LENGTH(v)) FROM t FORCE INDEX (k) WHERE k >= 0   per row
#   covering    SELECT SUM(k) FROM t FORCE INDEX (k) WHERE k >= 0     per row
#   for_update  BEGIN; SELECT COUNT(*) FROM (SELECT * FROM t FOR UPDATE) d; COMMIT   per row
#   point       SELECT v FROM t WHERE id = ?  (autocommit)            per statement
#   update      UPDATE t SET v = ? WHERE id = ?  (autocommit)         per statement
#   insert      INSERT INTO t2 VALUES (?, ?, ?)  (autocommit)         per statement
# Needs root (uprobes) and perf (Debian: linux-perf). Output: DIR/calls.tsv and a markdown
# table on stdout, one column per plugin.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=10000
STMTS=1000
PLUGINS=()
OUT="$ROOT/target/ffi-calls"
while [ $# -gt 0 ]; do
    case "$1" in
        --plugin) PLUGINS+=("$2"); shift 2 ;;
        --rows) ROWS=$2; shift 2 ;;
        --statements) STMTS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ ${#PLUGINS[@]} -gt 0 ] || PLUGINS=("$ROOT/target/plugin/ha_riptide.so")
command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TSV="$OUT/calls.tsv"
printf 'plugin\tworkload\tcalls\tunits\tper_unit\n' >"$TSV"

SOCK="$OUT/mysqld.sock"
PIDF="$OUT/mysqld.pid"
sql() { mariadb -S "$SOCK" -uroot test "$@"; }

stop_server() {
    [ -S "$SOCK" ] && mariadb -S "$SOCK" -uroot -e shutdown 2>/dev/null || true
    for _ in $(seq 1 600); do
        [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null || break
        sleep 0.1
    done
}
cleanup() {
    stop_server
    perf probe -q -d 'probe_ha_riptide:*' 2>/dev/null || true
}
trap cleanup EXIT

# Calls of the probed functions in the server while "$@" runs.
count_calls() {
    local csv
    csv=$(perf stat -x, -e 'probe_ha_riptide:*' -p "$(cat "$PIDF")" -- "$@" 2>&1 >/dev/null)
    echo "$csv" | awk -F, '$1 ~ /^[0-9]+$/ { n += $1 } END { print n + 0 }'
}

for PLUGIN in "${PLUGINS[@]}"; do
    [ -f "$PLUGIN" ] || { echo "no plugin at $PLUGIN" >&2; exit 1; }
    name=$(basename "$(dirname "$PLUGIN")")
    stop_server
    rm -rf "$OUT/data" "$OUT/plugin"
    mkdir -p "$OUT/plugin"
    cp "$PLUGIN" "$OUT/plugin/ha_riptide.so"
    perf probe -q -d 'probe_ha_riptide:*' 2>/dev/null || true
    # The C ABI's functions only: their symbols are not mangled (the shim's C++ functions,
    # some of which are named riptide_* too, are), and the .so keeps its symbol table.
    nm "$OUT/plugin/ha_riptide.so" | awk '$3 ~ /^riptide_/ && ($2 == "T" || $2 == "t") { print $3 }' |
        sort -u | while read -r f; do
            perf probe -q -x "$OUT/plugin/ha_riptide.so" -a "$f" >/dev/null 2>&1 || true
        done
    mariadb-install-db --no-defaults --datadir="$OUT/data" --user=root \
        --auth-root-authentication-method=normal >/dev/null
    setsid mariadbd --no-defaults --datadir="$OUT/data" --socket="$SOCK" --pid-file="$PIDF" \
        --log-error="$OUT/mysqld.err" --skip-networking --plugin-dir="$OUT/plugin" \
        --plugin-load-add=ha_riptide.so --plugin-maturity=experimental --user=root \
        </dev/null >/dev/null 2>&1 &
    for _ in $(seq 1 600); do
        mariadb -S "$SOCK" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
        sleep 0.1
    done
    sql -e "CREATE DATABASE IF NOT EXISTS test"
    sql -e "CREATE TABLE t (id INT PRIMARY KEY, k INT, v VARCHAR(20), KEY (k)) ENGINE=RIPTIDE;
            CREATE TABLE t2 LIKE t;
            INSERT INTO t SELECT seq, (seq * 7919) % $ROWS, CONCAT('row', seq) FROM seq_1_to_$ROWS"
    run() { # workload units sql...
        local w=$1 units=$2
        shift 2
        local calls
        calls=$(count_calls "$@")
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$w" "$calls" "$units" \
            "$(awk -v c="$calls" -v u="$units" 'BEGIN { printf "%.2f", c / u }')" >>"$TSV"
    }
    run pk_scan "$ROWS" mariadb -S "$SOCK" -uroot test \
        -e "SELECT SUM(LENGTH(v)) FROM t IGNORE INDEX (k)"
    run sec_scan "$ROWS" mariadb -S "$SOCK" -uroot test \
        -e "SELECT SUM(LENGTH(v)) FROM t FORCE INDEX (k) WHERE k >= 0"
    run covering "$ROWS" mariadb -S "$SOCK" -uroot test \
        -e "SELECT SUM(k) FROM t FORCE INDEX (k) WHERE k >= 0"
    run for_update "$ROWS" mariadb -S "$SOCK" -uroot test \
        -e "BEGIN; SELECT COUNT(*) FROM (SELECT * FROM t FOR UPDATE) d; COMMIT"
    seq 1 "$STMTS" | awk -v n="$ROWS" '{ printf "SELECT v FROM t WHERE id = %d;\n", ($1 * 37) % n + 1 }' \
        >"$OUT/point.sql"
    seq 1 "$STMTS" | awk -v n="$ROWS" '{ printf "UPDATE t SET v = \"u%d\" WHERE id = %d;\n", $1, ($1 * 37) % n + 1 }' \
        >"$OUT/update.sql"
    seq 1 "$STMTS" | awk '{ printf "INSERT INTO t2 VALUES (%d, %d, \"i%d\");\n", $1, $1, $1 }' \
        >"$OUT/insert.sql"
    run point "$STMTS" sh -c "mariadb -S '$SOCK' -uroot test <'$OUT/point.sql' >/dev/null"
    run update "$STMTS" sh -c "mariadb -S '$SOCK' -uroot test <'$OUT/update.sql' >/dev/null"
    run insert "$STMTS" sh -c "mariadb -S '$SOCK' -uroot test <'$OUT/insert.sql' >/dev/null"
    stop_server
    perf probe -q -d 'probe_ha_riptide:*' 2>/dev/null || true
done

# One row per workload, one column per plugin (calls per row or statement).
awk -F'\t' 'NR > 1 {
        if (!(p in seen)) {}
        v[$2, $1] = $5; if (!($1 in pc)) { pc[$1] = 1; plugins[++np] = $1 }
        if (!($2 in wc)) { wc[$2] = 1; works[++nw] = $2 }
    }
    END {
        printf "| workload |"; for (i = 1; i <= np; i++) printf " %s |", plugins[i]; print ""
        printf "|---|"; for (i = 1; i <= np; i++) printf "---:|"; print ""
        for (j = 1; j <= nw; j++) {
            printf "| %s |", works[j]
            for (i = 1; i <= np; i++) printf " %s |", v[works[j], plugins[i]]
            print ""
        }
    }' "$TSV"
