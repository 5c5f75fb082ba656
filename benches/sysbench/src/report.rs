//! Results: medians, the markdown report, the CSV files and the chart's data.

use std::fmt::Write as _;
use std::time::Duration;

use crate::Engine;
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
        median(&self.runs.iter().map(f).collect::<Vec<_>>())
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
}

/// Everything measured on one engine.
pub struct EngineResult {
    /// The engine.
    pub engine: Engine,
    /// Wall-clock time of `sysbench prepare`.
    pub load: Option<Duration>,
    /// Engine files on disk right after the load.
    pub engine_bytes_loaded: u64,
    /// The whole data directory right after the load.
    pub datadir_bytes_loaded: u64,
    /// Engine files on disk after the last workload.
    pub engine_bytes_end: u64,
    /// Peak memory of the cgroup (page cache included), if capped.
    pub peak_memory: Option<u64>,
    /// How often the cgroup hit its limit (reclaim events), if capped.
    pub limit_hits: Option<u64>,
    /// Anonymous memory of the server right after the load, if capped.
    pub load_rss: Option<u64>,
    /// How long the server took to restart after the load (recovery included).
    pub restart: Option<Duration>,
    /// The most anonymous memory (no page cache) the server had, sampled after the load and
    /// after every run, if capped.
    pub max_rss: Option<u64>,
    /// The loading server's peak resident memory (`VmHWM`): the load's footprint.
    pub load_peak_rss: Option<u64>,
    /// The restarted server's peak resident memory (`VmHWM`) over all workloads.
    pub run_peak_rss: Option<u64>,
    /// The server variables as the server reported them.
    pub settings: Vec<(String, String)>,
    /// One cell per workload run.
    pub cells: Vec<Cell>,
    /// Why the engine's run stopped early, if it did.
    pub error: Option<String>,
}

impl EngineResult {
    /// An empty result for `engine`.
    pub fn new(engine: Engine) -> EngineResult {
        EngineResult {
            engine,
            load: None,
            engine_bytes_loaded: 0,
            datadir_bytes_loaded: 0,
            engine_bytes_end: 0,
            peak_memory: None,
            limit_hits: None,
            max_rss: None,
            load_rss: None,
            restart: None,
            load_peak_rss: None,
            run_peak_rss: None,
            settings: Vec::new(),
            cells: Vec::new(),
            error: None,
        }
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
    /// The per-engine memory budget in MiB.
    pub budget_mib: u64,
    /// Of it, the LSM engines' memtables in MiB.
    pub write_buffer_mib: u64,
    /// The cgroup limit in bytes, or None when run without the cap.
    pub cap: Option<u64>,
    /// The limit while loading, when it differs from `cap`.
    pub load_cap: Option<u64>,
    /// Sync at every commit.
    pub durable: bool,
    /// `--rand-type`.
    pub rand_type: String,
    /// Whether this was `--quick`.
    pub quick: bool,
    /// The workloads in order.
    pub workloads: Vec<String>,
    /// `date -u` at the start.
    pub started: String,
    /// The command line.
    pub command: String,
}

/// The median (mean of the middle two for an even count); None for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return None;
    }
    if n % 2 == 1 {
        v.get(n / 2).copied()
    } else {
        Some((v.get(n / 2 - 1)? + v.get(n / 2)?) / 2.0)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "-".into(),
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
        None => "-".into(),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
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
            .map(|r| r.engine.display())
            .collect::<Vec<_>>()
            .join(" vs "),
        if setup.quick { "quick" } else { "full" }
    );
    let _ = writeln!(s, "`{}` (started {})\n", setup.command, setup.started);
    let cap = match setup.cap {
        Some(c) => format!(
            "each server in a memory cgroup capped at {}{}",
            mib(c),
            setup
                .load_cap
                .filter(|l| *l != c)
                .map_or(String::new(), |l| format!(
                    " (**{} while loading**)",
                    mib(l)
                ))
        ),
        None => "**NO memory cap** (the OS page cache may hold the data: not an I/O-bound \
                 result)"
            .to_string(),
    };
    let _ = writeln!(
        s,
        "{} tables x {} rows = {} rows, {} threads, `--rand-type={}`; per workload a {} s \
         warm-up (discarded), then {} measured run(s) of {} s, median reported. Memory \
         budget per engine {} MiB (LSM engines: {} MiB block cache + {} MiB memtables); {}. \
         Durability: {}. One server per engine, started fresh on its own data directory.\n",
        setup.tables,
        setup.table_size,
        rows,
        setup.threads,
        setup.rand_type,
        setup.warmup,
        setup.runs,
        setup.time,
        setup.budget_mib,
        setup.budget_mib.saturating_sub(setup.write_buffer_mib),
        setup.write_buffer_mib,
        cap,
        if setup.durable {
            "log synced at every commit (InnoDB/MyRocks flush_log_at_trx_commit=1, \
             riptide_sync_mode=full)"
        } else {
            "no fsync per commit, log synced about once a second (InnoDB/MyRocks \
             flush_log_at_trx_commit=2, riptide_sync_mode=interval)"
        }
    );

    let peers: Vec<&EngineResult> = results
        .iter()
        .filter(|r| r.engine != Engine::Riptide)
        .collect();
    let riptide = results.iter().find(|r| r.engine == Engine::Riptide);

    // Throughput.
    let _ = writeln!(s, "## Throughput (transactions/s, median)\n");
    let mut header = String::from("| workload |");
    let mut rule = String::from("|---|");
    for r in results {
        let _ = write!(header, " {} |", r.engine.display());
        rule.push_str("---:|");
    }
    if riptide.is_some() {
        for p in &peers {
            let _ = write!(header, " Riptide / {} |", p.engine.display());
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(s, "{header}\n{rule}");
    for w in &setup.workloads {
        let mut line = format!("| {w} |");
        for r in results {
            let _ = write!(line, " {} |", num(r.cell(w).and_then(Cell::tps)));
        }
        if let Some(rt) = riptide {
            let mine = rt.cell(w).and_then(Cell::tps);
            for p in &peers {
                let _ = write!(line, " {} |", ratio(mine, p.cell(w).and_then(Cell::tps)));
            }
        }
        let _ = writeln!(s, "{line}");
    }

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

    // Load and size.
    let _ = writeln!(
        s,
        "\n## Load, size on disk, memory\n\n| engine | load (prepare) | rows/s | engine files \
         after load | data / cap | engine files at the end | whole datadir after load | peak RSS \
         loading | anon memory after load | restart | peak cgroup memory | anon memory (max \
         sampled) | peak RSS workloads | limit hits |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in results {
        let secs = r.load.map(|d| d.as_secs_f64());
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.engine.display(),
            secs.map_or("-".into(), |x| format!("{x:.1} s")),
            num(secs.filter(|x| *x > 0.0).map(|x| rows as f64 / x)),
            mib(r.engine_bytes_loaded),
            setup.cap.map_or("(no cap)".into(), |c| format!(
                "{:.1}x",
                r.engine_bytes_loaded as f64 / c as f64
            )),
            mib(r.engine_bytes_end),
            mib(r.datadir_bytes_loaded),
            r.load_peak_rss.map_or("-".into(), mib),
            r.load_rss.map_or("-".into(), mib),
            r.restart
                .map_or("-".into(), |d| format!("{:.1} s", d.as_secs_f64())),
            r.peak_memory.map_or("-".into(), mib),
            r.max_rss.map_or("-".into(), mib),
            r.run_peak_rss.map_or("-".into(), mib),
            r.limit_hits.map_or("-".into(), |h| h.to_string()),
        );
    }
    let _ = writeln!(
        s,
        "\nEngine files: InnoDB `sbtest/*.ibd` (not the system tablespace or the redo log); \
         MyRocks `#rocksdb/` and Riptide `#riptide/` (tables, WAL, manifest). Allocated \
         blocks, not apparent sizes. \"data / cap\" below 4x means the OS page cache within \
         the cap could hold a large part of the data. After the load the server is restarted \
         (\"restart\": its start time, recovery included) and the workloads run on the fresh \
         server; the columns after it cover that measured phase only. Peak cgroup memory \
         includes the page cache (reclaimable; a cap-high peak is normal for buffered I/O); \
         anon memory is the server's heap (caches, memtables, connections), read from \
         memory.stat after the restart and after every run (capped runs only); peak RSS is \
         the server process's VmHWM (/proc/<pid>/status: heap, stacks and binaries, no page \
         cache), of the loading server and of the restarted one; limit hits = memory.failcnt \
         (allocations that made the kernel reclaim)."
    );
    if let Some(c) = setup.cap {
        let small: Vec<&str> = results
            .iter()
            .filter(|r| r.load.is_some() && (r.engine_bytes_loaded as f64) < 4.0 * c as f64)
            .map(|r| r.engine.display())
            .collect();
        if !small.is_empty() {
            let _ = writeln!(
                s,
                "\n**Data smaller than 4x the cap for {}: these figures are partly \
                 memory-bound.**",
                small.join(", ")
            );
        }
    }

    // Settings.
    let _ = writeln!(
        s,
        "\n## What each engine got (SHOW GLOBAL VARIABLES)\n\n| engine | variable | value \
         |\n|---|---|---|"
    );
    for r in results {
        for (k, v) in &r.settings {
            let _ = writeln!(s, "| {} | {k} | `{v}` |", r.engine.display());
        }
    }
    let failed: Vec<&EngineResult> = results.iter().filter(|r| r.error.is_some()).collect();
    if !failed.is_empty() {
        let _ = writeln!(s, "\n## Failures\n");
        for r in failed {
            let _ = writeln!(
                s,
                "- {}: {}",
                r.engine.display(),
                r.error.as_deref().unwrap_or("").replace('\n', " ")
            );
        }
    }
    s
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
        let _ = write!(h, " {} {what} |", r.engine.display());
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

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.3}"))
}

/// `results.csv`: one line per engine and workload, the medians.
pub fn results_csv(setup: &Setup, results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,workload,runs,tps_median,p95_ms_median,p99_ms_median,worst_second_tps,\
         errors_per_s_median,tables,table_size,threads,seconds,capped,durable\n",
    );
    for r in results {
        for c in &r.cells {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.engine.sysbench_name(),
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
                setup.cap.is_some(),
                setup.durable
            );
        }
    }
    s
}

/// `runs.csv`: every measured run.
pub fn runs_csv(results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,workload,run,tps,p95_ms,p99_ms,sysbench_p95_ms,worst_second_tps,errors_per_s\n",
    );
    for r in results {
        for c in &r.cells {
            for (i, run) in c.runs.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "{},{},{},{:.3},{:.3},{:.3},{:.3},{},{:.3}",
                    r.engine.sysbench_name(),
                    c.workload,
                    i + 1,
                    run.tps,
                    run.p95_ms,
                    run.p99_ms,
                    run.sysbench_p95_ms,
                    opt(run.worst_second_tps),
                    run.errors_per_s
                );
            }
        }
    }
    s
}

/// `engines.csv`: load time, sizes and memory per engine.
pub fn engines_csv(setup: &Setup, results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,load_seconds,engine_bytes_after_load,engine_bytes_at_end,datadir_bytes_after_load,\
         cap_bytes,load_peak_rss_bytes,load_rss_bytes,restart_seconds,peak_memory_bytes,\
         max_rss_bytes,run_peak_rss_bytes,limit_hits,error\n",
    );
    for r in results {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.engine.sysbench_name(),
            r.load
                .map_or(String::new(), |d| format!("{:.3}", d.as_secs_f64())),
            r.engine_bytes_loaded,
            r.engine_bytes_end,
            r.datadir_bytes_loaded,
            setup.cap.map_or(String::new(), |c| c.to_string()),
            r.load_peak_rss.map_or(String::new(), |m| m.to_string()),
            r.load_rss.map_or(String::new(), |m| m.to_string()),
            r.restart
                .map_or(String::new(), |d| format!("{:.3}", d.as_secs_f64())),
            r.peak_memory.map_or(String::new(), |m| m.to_string()),
            r.max_rss.map_or(String::new(), |m| m.to_string()),
            r.run_peak_rss.map_or(String::new(), |m| m.to_string()),
            r.limit_hits.map_or(String::new(), |m| m.to_string()),
            r.error.as_deref().map_or(String::new(), |e| format!(
                "\"{}\"",
                e.replace('"', "'").replace('\n', " ")
            ))
        );
    }
    s
}

/// The chart's groups: per workload, (engine display name, median TPS).
pub fn chart_groups(setup: &Setup, results: &[EngineResult]) -> Vec<riptide_chart::Group> {
    setup
        .workloads
        .iter()
        .map(|w| {
            let vals = results
                .iter()
                .filter_map(|r| Some((r.engine.display().to_string(), r.cell(w)?.tps()?)))
                .collect();
            (w.trim_start_matches("oltp_").to_string(), vals)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    fn run(tps: f64) -> RunResult {
        RunResult {
            tps,
            p95_ms: 1.0,
            p99_ms: 2.0,
            sysbench_p95_ms: 1.0,
            worst_second_tps: Some(tps / 2.0),
            errors_per_s: 0.0,
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
            budget_mib: 256,
            write_buffer_mib: 64,
            cap: None,
            load_cap: None,
            durable: false,
            rand_type: "uniform".into(),
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
        let md = markdown(&setup, &[a, b]);
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
