//! results.md, the CSV files and the charts.

use std::fmt::Write as _;

use riptide_bench_harness::{
    Conditions, Engine, EngineRecord, ProcessCounters, Wording, engine_table, footprint_section,
    num, opt, settings_and_failures,
};

use crate::phases::Outcome;

/// The phases, in run order: name, what `ops` counts, and what the phase does.
pub const PHASES: [(&str, &str, &str); 6] = [
    (
        "l.i0",
        "rows",
        "insert the rows in primary-key order, no secondary index",
    ),
    (
        "l.x",
        "rows",
        "create 3 secondary indexes (one ALTER per table)",
    ),
    (
        "l.i1",
        "rows",
        "insert and delete the same number of rows, 50 rows per transaction",
    ),
    (
        "l.i2",
        "rows",
        "insert and delete the same number of rows, 5 rows per transaction",
    ),
    (
        "qr100",
        "queries",
        "range queries (10 index entries) while a writer inserts 100 rows/s per table",
    ),
    (
        "qp100",
        "queries",
        "point queries by primary key while a writer inserts 100 rows/s per table",
    ),
];

/// The parameters of an invocation, for the report.
pub struct Setup {
    pub clients: usize,
    pub rows_per_table: u64,
    pub load_batch: u64,
    pub write_seconds: u64,
    pub query_seconds: u64,
    pub seed: u64,
    pub conditions: Conditions,
    pub quick: bool,
    pub started: String,
    pub command: String,
}

/// One phase of one engine.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub name: &'static str,
    pub outcome: Outcome,
    /// The server's CPU and I/O during the phase.
    pub server: Option<ProcessCounters>,
    /// The engine's files after the phase.
    pub engine_bytes: u64,
}

impl PhaseResult {
    /// Rows (or queries) per second.
    pub fn rate(&self) -> Option<f64> {
        (self.outcome.seconds > 0.0).then(|| self.outcome.ops as f64 / self.outcome.seconds)
    }

    fn per_op(&self, v: impl Fn(&ProcessCounters) -> f64) -> Option<f64> {
        let s = self.server.as_ref()?;
        (self.outcome.ops > 0).then(|| v(s) / self.outcome.ops as f64)
    }

    /// Server CPU microseconds per row (or query).
    pub fn cpu_us(&self) -> Option<f64> {
        self.per_op(|s| s.cpu_seconds * 1e6)
    }

    /// KiB the server wrote per row (or query).
    pub fn kib_written(&self) -> Option<f64> {
        self.per_op(|s| s.write_bytes as f64 / 1024.0)
    }

    /// KiB the server read per row (or query).
    pub fn kib_read(&self) -> Option<f64> {
        self.per_op(|s| s.read_bytes as f64 / 1024.0)
    }
}

/// Everything measured for one engine.
pub struct EngineResult {
    pub record: EngineRecord,
    pub phases: Vec<PhaseResult>,
    /// Rows in the tables at the end, counted by primary key and by each secondary index
    /// (they must all equal what the driver left).
    pub final_counts: Option<(u64, Vec<u64>)>,
}

impl EngineResult {
    pub fn new(engine: Engine) -> EngineResult {
        EngineResult {
            record: EngineRecord::new(engine),
            phases: Vec::new(),
            final_counts: None,
        }
    }

    pub fn engine(&self) -> Engine {
        self.record.engine
    }

    pub fn phase(&self, name: &str) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| p.name == name)
    }
}

/// A table of results.md: its title, the figure of a phase, how a cell is written.
type Section = (
    &'static str,
    fn(&PhaseResult) -> Option<f64>,
    fn(Option<f64>) -> String,
);

fn column(
    results: &[EngineResult],
    phase: &str,
    f: impl Fn(&PhaseResult) -> Option<f64>,
) -> Vec<Option<f64>> {
    results
        .iter()
        .map(|r| r.phase(phase).and_then(&f))
        .collect()
}

/// results.md.
pub fn markdown(s: &Setup, results: &[EngineResult]) -> String {
    let engines: Vec<Engine> = results.iter().map(EngineResult::engine).collect();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Insert benchmark{}\n\n{} clients, one table each, {} rows per table loaded in \
         primary-key order ({} rows per INSERT, one INSERT per transaction); l.i1 and l.i2 \
         {} s each, qr100 and qp100 {} s each; seed {}. {}\n\nStarted {}; command `{}`.",
        if s.quick {
            " (quick: a smoke test, not a measurement)"
        } else {
            ""
        },
        s.clients,
        s.rows_per_table,
        s.load_batch,
        s.write_seconds,
        s.query_seconds,
        s.seed,
        s.conditions.text(),
        s.started,
        s.command
    );
    let _ = writeln!(
        md,
        "\n## Phases\n\n| phase | counts | what it does |\n|---|---|---|"
    );
    for (name, unit, what) in PHASES {
        let _ = writeln!(md, "| {name} | {unit} | {what} |");
    }
    let sections: [Section; 5] = [
        ("Rows (or queries) per second", PhaseResult::rate, num),
        (
            "Server CPU microseconds per row (or query)",
            PhaseResult::cpu_us,
            num,
        ),
        (
            "KiB written by the server per row (or query)",
            PhaseResult::kib_written,
            two,
        ),
        (
            "KiB read by the server per row (or query)",
            PhaseResult::kib_read,
            two,
        ),
        (
            "Engine files after the phase, MiB",
            |p| Some(p.engine_bytes as f64 / 1048576.0),
            num,
        ),
    ];
    for (title, f, cell) in sections {
        let _ = writeln!(md, "\n## {title}\n");
        let rows: Vec<(String, Vec<Option<f64>>)> = PHASES
            .iter()
            .map(|(name, _, _)| (name.to_string(), column(results, name, f)))
            .collect();
        engine_table(&mut md, "phase", &engines, &rows, cell);
    }
    let _ = writeln!(
        md,
        "\nServer CPU: utime + stime of mariadbd over the phase; KiB: `write_bytes` and \
         `read_bytes` of /proc/<pid>/io (storage I/O; page-cache hits are not reads), each \
         divided by the rows inserted (l.x: rows indexed) or the queries answered. The query \
         phases' background writes are part of their CPU and I/O. Ratios are Riptide's figure \
         over the peer's (for CPU, KiB and size, below 1 is better)."
    );
    let _ = writeln!(
        md,
        "\n## Checks\n\n| engine | retries (deadlock, lock wait) | background rows (qr100 + \
         qp100) | rows at the end: by primary key / by each secondary index |\n|---|---:|---:|---|"
    );
    for r in results {
        let retries: u64 = r.phases.iter().map(|p| p.outcome.retries).sum();
        let bg: u64 = r.phases.iter().map(|p| p.outcome.background_rows).sum();
        let counts = r.final_counts.as_ref().map_or("-".to_string(), |(pk, sk)| {
            format!(
                "{pk} / {}",
                sk.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" / ")
            )
        });
        let _ = writeln!(
            md,
            "| {} | {retries} | {bg} | {counts} |",
            r.engine().display()
        );
    }
    let records: Vec<&EngineRecord> = results.iter().map(|r| &r.record).collect();
    footprint_section(
        &mut md,
        &records,
        s.rows_per_table * s.clients as u64,
        s.conditions.cap,
        &Wording {
            load: "load (l.i0 + l.x)",
            database: "ib",
            measured: "l.i1, l.i2, qr100 and qp100",
            measured_short: "after the load",
        },
    );
    settings_and_failures(&mut md, &records);
    let _ = writeln!(
        md,
        "\nCharts: `ibench-rates.png` (each phase's rate relative to the first peer), \
         `ibench-per-second.png` (rows per second of l.i0 and l.i1)."
    );
    md
}

fn two(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}

/// results.csv: one line per engine and phase.
pub fn results_csv(results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,phase,ops,seconds,per_second,cpu_us_per_op,kib_written_per_op,kib_read_per_op,\
         engine_bytes_after,retries,background_rows\n",
    );
    for r in results {
        for p in &r.phases {
            let _ = writeln!(
                s,
                "{},{},{},{:.3},{},{},{},{},{},{},{}",
                r.engine().name(),
                p.name,
                p.outcome.ops,
                p.outcome.seconds,
                opt(p.rate()),
                opt(p.cpu_us()),
                opt(p.kib_written()),
                opt(p.kib_read()),
                p.engine_bytes,
                p.outcome.retries,
                p.outcome.background_rows
            );
        }
    }
    s
}

/// per-second.csv: engine, phase, second, rows (or queries) done in that second.
pub fn per_second_csv(results: &[EngineResult]) -> String {
    let mut s = String::from("engine,phase,second,ops\n");
    for r in results {
        for p in &r.phases {
            for (i, v) in p.outcome.per_second.iter().enumerate() {
                let _ = writeln!(s, "{},{},{},{v:.0}", r.engine().name(), p.name, i + 1);
            }
        }
    }
    s
}

/// The rate chart's groups: per phase, each engine's rate.
pub fn rate_groups(results: &[EngineResult]) -> Vec<riptide_chart::Group> {
    PHASES
        .iter()
        .map(|(name, _, _)| {
            (
                name.to_string(),
                results
                    .iter()
                    .filter_map(|r| {
                        Some((r.engine().display().to_string(), r.phase(name)?.rate()?))
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The per-second chart's lines: l.i0 and then l.i1 of each engine, one after the other on
/// one time axis (l.i1 starts where that engine's l.i0 ended).
pub fn per_second_series(results: &[EngineResult]) -> Vec<riptide_chart::Series> {
    let mut out = Vec::new();
    for phase in ["l.i0", "l.i1"] {
        for r in results {
            let Some(p) = r.phase(phase) else { continue };
            out.push(riptide_chart::Series {
                name: format!("{} {phase}", r.engine().display()),
                points: p
                    .outcome
                    .per_second
                    .iter()
                    .enumerate()
                    .map(|(i, v)| ((i + 1) as f64, *v))
                    .collect(),
            });
        }
    }
    out
}

/// The title suffix of the charts.
pub fn chart_title(s: &Setup, what: &str) -> String {
    format!(
        "{what}, {} clients x {} rows, {} MiB per engine{}{}",
        s.clients,
        s.rows_per_table,
        s.conditions.budget.total_mib,
        s.conditions.chart_suffix(),
        if s.quick { " (quick)" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &'static str, ops: u64, seconds: f64, cpu: f64) -> PhaseResult {
        PhaseResult {
            name,
            outcome: Outcome {
                ops,
                seconds,
                per_second: vec![1.0, 2.0],
                retries: 0,
                background_rows: 0,
            },
            server: Some(ProcessCounters {
                cpu_seconds: cpu,
                write_bytes: 2048 * ops,
                read_bytes: 0,
            }),
            engine_bytes: 1 << 20,
        }
    }

    #[test]
    fn per_row_figures_divide_by_the_rows() {
        let p = phase("l.i0", 1000, 2.0, 0.5);
        assert_eq!(p.rate(), Some(500.0));
        assert_eq!(p.cpu_us(), Some(500.0));
        assert_eq!(p.kib_written(), Some(2.0));
        assert_eq!(p.kib_read(), Some(0.0));
        let empty = phase("l.x", 0, 0.0, 0.0);
        assert_eq!(empty.rate(), None);
        assert_eq!(empty.cpu_us(), None);
    }

    #[test]
    fn csv_has_a_line_per_phase() {
        let mut r = EngineResult::new(Engine::Riptide);
        r.phases.push(phase("l.i0", 10, 1.0, 0.1));
        r.phases.push(phase("l.x", 10, 1.0, 0.1));
        let csv = results_csv(&[r]);
        assert_eq!(csv.lines().count(), 3);
        assert!(csv.contains("\nriptide,l.x,10,1.000,"));
    }
}
