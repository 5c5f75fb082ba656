//! Running Debian's sysbench 1.0.20 and reading its report.
//!
//! Every run passes `--percentile=95 --histogram=on --report-interval=1`: sysbench prints its
//! own 95th percentile, the latency histogram of the whole run (the one it computes its
//! percentiles from: 1024 logarithmic buckets, printed in ms with 3 decimals) and a line per
//! second. p95 and p99 are both read off the histogram the same way sysbench does it (the
//! first bucket where the cumulative count reaches the percentile), so one run gives both;
//! the per-second lines give the worst second.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use riptide_bench_harness::{CacheCounters, ProcessCounters};

/// What every sysbench command of one engine shares.
pub struct Target {
    /// The server's socket.
    pub socket: PathBuf,
    /// `--mysql-storage-engine`: riptide, innodb or rocksdb.
    pub engine: &'static str,
    /// `--tables`.
    pub tables: u64,
    /// `--table-size`.
    pub table_size: u64,
    /// `--threads`.
    pub threads: u64,
    /// `--rand-type`.
    pub rand_type: String,
    /// Where the full output of every command is appended.
    pub log: PathBuf,
}

/// The figures of one `sysbench ... run`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// Transactions per second.
    pub tps: f64,
    /// 95th percentile latency (ms) from the histogram.
    pub p95_ms: f64,
    /// 99th percentile latency (ms) from the histogram.
    pub p99_ms: f64,
    /// sysbench's own printed 95th percentile (ms, 2 decimals), as a cross-check.
    pub sysbench_p95_ms: f64,
    /// The lowest per-second TPS of the run (None if no per-second line was printed).
    pub worst_second_tps: Option<f64>,
    /// Ignored errors (deadlocks, lock wait timeouts) per second.
    pub errors_per_s: f64,
    /// Transactions the run committed (sysbench's `transactions:` count).
    pub transactions: u64,
    /// What the server process used during the run (CPU, bytes read and written), when it
    /// could be read.
    pub server: Option<ProcessCounters>,
    /// What the engine's cache and bloom filters did during the run.
    pub cache: Option<CacheCounters>,
}

impl RunResult {
    /// `v` divided by the run's transactions (None without any).
    fn per_transaction(&self, v: f64) -> Option<f64> {
        (self.transactions > 0).then(|| v / self.transactions as f64)
    }
    /// Server CPU (user + system) per transaction, in microseconds.
    pub fn cpu_us_per_txn(&self) -> Option<f64> {
        self.per_transaction(self.server?.cpu_seconds * 1e6)
    }
    /// KiB the server read from storage per transaction (page-cache hits do not count).
    pub fn kib_read_per_txn(&self) -> Option<f64> {
        self.per_transaction(self.server?.read_bytes as f64 / 1024.0)
    }
    /// KiB the server wrote to storage per transaction.
    pub fn kib_written_per_txn(&self) -> Option<f64> {
        self.per_transaction(self.server?.write_bytes as f64 / 1024.0)
    }
    /// Share of the engine's block lookups its cache served during the run.
    pub fn cache_hit_rate(&self) -> Option<f64> {
        self.cache?.hit_rate()
    }
    /// Share of the run's bloom filter checks that ruled the key out.
    pub fn bloom_useful_rate(&self) -> Option<f64> {
        self.cache?.bloom_useful_rate()
    }
    /// Bloom filter checks per transaction.
    pub fn bloom_checks_per_txn(&self) -> Option<f64> {
        self.per_transaction(self.cache?.bloom_checked? as f64)
    }
}

impl Target {
    fn command(&self, workload: &str) -> Command {
        let mut c = Command::new("sysbench");
        c.arg(workload)
            .arg("--db-driver=mysql")
            .arg(format!("--mysql-socket={}", self.socket.display()))
            .args(["--mysql-user=root", "--mysql-db=sbtest"])
            .arg(format!("--mysql-storage-engine={}", self.engine))
            .arg(format!("--tables={}", self.tables))
            .arg(format!("--table-size={}", self.table_size))
            .arg(format!("--rand-type={}", self.rand_type));
        c
    }

    fn run_logged(&self, what: &str, mut cmd: Command) -> Result<String> {
        let out = cmd
            .output()
            .with_context(|| format!("could not start {cmd:?} (is sysbench installed?)"))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(&self.log) {
            let _ = writeln!(f, "===== {what}: {cmd:?}\n{stdout}{stderr}");
        }
        // sysbench 1.0.20's parallel `prepare` exits 0 when a worker thread dies on an SQL
        // error (seen: the server OOM-killed during `CREATE INDEX`): a FATAL line is a failure.
        let fatal = format!("{stdout}{stderr}")
            .lines()
            .any(|l| l.starts_with("FATAL:"));
        if !out.status.success() || fatal {
            let text = format!("{stdout}{stderr}");
            let last: Vec<&str> = text
                .lines()
                .rev()
                .filter(|l| l.len() < 400)
                .take(15)
                .collect();
            bail!(
                "{what} failed ({}); last lines (all in {}):\n{}",
                out.status,
                self.log.display(),
                last.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        Ok(stdout)
    }

    /// `sysbench oltp_common prepare`: creates and fills the tables (in parallel, one table
    /// per thread). Returns the wall-clock time it took.
    pub fn prepare(&self) -> Result<Duration> {
        let mut c = self.command("oltp_common");
        c.arg(format!(
            "--threads={}",
            self.threads.min(self.tables).max(1)
        ))
        .arg("prepare");
        let start = Instant::now();
        self.run_logged("prepare", c)?;
        Ok(start.elapsed())
    }

    /// One timed run of `workload` for `seconds`.
    pub fn run(&self, workload: &str, seconds: u64, label: &str) -> Result<RunResult> {
        let mut c = self.command(workload);
        c.arg(format!("--threads={}", self.threads))
            .arg(format!("--time={seconds}"))
            .args([
                "--events=0",
                "--report-interval=1",
                "--percentile=95",
                "--histogram=on",
                "run",
            ]);
        let out = self.run_logged(&format!("{workload} {label}"), c)?;
        parse(&out).with_context(|| {
            format!(
                "reading the report of {workload} {label} (output in {})",
                self.log.display()
            )
        })
    }
}

/// The first number in `s`.
fn first_number(s: &str) -> Option<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|t| !t.is_empty() && t.chars().any(|c| c.is_ascii_digit()))
        .and_then(|t| t.parse().ok())
}

/// The number inside "(... per sec.)" on a line.
fn per_sec(line: &str) -> Option<f64> {
    let (_, rest) = line.split_once('(')?;
    first_number(rest)
}

/// The value at percentile `pct` of a histogram of (value, count) buckets in value order.
pub fn percentile(buckets: &[(f64, u64)], pct: f64) -> Option<f64> {
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let need = (total as f64 * pct / 100.0).ceil().max(1.0);
    let mut seen = 0u64;
    for (value, count) in buckets {
        seen += count;
        if seen as f64 >= need {
            return Some(*value);
        }
    }
    buckets.last().map(|b| b.0)
}

/// Reads a `sysbench ... run` report (with `--histogram=on --percentile=95
/// --report-interval=1`).
pub fn parse(out: &str) -> Result<RunResult> {
    let mut tps = None;
    let mut transactions = None;
    let mut errors_per_s = 0.0;
    let mut sysbench_p95 = None;
    let mut worst: Option<f64> = None;
    let mut buckets: Vec<(f64, u64)> = Vec::new();
    for line in out.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("transactions:") {
            tps = per_sec(rest);
            transactions = rest.split_whitespace().next().and_then(|n| n.parse().ok());
        } else if let Some(rest) = t.strip_prefix("ignored errors:") {
            errors_per_s = per_sec(rest).unwrap_or(0.0);
        } else if let Some(rest) = t.strip_prefix("95th percentile:") {
            sysbench_p95 = first_number(rest);
        } else if t.starts_with('[') && t.contains(" tps: ") {
            let second = t
                .split_once(" tps: ")
                .and_then(|(_, rest)| first_number(rest));
            if let Some(s) = second {
                worst = Some(worst.map_or(s, |w| w.min(s)));
            }
        } else if let Some((value, rest)) = t.split_once('|') {
            // "0.015 |*****     746"
            let count = rest
                .split_whitespace()
                .last()
                .and_then(|c| c.parse::<u64>().ok());
            if let (Ok(v), Some(c)) = (value.trim().parse::<f64>(), count) {
                buckets.push((v, c));
            }
        }
    }
    let Some(tps) = tps else {
        bail!("no `transactions: N (X per sec.)` line in the sysbench output");
    };
    let p95 = percentile(&buckets, 95.0);
    let p99 = percentile(&buckets, 99.0);
    let (Some(p95_ms), Some(p99_ms)) = (p95, p99) else {
        bail!("no latency histogram in the sysbench output (needs --histogram=on)");
    };
    Ok(RunResult {
        tps,
        p95_ms,
        p99_ms,
        sysbench_p95_ms: sysbench_p95.unwrap_or(f64::NAN),
        worst_second_tps: worst,
        errors_per_s,
        transactions: transactions.unwrap_or(0),
        server: None,
        cache: None,
    })
}

/// True when `sysbench` can be started.
pub fn available() -> bool {
    Command::new("sysbench")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The folder of sysbench's bundled OLTP scripts must hold every workload asked for.
pub fn check_workloads(workloads: &[String]) -> Result<()> {
    let dir = Path::new("/usr/share/sysbench");
    for w in workloads {
        if !dir.join(format!("{w}.lua")).is_file() {
            bail!(
                "sysbench has no workload {w} ({}/{w}.lua is missing)",
                dir.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Threads started!

[ 1s ] thds: 4 tps: 1500.00 qps: 30000.00 (r/w/o: 21000.00/6000.00/3000.00) lat (ms,95%): 4.10 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 4 tps: 1200.50 qps: 24010.00 (r/w/o: 16807.00/4802.00/2401.00) lat (ms,95%): 5.00 err/s: 1.00 reconn/s: 0.00
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       1.000 |****************************************  80
       2.000 |**********                                15
       3.000 |**                                        4
      10.000 |*                                         1

SQL statistics:
    queries performed:
        read:                            1400
    transactions:                        2700  (1350.25 per sec.)
    queries:                             54000  (27000.50 per sec.)
    ignored errors:                      2      (1.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Latency (ms):
         min:                                    0.50
         avg:                                    1.50
         max:                                   10.00
         95th percentile:                        2.00
         sum:                                 4050.00
";

    #[test]
    fn parses_a_run_report() -> Result<()> {
        let r = parse(REPORT)?;
        assert_eq!(r.tps, 1350.25);
        assert_eq!(r.p95_ms, 2.0);
        assert_eq!(r.sysbench_p95_ms, 2.0);
        assert_eq!(r.p99_ms, 3.0);
        assert_eq!(r.worst_second_tps, Some(1200.5));
        assert_eq!(r.errors_per_s, 1.0);
        assert_eq!(r.transactions, 2700);
        // Per-transaction figures need the server's counters, which the caller adds.
        assert_eq!(r.cpu_us_per_txn(), None);
        let measured = RunResult {
            server: Some(ProcessCounters {
                cpu_seconds: 2.7,
                write_bytes: 2700 * 2048,
                read_bytes: 2700 * 512,
            }),
            cache: Some(CacheCounters {
                hits: Some(900),
                misses: Some(100),
                bloom_checked: Some(5400),
                bloom_useful: Some(2700),
            }),
            ..r
        };
        assert_eq!(measured.cpu_us_per_txn(), Some(1000.0));
        assert_eq!(measured.kib_written_per_txn(), Some(2.0));
        assert_eq!(measured.kib_read_per_txn(), Some(0.5));
        assert_eq!(measured.cache_hit_rate(), Some(0.9));
        assert_eq!(measured.bloom_useful_rate(), Some(0.5));
        assert_eq!(measured.bloom_checks_per_txn(), Some(2.0));
        Ok(())
    }

    #[test]
    fn percentile_walks_the_cumulative_count() {
        let b = [(1.0, 50), (2.0, 49), (3.0, 1)];
        assert_eq!(percentile(&b, 50.0), Some(1.0));
        assert_eq!(percentile(&b, 99.0), Some(2.0));
        assert_eq!(percentile(&b, 99.5), Some(3.0));
        assert_eq!(percentile(&[], 99.0), None);
    }

    #[test]
    fn a_report_without_histogram_is_an_error() {
        let cut: String = REPORT
            .lines()
            .filter(|l| !l.contains('|'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(parse(&cut).is_err());
    }
}
