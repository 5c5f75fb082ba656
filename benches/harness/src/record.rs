//! What every benchmark records about one engine's run besides its own measurements (load
//! time, disk, memory, settings, the error that stopped it), and the report sections and
//! CSV file made of it, the same in every benchmark's report.

use std::fmt::Write as _;
use std::time::Duration;

use crate::Engine;
use crate::report::{mib, num};

/// What one engine's run measured about memory: the cgroup's counters and the server
/// process's peaks.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// Peak memory of the cgroup (page cache included) since the restart, if capped.
    pub peak_memory: Option<u64>,
    /// How often the cgroup hit its limit (reclaim events) since the restart, if capped.
    pub limit_hits: Option<u64>,
    /// Anonymous memory of the server right after the load, if capped.
    pub load_rss: Option<u64>,
    /// How long the server took to restart after the load (recovery included).
    pub restart: Option<Duration>,
    /// The most anonymous memory (no page cache) the server had, sampled after the restart
    /// and whenever the benchmark calls `Bench::sample_rss`, if capped.
    pub max_rss: Option<u64>,
    /// The loading server's peak resident memory (`VmHWM`): the load's footprint.
    pub load_peak_rss: Option<u64>,
    /// The restarted server's peak resident memory (`VmHWM`) over the measured phase.
    pub run_peak_rss: Option<u64>,
}

/// Load time, disk and memory of one engine's run.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    /// Wall-clock time of the load.
    pub load: Option<Duration>,
    /// Engine files on disk right after the load.
    pub engine_bytes_loaded: u64,
    /// The whole data directory right after the load.
    pub datadir_bytes_loaded: u64,
    /// Engine files on disk at the end of the measured phase.
    pub engine_bytes_end: u64,
    /// The cgroup's and the server's memory figures, the restart time.
    pub memory: Memory,
}

/// One engine's run as every benchmark records it.
pub struct EngineRecord {
    /// The engine.
    pub engine: Engine,
    /// Load time, disk, memory.
    pub footprint: Footprint,
    /// The server variables as the server reported them.
    pub settings: Vec<(String, String)>,
    /// Why the engine's run stopped early, if it did.
    pub error: Option<String>,
}

impl EngineRecord {
    /// An empty record for `engine`.
    pub fn new(engine: Engine) -> EngineRecord {
        EngineRecord {
            engine,
            footprint: Footprint::default(),
            settings: Vec::new(),
            error: None,
        }
    }
}

/// The words that differ between the benchmarks in [`footprint_section`].
pub struct Wording<'a> {
    /// The header of the load time column (`load (prepare)`).
    pub load: &'a str,
    /// The database whose InnoDB tablespaces are counted (`sbtest`).
    pub database: &'a str,
    /// The measured phase, as the subject of "run on the fresh server" (`the workloads`).
    pub measured: &'a str,
    /// The measured phase in the peak RSS column's header (`workloads`).
    pub measured_short: &'a str,
}

fn secs(d: Option<Duration>, decimals: usize, unit: &str) -> Option<String> {
    d.map(|d| format!("{:.*}{unit}", decimals, d.as_secs_f64()))
}

/// Appends the "Load, size on disk, memory" section: one row per engine (`rows` loaded,
/// the cap if any), the explanation of its columns, and a warning for engines whose data
/// is below 4x the cap.
pub fn footprint_section(
    s: &mut String,
    records: &[&EngineRecord],
    rows: u64,
    cap: Option<u64>,
    w: &Wording<'_>,
) {
    let _ = writeln!(
        s,
        "\n## Load, size on disk, memory\n\n| engine | {} | rows/s | engine files after load | \
         data / cap | engine files at the end | whole datadir after load | peak RSS loading | \
         anon memory after load | restart | peak cgroup memory | anon memory (max sampled) | \
         peak RSS {} | limit hits |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        w.load, w.measured_short
    );
    for r in records {
        let f = &r.footprint;
        let m = &f.memory;
        let load = f.load.map(|d| d.as_secs_f64());
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.engine.display(),
            secs(f.load, 1, " s").unwrap_or_else(|| "-".into()),
            num(load.filter(|x| *x > 0.0).map(|x| rows as f64 / x)),
            mib(f.engine_bytes_loaded),
            cap.map_or("(no cap)".into(), |c| format!(
                "{:.1}x",
                f.engine_bytes_loaded as f64 / c as f64
            )),
            mib(f.engine_bytes_end),
            mib(f.datadir_bytes_loaded),
            m.load_peak_rss.map_or("-".into(), mib),
            m.load_rss.map_or("-".into(), mib),
            secs(m.restart, 1, " s").unwrap_or_else(|| "-".into()),
            m.peak_memory.map_or("-".into(), mib),
            m.max_rss.map_or("-".into(), mib),
            m.run_peak_rss.map_or("-".into(), mib),
            m.limit_hits.map_or("-".into(), |h| h.to_string()),
        );
    }
    let _ = writeln!(
        s,
        "\nEngine files: InnoDB `{}/*.ibd` (not the system tablespace or the redo log); \
         MyRocks `#rocksdb/` and Riptide `#riptide/` (tables, WAL, manifest). Allocated \
         blocks, not apparent sizes. \"data / cap\" below 4x means the OS page cache within \
         the cap could hold a large part of the data. After the load the server is restarted \
         (\"restart\": its start time, recovery included) and {} run on the fresh \
         server; the columns after it cover that measured phase only. Peak cgroup memory \
         includes the page cache (reclaimable; a cap-high peak is normal for buffered I/O); \
         anon memory is the server's heap (caches, memtables, connections), read from \
         memory.stat after the restart and after every run (capped runs only); peak RSS is \
         the server process's VmHWM (/proc/<pid>/status: heap, stacks and binaries, no page \
         cache), of the loading server and of the restarted one; limit hits = memory.failcnt \
         (allocations that made the kernel reclaim).",
        w.database, w.measured
    );
    if let Some(c) = cap {
        let small: Vec<&str> = records
            .iter()
            .filter(|r| {
                r.footprint.load.is_some()
                    && (r.footprint.engine_bytes_loaded as f64) < 4.0 * c as f64
            })
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
}

/// Appends the "What each engine got" section (the server variables of each engine) and,
/// when an engine's run failed, the "Failures" section.
pub fn settings_and_failures(s: &mut String, records: &[&EngineRecord]) {
    let _ = writeln!(
        s,
        "\n## What each engine got (SHOW GLOBAL VARIABLES)\n\n| engine | variable | value \
         |\n|---|---|---|"
    );
    for r in records {
        for (k, v) in &r.settings {
            let _ = writeln!(s, "| {} | {k} | `{v}` |", r.engine.display());
        }
    }
    let failed: Vec<&&EngineRecord> = records.iter().filter(|r| r.error.is_some()).collect();
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
}

/// `engines.csv`: load time, sizes and memory per engine, and the error of a failed run.
pub fn engines_csv(records: &[&EngineRecord], cap: Option<u64>) -> String {
    let mut s = String::from(
        "engine,load_seconds,engine_bytes_after_load,engine_bytes_at_end,datadir_bytes_after_load,\
         cap_bytes,load_peak_rss_bytes,load_rss_bytes,restart_seconds,peak_memory_bytes,\
         max_rss_bytes,run_peak_rss_bytes,limit_hits,error\n",
    );
    let bytes = |v: Option<u64>| v.map_or(String::new(), |m| m.to_string());
    for r in records {
        let f = &r.footprint;
        let m = &f.memory;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.engine.name(),
            secs(f.load, 3, "").unwrap_or_default(),
            f.engine_bytes_loaded,
            f.engine_bytes_end,
            f.datadir_bytes_loaded,
            bytes(cap),
            bytes(m.load_peak_rss),
            bytes(m.load_rss),
            secs(m.restart, 3, "").unwrap_or_default(),
            bytes(m.peak_memory),
            bytes(m.max_rss),
            bytes(m.run_peak_rss),
            bytes(m.limit_hits),
            r.error.as_deref().map_or(String::new(), |e| format!(
                "\"{}\"",
                e.replace('"', "'").replace('\n', " ")
            ))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprint_rows_and_small_data_warning() {
        let mut r = EngineRecord::new(Engine::Riptide);
        r.footprint.load = Some(Duration::from_secs(2));
        r.footprint.engine_bytes_loaded = 1024 * 1024;
        r.footprint.memory.limit_hits = Some(7);
        r.error = Some("it \"broke\"\nbadly".into());
        let mut s = String::new();
        let w = Wording {
            load: "load",
            database: "tpcc",
            measured: "the runs",
            measured_short: "runs",
        };
        footprint_section(&mut s, &[&r], 1000, Some(4 * 1024 * 1024), &w);
        assert!(
            s.contains(
                "| Riptide | 2.0 s | 500 | 1.0 MiB | 0.2x | 0.0 MiB | 0.0 MiB | - | - | - | - \
                 | - | - | 7 |"
            ),
            "{s}"
        );
        assert!(s.contains("InnoDB `tpcc/*.ibd`") && s.contains("peak RSS runs |"));
        assert!(s.contains("Data smaller than 4x the cap for Riptide"));
        settings_and_failures(&mut s, &[&r]);
        assert!(
            s.contains("## Failures\n\n- Riptide: it \"broke\" badly\n"),
            "{s}"
        );
        let csv = engines_csv(&[&r], None);
        assert!(
            csv.ends_with("riptide,2.000,1048576,0,0,,,,,,,,7,\"it 'broke' badly\"\n"),
            "{csv}"
        );
    }
}
