//! Results: medians, the markdown report, the CSV files and the chart's data.

use std::fmt::Write as _;

use riptide_bench_harness::{
    Conditions, Engine, EngineRecord, Wording, engine_table, engines_csv as footprint_csv,
    footprint_section, median, ms, num, opt, settings_and_failures,
};

use crate::sysbench::RunResult;

/// The measured runs of one workload on one engine.
pub struct Cell {
    /// sysbench script name (`oltp_point_select`, ...).
    pub workload: String,
    /// The measured runs (warm-ups are not kept).
    pub runs: Vec<RunResult>,
}

impl Cell {
    fn median_of(&self, f: impl Fn(&RunResult) -> f64) -> Option<f64> {
        self.median_some(|r| Some(f(r)))
    }
    /// Median TPS.
    pub fn tps(&self) -> Option<f64> {
        self.median_of(|r| r.tps)
    }
    /// Median p95 latency (ms).
    pub fn p95(&self) -> Option<f64> {
        self.median_of(|r| r.p95_ms)
    }
    /// Median p99 latency (ms).
    pub fn p99(&self) -> Option<f64> {
        self.median_of(|r| r.p99_ms)
    }
    /// The lowest per-second TPS over all measured runs.
    pub fn worst_second(&self) -> Option<f64> {
        self.runs
            .iter()
            .filter_map(|r| r.worst_second_tps)
            .reduce(f64::min)
    }
    /// Median ignored errors per second.
    pub fn errors(&self) -> Option<f64> {
        self.median_of(|r| r.errors_per_s)
    }
    /// The median of `f` over the runs that have it (None when none has).
    fn median_some(&self, f: impl Fn(&RunResult) -> Option<f64>) -> Option<f64> {
        median(&self.runs.iter().filter_map(f).collect::<Vec<_>>())
    }
    /// Median server CPU per transaction (microseconds).
    pub fn cpu_us(&self) -> Option<f64> {
        self.median_some(RunResult::cpu_us_per_txn)
    }
    /// Median KiB read from storage per transaction.
    pub fn kib_read(&self) -> Option<f64> {
        self.median_some(RunResult::kib_read_per_txn)
    }
    /// Median KiB written to storage per transaction.
    pub fn kib_written(&self) -> Option<f64> {
        self.median_some(RunResult::kib_written_per_txn)
    }
    /// Median block cache hit rate.
    pub fn hit_rate(&self) -> Option<f64> {
        self.median_some(RunResult::cache_hit_rate)
    }
    /// Median share of bloom filter checks that ruled the key out.
    pub fn bloom_useful(&self) -> Option<f64> {
        self.median_some(RunResult::bloom_useful_rate)
    }
    /// Median bloom filter checks per transaction.
    pub fn bloom_checks(&self) -> Option<f64> {
        self.median_some(RunResult::bloom_checks_per_txn)
    }
}

/// Logical bytes of one sysbench row, what space amplification divides the engine files by:
/// `id` INT (4) + `k` INT (4) + `c` CHAR(120) + `pad` CHAR(60), and its `k` index entry
/// (k and id, 8).
pub const LOGICAL_ROW_BYTES: u64 = 4 + 4 + 120 + 60 + 8;

/// `bytes` of engine files over the logical data of `rows` rows.
fn space_amplification(bytes: u64, rows: u64) -> Option<f64> {
    (bytes > 0 && rows > 0).then(|| bytes as f64 / (rows * LOGICAL_ROW_BYTES) as f64)
}

/// A share as a percentage with one decimal, or a dash.
fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// Everything measured on one engine.
pub struct EngineResult {
    /// The engine, its load time, disk and memory, settings and error.
    pub record: EngineRecord,
    /// One cell per workload run.
    pub cells: Vec<Cell>,
    /// The rows of the tables after the last workload (for the space amplification).
    pub rows_end: Option<u64>,
}

impl EngineResult {
    /// An empty result for `engine`.
    pub fn new(engine: Engine) -> EngineResult {
        EngineResult {
            record: EngineRecord::new(engine),
            cells: Vec::new(),
            rows_end: None,
        }
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        self.record.engine
    }

    fn cell(&self, workload: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.workload == workload && !c.runs.is_empty())
    }
}

/// The run's parameters, printed above the tables.
pub struct Setup {
    /// `--tables`.
    pub tables: u64,
    /// `--table-size`.
    pub table_size: u64,
    /// `--threads`.
    pub threads: u64,
    /// Seconds per measured run.
    pub time: u64,
    /// Seconds of the discarded warm-up before each workload.
    pub warmup: u64,
    /// Measured runs per workload.
    pub runs: u64,
    /// Memory budget, durability, cap.
    pub conditions: Conditions,
    /// `--rand-type`.
    pub rand_type: String,
    /// Whether Riptide's load ran with `riptide_bulk_load` on (not `--no-bulk-load`).
    pub bulk_load: bool,
    /// Whether this was `--quick`.
    pub quick: bool,
    /// The workloads in order.
    pub workloads: Vec<String>,
    /// `date -u` at the start.
    pub started: String,
    /// The command line.
    pub command: String,
}

/// The markdown report.
pub fn markdown(setup: &Setup, results: &[EngineResult]) -> String {
    let mut s = String::new();
    let rows = setup.tables * setup.table_size;
    let _ = writeln!(
        s,
        "# sysbench: {} ({})\n",
        results
            .iter()
            .map(|r| r.engine().display())
            .collect::<Vec<_>>()
            .join(" vs "),
        if setup.quick { "quick" } else { "full" }
    );
    let _ = writeln!(s, "`{}` (started {})\n", setup.command, setup.started);
    let _ = writeln!(
        s,
        "{} tables x {} rows = {} rows, {} threads, `--rand-type={}`; per workload a {} s \
         warm-up (discarded), then {} measured run(s) of {} s, median reported. {}\n",
        setup.tables,
        setup.table_size,
        rows,
        setup.threads,
        setup.rand_type,
        setup.warmup,
        setup.runs,
        setup.time,
        setup.conditions.text()
    );
    let _ = writeln!(
        s,
        "Load: {}; InnoDB and MyRocks load the ordinary way.\n",
        if setup.bulk_load {
            "Riptide's with `SET GLOBAL riptide_bulk_load=1` (each sysbench connection's \
             INSERTs form one bulk load, which its `CREATE INDEX` ends)"
        } else {
            "Riptide's the ordinary way (`--no-bulk-load`)"
        }
    );

    // Throughput.
    let _ = writeln!(s, "## Throughput (transactions/s, median)\n");
    let engines: Vec<Engine> = results.iter().map(EngineResult::engine).collect();
    let table: Vec<(String, Vec<Option<f64>>)> = setup
        .workloads
        .iter()
        .map(|w| {
            let tps = results
                .iter()
                .map(|r| r.cell(w).and_then(Cell::tps))
                .collect();
            (w.clone(), tps)
        })
        .collect();
    engine_table(&mut s, "workload", &engines, &table, num);

    pair_table(
        &mut s,
        &setup.workloads,
        results,
        "Latency (ms, p95 / p99, median of the runs)",
        "p95 / p99",
        |c| (ms(c.and_then(Cell::p95)), ms(c.and_then(Cell::p99))),
    );
    pair_table(
        &mut s,
        &setup.workloads,
        results,
        "Worst second (lowest per-second TPS over the measured runs) and ignored errors/s \
         (deadlocks, lock waits)",
        "worst s / err/s",
        |c| {
            (
                num(c.and_then(Cell::worst_second)),
                num(c.and_then(Cell::errors)),
            )
        },
    );

    let _ = writeln!(
        s,
        "\n## Cost per transaction (median of the runs)\n\nServer CPU = utime + stime of \
         mariadbd, KiB read / written = its `read_bytes` / `write_bytes` (/proc/<pid>/io: \
         storage I/O, page-cache hits not counted), over each measured run, divided by the \
         run's transactions. Ratios are Riptide's figure over the peer's: below 1 is cheaper."
    );
    for (title, f) in [
        (
            "server CPU us per transaction",
            Cell::cpu_us as fn(&Cell) -> Option<f64>,
        ),
        ("KiB read per transaction", Cell::kib_read),
        ("KiB written per transaction", Cell::kib_written),
    ] {
        let _ = writeln!(s, "\n### {title}\n");
        let table: Vec<(String, Vec<Option<f64>>)> = setup
            .workloads
            .iter()
            .map(|w| {
                (
                    w.clone(),
                    results.iter().map(|r| r.cell(w).and_then(f)).collect(),
                )
            })
            .collect();
        engine_table(&mut s, "workload", &engines, &table, num);
    }
    pair_table(
        &mut s,
        &setup.workloads,
        results,
        "Caches (median of the runs): block cache hit rate and bloom filter checks that \
         ruled the key out (InnoDB: buffer pool hit rate, no bloom filters)",
        "hit rate / bloom useful",
        |c| {
            (
                percent(c.and_then(Cell::hit_rate)),
                percent(c.and_then(Cell::bloom_useful)),
            )
        },
    );
    space_section(&mut s, setup, results);

    let records: Vec<&EngineRecord> = results.iter().map(|r| &r.record).collect();
    footprint_section(
        &mut s,
        &records,
        rows,
        setup.conditions.cap,
        &Wording {
            load: "load (prepare)",
            database: "sbtest",
            measured: "the workloads",
            measured_short: "workloads",
        },
    );
    settings_and_failures(&mut s, &records);
    s
}

/// Appends the space amplification of each engine after the load and at the end.
fn space_section(s: &mut String, setup: &Setup, results: &[EngineResult]) {
    let loaded_rows = setup.tables * setup.table_size;
    let _ = writeln!(
        s,
        "\n## Space amplification\n\nEngine files over the logical data ({LOGICAL_ROW_BYTES} \
         bytes a row: id, k, c and pad, plus the k index entry), after the load ({loaded_rows} \
         rows) and at the end (the rows counted after the last workload).\n\n| engine | after \
         the load | at the end | rows at the end |\n|---|---:|---:|---:|"
    );
    for r in results {
        let f = &r.record.footprint;
        let fmt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}x"));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            r.engine().display(),
            fmt(space_amplification(f.engine_bytes_loaded, loaded_rows)),
            fmt(r
                .rows_end
                .and_then(|n| space_amplification(f.engine_bytes_end, n))),
            r.rows_end
                .map_or_else(|| "-".to_string(), |n| n.to_string())
        );
    }
}

/// Appends a section `title` with one row per workload and one "a / b" column per engine,
/// the two values `pair` makes of that engine's cell (a dash for a missing cell or value).
fn pair_table(
    s: &mut String,
    workloads: &[String],
    results: &[EngineResult],
    title: &str,
    what: &str,
    pair: impl Fn(Option<&Cell>) -> (String, String),
) {
    let _ = writeln!(
        s,
        "\n## {title}\n\n{}\n{}",
        header_for(results, what),
        rule_for(results)
    );
    for w in workloads {
        let mut line = format!("| {w} |");
        for r in results {
            let (a, b) = pair(r.cell(w));
            let _ = write!(line, " {a} / {b} |");
        }
        let _ = writeln!(s, "{line}");
    }
}

fn header_for(results: &[EngineResult], what: &str) -> String {
    let mut h = String::from("| workload |");
    for r in results {
        let _ = write!(h, " {} {what} |", r.engine().display());
    }
    h
}

fn rule_for(results: &[EngineResult]) -> String {
    let mut h = String::from("|---|");
    for _ in results {
        h.push_str("---:|");
    }
    h
}

/// `results.csv`: one line per engine and workload, the medians.
pub fn results_csv(setup: &Setup, results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,workload,runs,tps_median,p95_ms_median,p99_ms_median,worst_second_tps,\
         errors_per_s_median,tables,table_size,threads,seconds,capped,durable,\
         cpu_us_per_txn_median,kib_read_per_txn_median,kib_written_per_txn_median,\
         cache_hit_rate_median,bloom_useful_rate_median,bloom_checks_per_txn_median\n",
    );
    for r in results {
        for c in &r.cells {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.engine().name(),
                c.workload,
                c.runs.len(),
                opt(c.tps()),
                opt(c.p95()),
                opt(c.p99()),
                opt(c.worst_second()),
                opt(c.errors()),
                setup.tables,
                setup.table_size,
                setup.threads,
                setup.time,
                setup.conditions.cap.is_some(),
                setup.conditions.budget.durable,
                opt(c.cpu_us()),
                opt(c.kib_read()),
                opt(c.kib_written()),
                opt(c.hit_rate()),
                opt(c.bloom_useful()),
                opt(c.bloom_checks())
            );
        }
    }
    s
}

/// `runs.csv`: every measured run.
pub fn runs_csv(results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,workload,run,tps,p95_ms,p99_ms,sysbench_p95_ms,worst_second_tps,errors_per_s,\
         transactions,server_cpu_seconds,server_read_bytes,server_write_bytes,cache_hits,\
         cache_misses,bloom_checks,bloom_useful\n",
    );
    let count = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    for r in results {
        for c in &r.cells {
            for (i, run) in c.runs.iter().enumerate() {
                let server = run.server;
                let cache = run.cache.unwrap_or_default();
                let _ = writeln!(
                    s,
                    "{},{},{},{:.3},{:.3},{:.3},{:.3},{},{:.3},{},{},{},{},{},{},{},{}",
                    r.engine().name(),
                    c.workload,
                    i + 1,
                    run.tps,
                    run.p95_ms,
                    run.p99_ms,
                    run.sysbench_p95_ms,
                    opt(run.worst_second_tps),
                    run.errors_per_s,
                    run.transactions,
                    server.map_or_else(String::new, |p| format!("{:.3}", p.cpu_seconds)),
                    count(server.map(|p| p.read_bytes)),
                    count(server.map(|p| p.write_bytes)),
                    count(cache.hits),
                    count(cache.misses),
                    count(cache.bloom_checked),
                    count(cache.bloom_useful)
                );
            }
        }
    }
    s
}

/// `engines.csv`: load time, sizes and memory per engine.
pub fn engines_csv(setup: &Setup, results: &[EngineResult]) -> String {
    let records: Vec<&EngineRecord> = results.iter().map(|r| &r.record).collect();
    footprint_csv(&records, setup.conditions.cap)
}

/// The TPS chart's groups: per workload, (engine display name, median TPS).
pub fn chart_groups(setup: &Setup, results: &[EngineResult]) -> Vec<riptide_chart::Group> {
    groups_of(setup, results, Cell::tps)
}

/// The CPU chart's groups: per workload, (engine display name, median server CPU in
/// microseconds per transaction).
pub fn cpu_chart_groups(setup: &Setup, results: &[EngineResult]) -> Vec<riptide_chart::Group> {
    groups_of(setup, results, Cell::cpu_us)
}

fn groups_of(
    setup: &Setup,
    results: &[EngineResult],
    f: impl Fn(&Cell) -> Option<f64>,
) -> Vec<riptide_chart::Group> {
    setup
        .workloads
        .iter()
        .map(|w| {
            let vals = results
                .iter()
                .filter_map(|r| Some((r.engine().display().to_string(), f(r.cell(w)?)?)))
                .collect();
            (w.trim_start_matches("oltp_").to_string(), vals)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_bench_harness::Budget;

    fn run(tps: f64) -> RunResult {
        RunResult {
            tps,
            p95_ms: 1.0,
            p99_ms: 2.0,
            sysbench_p95_ms: 1.0,
            worst_second_tps: Some(tps / 2.0),
            errors_per_s: 0.0,
            transactions: (tps * 10.0) as u64,
            server: Some(riptide_bench_harness::ProcessCounters {
                cpu_seconds: tps * 10.0 * 250e-6,
                write_bytes: (tps * 10.0) as u64 * 1024,
                read_bytes: 0,
            }),
            cache: None,
        }
    }

    #[test]
    fn markdown_has_ratios_and_marks_no_cap() {
        let setup = Setup {
            tables: 2,
            table_size: 10,
            threads: 4,
            time: 10,
            warmup: 5,
            runs: 1,
            conditions: Conditions {
                budget: Budget {
                    total_mib: 256,
                    write_buffer_mib: 64,
                    durable: false,
                },
                cap: None,
                load_cap: None,
                extra_options: Vec::new(),
            },
            rand_type: "uniform".into(),
            bulk_load: true,
            quick: true,
            workloads: vec!["oltp_point_select".into()],
            started: "now".into(),
            command: "x".into(),
        };
        let mut a = EngineResult::new(Engine::Riptide);
        a.cells.push(Cell {
            workload: "oltp_point_select".into(),
            runs: vec![run(300.0)],
        });
        let mut b = EngineResult::new(Engine::Innodb);
        b.cells.push(Cell {
            workload: "oltp_point_select".into(),
            runs: vec![run(100.0)],
        });
        a.rows_end = Some(20);
        a.record.footprint.engine_bytes_loaded = 20 * LOGICAL_ROW_BYTES * 3;
        a.record.footprint.engine_bytes_end = 20 * LOGICAL_ROW_BYTES * 2;
        let md = markdown(&setup, &[a, b]);
        // 250 us of server CPU and 1 KiB written per transaction on both.
        assert!(
            md.contains(
                "### server CPU us per transaction\n\n| workload | Riptide | InnoDB | Riptide / \
                 InnoDB |\n|---|---:|---:|---:|\n| oltp_point_select | 250 | 250 | 1.00x |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| oltp_point_select | 1.0 | 1.0 | 1.00x |"),
            "{md}"
        );
        assert!(md.contains("| Riptide | 3.00x | 2.00x | 20 |"), "{md}");
        assert!(md.contains("| InnoDB | - | - | - |"), "{md}");
        assert!(
            md.contains("| oltp_point_select | 300 | 100 | 3.00x |"),
            "{md}"
        );
        assert!(md.contains("NO memory cap"));
        assert!(
            md.contains(
                "## Latency (ms, p95 / p99, median of the runs)\n\n| workload | Riptide p95 / \
                 p99 | InnoDB p95 / p99 |\n|---|---:|---:|\n| oltp_point_select | 1.00 / 2.00 \
                 | 1.00 / 2.00 |\n"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| workload | Riptide worst s / err/s | InnoDB worst s / err/s |\n|---|---:|---:|\n\
                 | oltp_point_select | 150 / 0.0 | 50.0 / 0.0 |\n"
            ),
            "{md}"
        );
    }
}
