//! Results of one invocation: per engine the runs' figures, the markdown report, the CSV
//! files and the per-second NOPM chart.

use std::fmt::Write as _;

use riptide_bench_harness::{
    CacheCounters, Conditions, Engine, EngineRecord, ProcessCounters, Wording, engine_table,
    footprint_section, median, ms, num, opt, settings_and_failures,
};

use crate::mix::{Kind, Mix};
use crate::terminal::Tally;

/// One measured run (or the warm-up) of one engine.
pub struct RunResult {
    /// Its length in seconds.
    pub seconds: f64,
    /// What the terminals did.
    pub tally: Tally,
    /// The server's CPU time and bytes written during the run (None if unreadable).
    pub server: Option<ProcessCounters>,
    /// The driver's own CPU time during the run (it shares the machine with the server).
    pub driver: Option<ProcessCounters>,
    /// The server's block cache and bloom filter counters over the run (None if unreadable).
    pub cache: Option<CacheCounters>,
    /// The consistency check after the run: its failures (empty: passed).
    pub failures: Vec<String>,
    /// Where the server's CPU went during the run (`--perf-seconds`; None: not asked, or
    /// perf failed).
    pub profile: Option<crate::profile::Profile>,
}

impl RunResult {
    fn per_minute(&self, n: u64) -> f64 {
        n as f64 * 60.0 / self.seconds.max(f64::MIN_POSITIVE)
    }

    /// New-Orders committed per minute.
    pub fn nopm(&self) -> f64 {
        self.per_minute(self.tally.new_orders())
    }

    /// Transactions of all five types completed per minute.
    pub fn tpm(&self) -> f64 {
        self.per_minute(self.tally.completed())
    }

    /// Deadlock and lock-wait retries per second.
    pub fn retries_per_s(&self) -> f64 {
        self.tally.retries() as f64 / self.seconds.max(f64::MIN_POSITIVE)
    }

    fn per_new_order(&self, v: f64) -> Option<f64> {
        let n = self.tally.new_orders();
        (n > 0).then(|| v / n as f64)
    }

    /// Server CPU milliseconds per committed New-Order.
    pub fn cpu_ms_per_new_order(&self) -> Option<f64> {
        self.per_new_order(self.server?.cpu_seconds * 1000.0)
    }

    fn per_transaction(&self, v: f64) -> Option<f64> {
        let n = self.tally.completed();
        (n > 0).then(|| v / n as f64)
    }

    /// Server CPU milliseconds per completed transaction (all types).
    pub fn cpu_ms_per_transaction(&self) -> Option<f64> {
        self.per_transaction(self.server?.cpu_seconds * 1000.0)
    }

    /// KiB the server wrote per completed transaction (all types).
    pub fn kib_per_transaction(&self) -> Option<f64> {
        self.per_transaction(self.server?.write_bytes as f64 / 1024.0)
    }

    /// KiB the server read from storage (not the page cache) per completed transaction.
    pub fn kib_read_per_transaction(&self) -> Option<f64> {
        self.per_transaction(self.server?.read_bytes as f64 / 1024.0)
    }

    /// Share of the run's block lookups the engine's cache served (InnoDB: its buffer pool).
    pub fn cache_hit_rate(&self) -> Option<f64> {
        self.cache?.hit_rate()
    }

    /// Share of the run's bloom filter checks that ruled the key out (LSM engines).
    pub fn bloom_useful_rate(&self) -> Option<f64> {
        self.cache?.bloom_useful_rate()
    }

    /// Bloom filter checks per completed transaction (LSM engines).
    pub fn bloom_checks_per_transaction(&self) -> Option<f64> {
        self.per_transaction(self.cache?.bloom_checked? as f64)
    }

    /// The driver's (this process's) CPU milliseconds per committed New-Order.
    pub fn driver_ms_per_new_order(&self) -> Option<f64> {
        self.per_new_order(self.driver?.cpu_seconds * 1000.0)
    }

    /// KiB the server wrote per committed New-Order.
    pub fn kib_per_new_order(&self) -> Option<f64> {
        self.per_new_order(self.server?.write_bytes as f64 / 1024.0)
    }

    /// NOPM of each second of the run.
    pub fn nopm_per_second(&self) -> Vec<f64> {
        self.tally
            .new_orders_per_second
            .iter()
            .map(|n| *n as f64 * 60.0)
            .collect()
    }
}

/// Everything measured on one engine.
pub struct EngineResult {
    /// The engine, its load time, disk and memory, settings and error.
    pub record: EngineRecord,
    /// The consistency check after the load: its failures (None: not reached).
    pub load_failures: Option<Vec<String>>,
    /// The measured runs.
    pub runs: Vec<RunResult>,
    /// The plan of each statement of [`crate::plans::STATEMENTS`] after the warm-up (empty:
    /// not reached, or EXPLAIN failed).
    pub plans: Vec<crate::plans::Plan>,
}

impl EngineResult {
    /// An empty result for `engine`.
    pub fn new(engine: Engine) -> EngineResult {
        EngineResult {
            record: EngineRecord::new(engine),
            load_failures: None,
            runs: Vec::new(),
            plans: Vec::new(),
        }
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        self.record.engine
    }

    fn median_of(&self, f: impl Fn(&RunResult) -> Option<f64>) -> Option<f64> {
        median(&self.runs.iter().filter_map(f).collect::<Vec<_>>())
    }

    /// The run whose NOPM is the median (the lower middle one of an even count).
    pub fn median_run(&self) -> Option<&RunResult> {
        let mut runs: Vec<&RunResult> = self.runs.iter().collect();
        runs.sort_by(|a, b| a.nopm().total_cmp(&b.nopm()));
        runs.get(runs.len().saturating_sub(1) / 2).copied()
    }

    /// Every consistency failure (after the load and after each run), labelled.
    pub fn consistency_failures(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .load_failures
            .iter()
            .flatten()
            .map(|f| format!("after the load: {f}"))
            .collect();
        for (i, r) in self.runs.iter().enumerate() {
            out.extend(
                r.failures
                    .iter()
                    .map(|f| format!("after run {}: {f}", i + 1)),
            );
        }
        out
    }
}

/// The invocation's parameters, printed above the tables.
pub struct Setup {
    /// Warehouses.
    pub warehouses: u64,
    /// Terminals.
    pub terminals: u64,
    /// Seconds per measured run.
    pub duration: u64,
    /// Seconds of the discarded warm-up.
    pub warmup: u64,
    /// Measured runs.
    pub runs: u64,
    /// Loader threads.
    pub load_threads: usize,
    /// Whether Riptide was loaded with `riptide_bulk_load=1`, one transaction per job.
    pub bulk_load: bool,
    /// Every transaction on a uniformly drawn warehouse (`--all-warehouses`).
    pub all_warehouses: bool,
    /// How each transaction is sent.
    pub protocol: crate::procedures::Protocol,
    /// The shares of the inputs.
    pub mix: Mix,
    /// Memory budget, durability, cap.
    pub conditions: Conditions,
    /// Whether this was `--quick`.
    pub quick: bool,
    /// The random seed.
    pub seed: u64,
    /// The engines' order (`--order`).
    pub order: crate::schedule::Order,
    /// `--perf-seconds`: seconds of `perf record` in the middle of each measured run.
    pub perf_seconds: Option<u64>,
    /// `date -u` at the start.
    pub started: String,
    /// The command line.
    pub command: String,
}

/// How the engines' sessions ran, in words: the runs' order and where each warm-up went.
fn schedule_text(setup: &Setup, engines: &[Engine]) -> String {
    use crate::schedule::{Order, describe, steps};
    match setup.order {
        Order::Sequential => format!(
            "restart, a {} s warm-up (discarded), then {} measured run(s) of {} s; the engines \
             one after the other (`--order sequential`)",
            setup.warmup, setup.runs, setup.duration
        ),
        Order::Interleaved => {
            let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
            format!(
                "then {} measured run(s) of {} s, each on a server started again on the \
                 engine's data, after its own {} s warm-up (discarded); every engine loads \
                 first, then the runs interleave, the order reversed on every other run so \
                 that a machine that slows over the hour slows every engine alike \
                 (`--order interleaved`: {})",
                setup.runs,
                setup.duration,
                setup.warmup,
                describe(
                    &steps(engines.len(), setup.runs, Order::Interleaved),
                    &names
                )
            )
        }
    }
}

fn ms3(v: (Option<f64>, Option<f64>, Option<f64>)) -> String {
    format!("{} / {} / {}", ms(v.0), ms(v.1), ms(v.2))
}

/// The markdown report.
pub fn markdown(setup: &Setup, results: &[EngineResult]) -> String {
    let mut s = String::new();
    let engines: Vec<Engine> = results.iter().map(EngineResult::engine).collect();
    let _ = writeln!(
        s,
        "# TPC-C: {} ({})\n",
        engines
            .iter()
            .map(|e| e.display())
            .collect::<Vec<_>>()
            .join(" vs "),
        if setup.quick { "quick" } else { "full" }
    );
    let _ = writeln!(s, "`{}` (started {})\n", setup.command, setup.started);
    let m = &setup.mix;
    let _ = writeln!(
        s,
        "{} warehouses, {} terminals ({}, no keying or think time), REPEATABLE READ. {}; {}; {}% remote order lines, \
         {}% remote Payment customers, {}% of Payment and Order-Status by last name, {}% of \
         New-Orders rolled back. Per engine: load ({} threads; {}), consistency check, {}, \
         each run followed by the consistency check (unmeasured: the cap raised by {} MiB \
         meanwhile); median reported. {} Seed {}.\n",
        setup.warehouses,
        setup.terminals,
        if setup.all_warehouses {
            "every transaction on a uniformly drawn warehouse"
        } else {
            "each on its home warehouse, assigned round-robin, `--home-warehouses`"
        },
        match m.only {
            None => "Mix: New-Order 45%, Payment 43%, Order-Status, Delivery and Stock-Level 4% \
                     each (a shuffled deck of 100 per terminal)"
                .to_string(),
            Some(k) => format!(
                "**Only {} transactions** (`--only`: a diagnostic of one type's cost, not \
                 TPC-C's mix)",
                k.name()
            ),
        },
        setup.protocol.text(),
        m.remote_line_pct,
        m.remote_payment_pct,
        m.by_name_pct,
        m.rollback_pct,
        setup.load_threads,
        if setup.bulk_load {
            "Riptide with `riptide_bulk_load=1` and one transaction per warehouse, the other \
             engines 5,000 rows per transaction"
        } else {
            "5,000 rows per transaction"
        },
        schedule_text(setup, &engines),
        riptide_bench_harness::CHECK_ALLOWANCE_MIB,
        setup.conditions.text(),
        setup.seed
    );

    let _ = writeln!(s, "## Throughput (median of the runs)\n");
    let metric = |f: &dyn Fn(&EngineResult) -> Option<f64>| -> Vec<Option<f64>> {
        results.iter().map(f).collect()
    };
    let rows: Vec<(String, Vec<Option<f64>>)> = vec![
        (
            "NOPM (New-Orders per minute)".into(),
            metric(&|r| r.median_of(|x| Some(x.nopm()))),
        ),
        (
            "TPM (transactions per minute, all five types)".into(),
            metric(&|r| r.median_of(|x| Some(x.tpm()))),
        ),
        (
            "retries/s (deadlocks + lock wait timeouts)".into(),
            metric(&|r| r.median_of(|x| Some(x.retries_per_s()))),
        ),
        (
            "server CPU ms per New-Order".into(),
            metric(&|r| r.median_of(RunResult::cpu_ms_per_new_order)),
        ),
        (
            "KiB written per New-Order".into(),
            metric(&|r| r.median_of(RunResult::kib_per_new_order)),
        ),
        (
            "server CPU ms per transaction (all types)".into(),
            metric(&|r| r.median_of(RunResult::cpu_ms_per_transaction)),
        ),
        (
            "KiB written per transaction (all types)".into(),
            metric(&|r| r.median_of(RunResult::kib_per_transaction)),
        ),
        (
            "KiB read per transaction (all types)".into(),
            metric(&|r| r.median_of(RunResult::kib_read_per_transaction)),
        ),
        (
            "block cache hit rate, % (InnoDB: buffer pool)".into(),
            metric(&|r| r.median_of(|x| x.cache_hit_rate().map(|v| v * 100.0))),
        ),
        (
            "bloom filter checks per transaction".into(),
            metric(&|r| r.median_of(RunResult::bloom_checks_per_transaction)),
        ),
        (
            "bloom filter checks that ruled the key out, %".into(),
            metric(&|r| r.median_of(|x| x.bloom_useful_rate().map(|v| v * 100.0))),
        ),
        (
            "driver CPU ms per New-Order".into(),
            metric(&|r| r.median_of(RunResult::driver_ms_per_new_order)),
        ),
    ];
    engine_table(&mut s, "", &engines, &rows, |v| match v {
        Some(x) if x < 10.0 => format!("{x:.2}"),
        other => num(other),
    });
    let _ = writeln!(
        s,
        "\nNOPM of each run: {}. Server CPU = utime + stime of mariadbd (/proc/<pid>/stat), \
         KiB written / read = its write_bytes / read_bytes (/proc/<pid>/io: storage I/O, \
         page-cache hits not counted), all over the measured run, divided by the committed \
         New-Orders (or all completed transactions); block cache hit rate and bloom filter \
         checks from the engine's status variables over the run (Riptide_block_cache_hits / \
         _misses, Riptide_bloom_filter_checks / _useful; MyRocks' Rocksdb_block_cache_hit / \
         _miss, Rocksdb_bloom_filter_full_positive + _useful; InnoDB's buffer pool read \
         requests and reads); driver CPU: the same for this benchmark's own process, \
         which shares the machine's cores with the server.",
        results
            .iter()
            .map(|r| format!(
                "{} {}",
                r.engine().display(),
                r.runs
                    .iter()
                    .map(|x| format!("{:.0}", x.nopm()))
                    .collect::<Vec<_>>()
                    .join(" / ")
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );

    let _ = writeln!(
        s,
        "\n## Latency per transaction type (ms, p50 / p95 / p99, median of the runs)\n"
    );
    let mut header = String::from("| type |");
    let mut rule = String::from("|---|");
    for e in &engines {
        let _ = write!(header, " {} |", e.display());
        rule.push_str("---:|");
    }
    let _ = writeln!(s, "{header}\n{rule}");
    for k in Kind::ALL {
        let mut line = format!("| {} |", k.name());
        for r in results {
            let q = |p: f64| r.median_of(|x| x.tally.kind(k).latency_ms(p));
            let _ = write!(line, " {} |", ms3((q(0.5), q(0.95), q(0.99))));
        }
        let _ = writeln!(s, "{line}");
    }

    let _ = writeln!(
        s,
        "\n## Transactions of the median run (completed / retried after a deadlock / after a \
         lock wait timeout)\n\n{header}\n{rule}"
    );
    for k in Kind::ALL {
        let mut line = format!("| {} |", k.name());
        for r in results {
            let cell = r.median_run().map_or("-".into(), |x| {
                let t = x.tally.kind(k);
                let extra = match k {
                    Kind::NewOrder => format!(" ({} rolled back)", t.rolled_back),
                    Kind::Delivery => format!(" ({} empty districts)", t.skipped),
                    _ => String::new(),
                };
                format!(
                    "{}{extra} / {} / {}",
                    t.completed, t.deadlocks, t.lock_waits
                )
            });
            let _ = write!(line, " {cell} |");
        }
        let _ = writeln!(s, "{line}");
    }

    let _ = writeln!(
        s,
        "\n## Consistency (conditions 1-4 of clause 3.3.2; after the load also the row counts; \
         after each run also sum(D_NEXT_O_ID) against the acknowledged New-Orders)\n\n\
         | engine | after the load | after the runs |\n|---|---|---|"
    );
    for r in results {
        let load = match &r.load_failures {
            None => "not reached".to_string(),
            Some(f) if f.is_empty() => "passed".to_string(),
            Some(f) => format!("**FAILED** ({})", f.len()),
        };
        let runs = r
            .runs
            .iter()
            .map(|x| {
                if x.failures.is_empty() {
                    "passed".to_string()
                } else {
                    format!("**FAILED** ({})", x.failures.len())
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            s,
            "| {} | {load} | {} |",
            r.engine().display(),
            if runs.is_empty() { "-" } else { &runs }
        );
    }
    for r in results {
        for f in r.consistency_failures() {
            let _ = writeln!(s, "\n- {}: {f}", r.engine().display());
        }
    }

    profile_section(&mut s, results);
    plans_section(&mut s, results);

    let records: Vec<&EngineRecord> = results.iter().map(|r| &r.record).collect();
    let rows_loaded = crate::schema::expected_rows(setup.warehouses);
    footprint_section(
        &mut s,
        &records,
        rows_loaded,
        setup.conditions.cap,
        &Wording {
            load: "load",
            database: crate::schema::DATABASE,
            measured: "the warm-up and the measured runs",
            measured_short: "runs",
        },
    );
    settings_and_failures(&mut s, &records);
    s
}

/// `--perf-seconds`: server CPU per transaction by handler entry point, of each engine's
/// median run (crate::profile).
fn profile_section(s: &mut String, results: &[EngineResult]) {
    let profiled: Vec<(&EngineResult, &RunResult, &crate::profile::Profile)> = results
        .iter()
        .filter_map(|r| {
            let run = r.median_run()?;
            Some((r, run, run.profile.as_ref()?))
        })
        .collect();
    if profiled.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n## Where the server's CPU goes (perf of the median run, by handler entry point)\n"
    );
    let mut header = String::from("| ms of server CPU per transaction |");
    let mut rule = String::from("|---|");
    for (r, _, _) in &profiled {
        let _ = write!(header, " {} |", r.engine().display());
        rule.push_str("---:|");
    }
    let _ = writeln!(s, "{header}\n{rule}");
    let mut rows: Vec<&str> = crate::profile::report_order()
        .into_iter()
        .filter(|c| profiled.iter().any(|(_, _, p)| p.share(c) > 0.0))
        .collect();
    rows.push("total");
    for category in rows {
        let mut line = format!("| {category} |");
        for (_, run, p) in &profiled {
            let cpu = run.cpu_ms_per_transaction();
            let cell = match (category, cpu) {
                ("total", Some(c)) => format!("**{c:.3}** ({} samples)", p.total()),
                (_, Some(c)) => format!(
                    "{:.3} ({:.1}%)",
                    c * p.share(category),
                    100.0 * p.share(category)
                ),
                _ => "-".into(),
            };
            let _ = write!(line, " {cell} |");
        }
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(
        s,
        "\nEach sample of `perf record -F 199 --call-graph dwarf` (the middle of every measured \
         run) goes to the innermost handler entry point on its stack (benches/tpcc/src/\
         profile.rs); a connection thread's sample with none is the SQL layer; Riptide's \
         flush and compaction threads are told apart by their names; any other thread's (or \
         a cut stack) is other background work (InnoDB's page cleaners and purge, RocksDB's \
         flushes and compactions, the server's own threads). The share of the samples times \
         the run's server CPU per transaction gives the milliseconds (perf's own cost \
         included)."
    );
}

/// The plans after the warm-up: the statements whose plan differs from InnoDB's (or from
/// the first engine's when InnoDB did not run) in anything but the row estimate, then every
/// plan.
fn plans_section(s: &mut String, results: &[EngineResult]) {
    let explained: Vec<&EngineResult> = results.iter().filter(|r| !r.plans.is_empty()).collect();
    let Some(reference) = explained
        .iter()
        .find(|r| r.engine() == Engine::Innodb)
        .or(explained.first())
    else {
        return;
    };
    let _ = writeln!(
        s,
        "\n## Plans (`EXPLAIN` of each statement after the warm-up, values of warehouse 1, \
         district 1; row estimates apart)\n"
    );
    let mut differ = Vec::new();
    for (i, (name, _)) in crate::plans::STATEMENTS.iter().enumerate() {
        let theirs = reference.plans.get(i).map(|p| &p.lines);
        let others: Vec<String> = explained
            .iter()
            .filter(|r| r.plans.get(i).map(|p| &p.lines) != theirs)
            .map(|r| r.engine().display().to_string())
            .collect();
        if !others.is_empty() {
            differ.push(format!("{name} ({})", others.join(", ")));
        }
    }
    if explained.len() < 2 {
        let _ = writeln!(s, "One engine explained: nothing to compare.\n");
    } else if differ.is_empty() {
        let _ = writeln!(
            s,
            "Every engine's plan equals {}'s for every statement.\n",
            reference.engine().display()
        );
    } else {
        let _ = writeln!(
            s,
            "**Plans that differ from {}'s:** {}.\n",
            reference.engine().display(),
            differ.join("; ")
        );
    }
    let _ = writeln!(s, "```");
    for (i, (name, sql)) in crate::plans::STATEMENTS.iter().enumerate() {
        let _ = writeln!(s, "{name}: {sql}");
        for r in &explained {
            if let Some(p) = r.plans.get(i) {
                for (line, rows) in p.lines.iter().zip(&p.rows) {
                    let _ = writeln!(s, "  {:8} {line}  (rows {rows})", r.engine().display());
                }
            }
        }
    }
    let _ = writeln!(s, "```");
}

/// `results.csv`: one line per engine, the medians.
pub fn results_csv(setup: &Setup, results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,runs,nopm_median,tpm_median,retries_per_s_median,cpu_ms_per_new_order_median,\
         kib_written_per_new_order_median,consistency_failures,warehouses,terminals,seconds,\
         capped,durable,cpu_ms_per_transaction_median,kib_written_per_transaction_median,\
         kib_read_per_transaction_median,cache_hit_rate_median,bloom_checks_per_transaction_median,\
         bloom_useful_rate_median\n",
    );
    for r in results {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.engine().name(),
            r.runs.len(),
            opt(r.median_of(|x| Some(x.nopm()))),
            opt(r.median_of(|x| Some(x.tpm()))),
            opt(r.median_of(|x| Some(x.retries_per_s()))),
            opt(r.median_of(RunResult::cpu_ms_per_new_order)),
            opt(r.median_of(RunResult::kib_per_new_order)),
            r.consistency_failures().len(),
            setup.warehouses,
            setup.terminals,
            setup.duration,
            setup.conditions.cap.is_some(),
            setup.conditions.budget.durable,
            opt(r.median_of(RunResult::cpu_ms_per_transaction)),
            opt(r.median_of(RunResult::kib_per_transaction)),
            opt(r.median_of(RunResult::kib_read_per_transaction)),
            opt(r.median_of(RunResult::cache_hit_rate)),
            opt(r.median_of(RunResult::bloom_checks_per_transaction)),
            opt(r.median_of(RunResult::bloom_useful_rate))
        );
    }
    s
}

/// `runs.csv`: every measured run.
pub fn runs_csv(results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,run,seconds,new_orders,nopm,tpm,completed,deadlocks,lock_waits,retries_per_s,\
         server_cpu_seconds,server_write_bytes,cpu_ms_per_new_order,kib_written_per_new_order,\
         driver_cpu_seconds,consistency_failures,cpu_ms_per_transaction,\
         kib_written_per_transaction,server_read_bytes,cache_hits,cache_misses,bloom_checks,\
         bloom_useful\n",
    );
    for r in results {
        for (i, x) in r.runs.iter().enumerate() {
            let t = &x.tally;
            let _ = writeln!(
                s,
                "{},{},{:.3},{},{:.3},{:.3},{},{},{},{:.3},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.engine().name(),
                i + 1,
                x.seconds,
                t.new_orders(),
                x.nopm(),
                x.tpm(),
                t.completed(),
                t.kinds.iter().map(|k| k.deadlocks).sum::<u64>(),
                t.kinds.iter().map(|k| k.lock_waits).sum::<u64>(),
                x.retries_per_s(),
                opt(x.server.map(|c| c.cpu_seconds)),
                x.server
                    .map_or(String::new(), |c| c.write_bytes.to_string()),
                opt(x.cpu_ms_per_new_order()),
                opt(x.kib_per_new_order()),
                opt(x.driver.map(|c| c.cpu_seconds)),
                x.failures.len(),
                opt(x.cpu_ms_per_transaction()),
                opt(x.kib_per_transaction()),
                count(x.server.map(|c| c.read_bytes)),
                count(x.cache.and_then(|c| c.hits)),
                count(x.cache.and_then(|c| c.misses)),
                count(x.cache.and_then(|c| c.bloom_checked)),
                count(x.cache.and_then(|c| c.bloom_useful))
            );
        }
    }
    s
}

/// A counter for a CSV field: empty when unknown.
fn count(v: Option<u64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// `latency.csv`: per engine, run and transaction type the counts and percentiles.
pub fn latency_csv(results: &[EngineResult]) -> String {
    let mut s = String::from(
        "engine,run,type,completed,rolled_back,skipped_districts,deadlocks,lock_waits,p50_ms,\
         p95_ms,p99_ms,max_ms\n",
    );
    for r in results {
        for (i, x) in r.runs.iter().enumerate() {
            for k in Kind::ALL {
                let t = x.tally.kind(k);
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{},{}",
                    r.engine().name(),
                    i + 1,
                    k.name(),
                    t.completed,
                    t.rolled_back,
                    t.skipped,
                    t.deadlocks,
                    t.lock_waits,
                    opt(t.latency_ms(0.5)),
                    opt(t.latency_ms(0.95)),
                    opt(t.latency_ms(0.99)),
                    opt(t.latency_ms(1.0)),
                );
            }
        }
    }
    s
}

/// `nopm-per-second.csv`: every second of every measured run.
pub fn per_second_csv(results: &[EngineResult]) -> String {
    let mut s = String::from("engine,run,second,nopm\n");
    for r in results {
        for (i, x) in r.runs.iter().enumerate() {
            for (sec, v) in x.nopm_per_second().iter().enumerate() {
                let _ = writeln!(s, "{},{},{},{v:.0}", r.engine().name(), i + 1, sec + 1);
            }
        }
    }
    s
}

/// The chart's lines: per engine, NOPM per second of its median run.
pub fn chart_series(results: &[EngineResult]) -> Vec<riptide_chart::Series> {
    results
        .iter()
        .filter_map(|r| {
            let run = r.median_run()?;
            Some(riptide_chart::Series {
                name: r.engine().display().to_string(),
                points: run
                    .nopm_per_second()
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| ((i + 1) as f64, v))
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(new_orders: u64, seconds: f64) -> RunResult {
        let mut tally = Tally {
            new_orders_per_second: vec![new_orders / 2, new_orders - new_orders / 2],
            ..Tally::default()
        };
        tally.kinds[0].completed = new_orders + 1;
        tally.kinds[0].rolled_back = 1;
        tally.kinds[0].latency.saturating_record(2000);
        tally.kinds[1].completed = new_orders;
        tally.kinds[1].deadlocks = 3;
        RunResult {
            seconds,
            tally,
            server: Some(ProcessCounters {
                cpu_seconds: new_orders as f64 / 1000.0,
                write_bytes: new_orders * 2048,
                read_bytes: new_orders * 512,
            }),
            driver: None,
            cache: Some(CacheCounters {
                hits: Some(90),
                misses: Some(10),
                bloom_checked: Some(new_orders * 4),
                bloom_useful: Some(new_orders),
            }),
            failures: Vec::new(),
            profile: None,
        }
    }

    fn setup() -> Setup {
        Setup {
            warehouses: 2,
            terminals: 4,
            duration: 2,
            warmup: 1,
            runs: 3,
            load_threads: 2,
            bulk_load: true,
            all_warehouses: false,
            protocol: crate::procedures::Protocol::Procedures,
            mix: Mix::default(),
            conditions: Conditions {
                budget: riptide_bench_harness::Budget {
                    total_mib: 256,
                    write_buffer_mib: 64,
                    durable: false,
                },
                cap: None,
                load_cap: None,
                extra_options: Vec::new(),
            },
            quick: true,
            seed: 1,
            order: crate::schedule::Order::Interleaved,
            perf_seconds: None,
            started: "now".into(),
            command: "x".into(),
        }
    }

    #[test]
    fn figures_of_a_run() {
        let r = run(100, 2.0);
        assert_eq!(r.nopm(), 3000.0);
        assert_eq!(r.tpm(), 201.0 * 30.0);
        assert_eq!(r.retries_per_s(), 1.5);
        assert_eq!(r.cpu_ms_per_new_order(), Some(1.0));
        assert_eq!(r.kib_per_new_order(), Some(2.0));
        assert_eq!(r.cpu_ms_per_transaction(), Some(100.0 / 201.0));
        assert_eq!(r.kib_per_transaction(), Some(200.0 / 201.0));
        assert_eq!(r.kib_read_per_transaction(), Some(50.0 / 201.0));
        assert_eq!(r.cache_hit_rate(), Some(0.9));
        assert_eq!(r.bloom_checks_per_transaction(), Some(400.0 / 201.0));
        assert_eq!(r.bloom_useful_rate(), Some(0.25));
        assert_eq!(r.nopm_per_second(), vec![3000.0, 3000.0]);
        let unknown = RunResult {
            cache: None,
            ..run(100, 2.0)
        };
        assert_eq!(unknown.cache_hit_rate(), None);
        assert_eq!(unknown.bloom_checks_per_transaction(), None);
    }

    #[test]
    fn report_has_medians_ratios_and_failures() {
        let mut a = EngineResult::new(Engine::Riptide);
        a.runs = vec![run(300, 2.0), run(100, 2.0), run(200, 2.0)];
        a.load_failures = Some(Vec::new());
        a.runs[2].failures = vec!["consistency condition 1 ... warehouse 2".into()];
        let mut b = EngineResult::new(Engine::Innodb);
        b.runs = vec![run(100, 2.0)];
        b.load_failures = Some(Vec::new());
        assert_eq!(a.median_run().map(RunResult::nopm), Some(6000.0));
        let md = markdown(&setup(), &[a, b]);
        assert!(
            md.contains("| NOPM (New-Orders per minute) | 6000 | 3000 | 2.00x |"),
            "{md}"
        );
        assert!(md.contains("| New-Order | 2.00 / 2.00 / 2.00 | 2.00 / 2.00 / 2.00 |"));
        assert!(md.contains("| Riptide | passed | passed, passed, **FAILED** (1) |"));
        assert!(md.contains("- Riptide: after run 3: consistency condition 1"));
        assert!(md.contains("NOPM of each run: Riptide 9000 / 3000 / 6000; InnoDB 3000."));
        assert!(md.contains("**NO memory cap**"));
        assert!(
            md.contains("| block cache hit rate, % (InnoDB: buffer pool) | 90.0 | 90.0 | 1.00x |"),
            "{md}"
        );
        let results = [EngineResult::new(Engine::Rocksdb)];
        assert!(results_csv(&setup(), &results).lines().count() == 2);
    }

    #[test]
    fn report_has_the_profile_and_the_plans_that_differ() {
        let mut a = EngineResult::new(Engine::Riptide);
        let mut r = run(100, 2.0);
        let mut samples = std::collections::BTreeMap::new();
        samples.insert(crate::profile::SQL_LAYER, 3);
        samples.insert(crate::profile::BACKGROUND, 1);
        r.profile = Some(crate::profile::Profile { samples });
        a.runs = vec![r];
        let n = crate::plans::STATEMENTS.len();
        let plan = |line: &str| crate::plans::Plan {
            lines: vec![line.to_string()],
            rows: vec!["1".to_string()],
        };
        a.plans = vec![plan("1 | SIMPLE | t | const | PRIMARY"); n];
        let mut b = EngineResult::new(Engine::Innodb);
        b.runs = vec![run(100, 2.0)];
        b.plans = a.plans.clone();
        b.plans[1] = plan("1 | SIMPLE | t | ALL | NULL");
        let md = markdown(&setup(), &[a, b]);
        // 0.1 CPU-seconds per 201 transactions: 0.4975 ms a transaction, 3 of 4 samples SQL;
        // categories without a sample are left out.
        assert!(
            md.contains("| SQL layer (parser, optimizer, procedures) | 0.373 (75.0%) |"),
            "{md}"
        );
        assert!(md.contains("| total | **0.498** (4 samples) |"), "{md}");
        assert!(!md.contains("| row deletes |"), "{md}");
        assert!(
            md.contains(&format!(
                "**Plans that differ from InnoDB's:** {} (Riptide).",
                crate::plans::STATEMENTS[1].0
            )),
            "{md}"
        );
    }

    #[test]
    fn csv_rows_match_their_headers_and_carry_per_transaction_figures() {
        let mut a = EngineResult::new(Engine::Riptide);
        a.runs = vec![run(100, 2.0), run(100, 2.0)];
        for csv in [
            results_csv(&setup(), std::slice::from_ref(&a)),
            runs_csv(&[a]),
        ] {
            let mut lines = csv.lines();
            let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
            let per_txn = header
                .iter()
                .position(|h| h.starts_with("cpu_ms_per_transaction"))
                .expect("a per-transaction CPU column");
            for line in lines {
                let cells: Vec<&str> = line.split(',').collect();
                assert_eq!(cells.len(), header.len(), "{csv}");
                let cpu: f64 = cells[per_txn].parse().expect("a number");
                assert!((cpu - 100.0 / 201.0).abs() < 1e-3, "{csv}");
                // results.csv has the median hit rate, runs.csv the run's hits.
                let (name, want) = if header.contains(&"cache_hits") {
                    ("cache_hits", "90")
                } else {
                    ("cache_hit_rate_median", "0.900")
                };
                let at = header
                    .iter()
                    .position(|h| *h == name)
                    .expect("a cache column");
                assert_eq!(cells[at], want, "{csv}");
            }
        }
    }
}
