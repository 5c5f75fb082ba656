//! `riptide-tpcc`: TPC-C (revision 5.11) on Riptide, InnoDB and MyRocks, each engine in its
//! own memory-capped MariaDB server (issue 17). `cargo xtask tpcc` installs MariaDB if
//! needed, builds `ha_riptide.so`, makes a plugin folder holding it and a link to Debian's
//! `ha_rocksdb.so`, and runs this binary. The servers, their budget, durability and cgroup
//! are `riptide-sysbench`'s, shared through `benches/harness` (its crate docs say what each
//! engine gets and why).
//!
//! # What it runs
//!
//! Per engine, each in its own server and data directory (`--order interleaved`, the
//! default: every engine's steps 1 and 2 first, then run 1 of every engine, run 2 of every
//! engine in the reverse order, and so on, each run on a server started again on the
//! engine's data with its own warm-up, so that a machine that slows over the hour slows
//! every engine alike (`schedule.rs`); `--order sequential`: each engine whole, one after
//! the other):
//!
//! 1. **Load** (timed): the nine tables of tpcc-mysql and HammerDB (primary keys, the
//!    customer-by-last-name and orders-by-customer indexes, no foreign keys; `schema.rs`)
//!    created with `ENGINE=<engine>`, then the initial database of clause 4.3.3.1 loaded
//!    by `--load-threads` connections in parallel over warehouses, in multi-row INSERTs
//!    committed every 5,000 rows (`load.rs`).
//! 2. **Checks after the load**: the row count of every table and consistency conditions
//!    1 to 4 (`check.rs`).
//! 3. **Restart** of the server (the harness's rule: the measured phase starts on a fresh
//!    process with cold caches, under the workload cap; interleaved, before every run).
//! 4. **Warm-up** of `--warmup` seconds (discarded), then `--runs` measured runs (one per
//!    server start when interleaved) of
//!    `--duration` seconds. `--terminals` connections, each bound to a home warehouse
//!    (round-robin, as HammerDB assigns them) and a district for Stock-Level, run the five
//!    transactions back to back with no keying or think time, drawn from a shuffled deck of
//!    100 cards (New-Order 45, Payment 43, Order-Status, Delivery, Stock-Level 4 each;
//!    `mix.rs`), in REPEATABLE READ. Each transaction is one `CALL` of a stored procedure
//!    created with the tables (`procedures.rs`), as HammerDB runs TPC-C on MySQL and
//!    MariaDB (so as TideSQL's published figures were measured); `--client-statements`
//!    sends every statement as its own prepared-statement round trip instead (tpcc-mysql's
//!    way, `txn.rs`: about 60 round trips per New-Order with its share of the other four,
//!    the same cost in every engine's server and in the driver). Deadlocks (1213)
//!    and lock wait timeouts (1205) are rolled back and retried with the same input, and
//!    counted; any other error fails the engine's run, naming the transaction and its input.
//!    By default every transaction draws its warehouse uniformly (HammerDB's "use all
//!    warehouses"), so 4 terminals touch the whole database; `--home-warehouses` keeps each
//!    terminal on its home warehouse (tpcc-mysql), which with fewer terminals than
//!    warehouses leaves most of the data cold (and what is touched may fit the cap).
//! 5. **Checks after each run**: conditions 1 to 4, and `sum(D_NEXT_O_ID)` against the
//!    New-Orders the terminals saw committed. Any failure names its condition, warehouse
//!    and district, and makes the exit status non-zero.
//!
//! The inputs follow the specification (NURand with its `A` and `C` values, the run's
//! C_LAST constant at the prescribed distance from the load's; 1% of New-Orders roll back
//! on an unused item; 60% of Payment and Order-Status find the customer by last name),
//! except the two remote shares, which follow issue 17 by default: 15% of order lines from
//! a remote warehouse (specification: 1%) and 1% of Payments for a remote customer
//! (specification: 15%); `--remote-line-pct` and `--remote-payment-pct` set them.
//!
//! # What it reports
//!
//! NOPM (committed New-Orders per minute) and TPM (all five types), median of the runs;
//! p50, p95 and p99 per transaction type; retries per second; load time; engine files on
//! disk after the load and at the end; the server's CPU time (utime + stime of `mariadbd`)
//! and bytes written (`write_bytes` of `/proc/<pid>/io`) per New-Order and per transaction
//! of any type, and bytes read from storage (`read_bytes`) per transaction; the block cache
//! hit rate and the bloom filter checks per transaction and share that ruled the key out,
//! from each engine's status variables (`riptide_bench_harness::CacheCounters`); the cgroup's peak
//! memory and the server's peak resident memory. `results.md`, `results.csv`, `runs.csv`,
//! `latency.csv`, `engines.csv`, `nopm-per-second.csv` and `tpcc-nopm.png` (NOPM per
//! second of each engine's median run) go to `--out-dir`.

mod check;
mod db;
mod load;
mod mix;
mod plans;
mod procedures;
mod profile;
mod random;
mod report;
mod schedule;
mod schema;
mod terminal;
mod txn;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::Parser;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use mysql::prelude::Queryable as _;
use riptide_bench_harness::{
    Bench, CacheCounters, Engine, Lab, ProcessCounters, ServerArgs, command_line, note, out_dir,
    started, steps_bar,
};

use db::Target;
use mix::{Mix, Workload};
use procedures::Protocol;
use random::{Constants, Rand};
use report::{EngineResult, RunResult, Setup};
use schedule::{Order, Step};
use schema::DATABASE;

/// MiB on disk per warehouse right after the load, below the smallest of the three engines:
/// MyRocks' 716 MiB for 10 warehouses and 2,227 MiB for 32 (69.6 per warehouse; InnoDB
/// 2,605, Riptide 2,475 with its WAL; measured on 2026-11-27, benches/RESULTS.md). The
/// default warehouse count makes every engine's data at least 4x the cap.
const MIB_PER_WAREHOUSE: u64 = 64;

/// The cgroup's allowance beyond the budget for TPC-C (`--allowance-mib` overrides it), by
/// the harness's rule (peak overhead measured without a cap, plus 64 MiB, rounded up):
/// MyRocks' server, uncapped at 36 warehouses (3 x 90 s, all warehouses), peaked at
/// 605 MiB resident, 349 over its 256 MiB budget, and was OOM-killed in its third run under
/// sysbench's 320; the others peaked lower (Riptide 357 MiB, InnoDB 328 MiB). 349 + 64 =
/// 413, so 416. Measured with a round trip per statement: with procedures (faster) MyRocks'
/// server reached 675 MiB under this cap by its third run at 42 warehouses and held.
const ALLOWANCE_MIB: u64 = 416;

/// The default warehouse count for a cap of `cap_mib`: 4x the cap at
/// [`MIB_PER_WAREHOUSE`], rounded up.
fn default_warehouses(cap_mib: u64) -> u64 {
    (4 * cap_mib).div_ceil(MIB_PER_WAREHOUSE).max(1)
}

#[derive(Parser, Debug)]
#[command(
    args_override_self = true,
    about = "TPC-C on Riptide, InnoDB and MyRocks, each in its own memory-capped MariaDB \
             server (see the crate docs for what runs and what each engine gets)"
)]
struct Args {
    /// Where the servers' data directories and logs go.
    #[arg(long, default_value = "target/tpcc")]
    work_dir: PathBuf,
    /// Where results.md, the CSV files and the chart go.
    #[arg(long, default_value = "target/tpcc-results")]
    out_dir: PathBuf,
    /// Engines, in run and report order (default riptide,innodb,rocksdb; --quick
    /// riptide,innodb).
    #[arg(long, value_enum, value_delimiter = ',')]
    engines: Vec<Engine>,
    /// Warehouses (default: enough for every engine's data to be at least 4x the cap, at
    /// 64 MiB per warehouse after the load, below the smallest engine's (MyRocks): 42 with the
    /// default 672 MiB cap; --quick 2).
    #[arg(long)]
    warehouses: Option<u64>,
    /// Terminals (client connections).
    #[arg(long, default_value_t = 4)]
    terminals: u64,
    /// Seconds per measured run (default 120; --quick 20).
    #[arg(long)]
    duration: Option<u64>,
    /// Seconds of the discarded warm-up after the restart (default 30; --quick 5).
    #[arg(long)]
    warmup: Option<u64>,
    /// Measured runs; the median is reported (default 3; --quick 1).
    #[arg(long)]
    runs: Option<u64>,
    /// Loader connections (jobs: the items, then one per warehouse).
    #[arg(long, default_value_t = 2)]
    load_threads: usize,
    /// Load Riptide the ordinary way, as the other engines (5,000 rows per transaction).
    /// By default Riptide's loader sessions set `riptide_bulk_load=1` and commit once per
    /// job (the items, or one warehouse), as a DBA loads in bulk: each job's rows fill key
    /// ranges no other job touches, so they are ingested straight into the last level.
    #[arg(long)]
    no_bulk_load: bool,
    /// Percent of order lines supplied by a remote warehouse (issue 17: 15; TPC-C: 1).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(0..=100))]
    remote_line_pct: u32,
    /// Percent of Payments for a customer of a remote warehouse (issue 17: 1; TPC-C: 15).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=100))]
    remote_payment_pct: u32,
    /// Each terminal stays on its home warehouse (tpcc-mysql's way). By default every
    /// transaction picks its warehouse uniformly (HammerDB's "use all warehouses"), so that
    /// fewer terminals than warehouses still touch all the data: with 4 terminals on their
    /// homes, 28 of 32 warehouses stay cold and the run is not beyond memory.
    #[arg(long, conflicts_with = "all_warehouses")]
    home_warehouses: bool,
    /// Every transaction on a uniformly drawn warehouse (the default; kept for scripts).
    #[arg(long)]
    all_warehouses: bool,
    /// Send each statement of a transaction as its own round trip (tpcc-mysql's way). By
    /// default each transaction is one `CALL` of a stored procedure, as HammerDB runs TPC-C
    /// on MySQL and MariaDB (and as the published TideSQL figures were measured).
    #[arg(long)]
    client_statements: bool,
    /// Run only this transaction type (new-order, payment, order-status, delivery,
    /// stock-level), warm-up included: a diagnostic that measures one type's server CPU and
    /// writes per transaction for each engine. Not TPC-C's mix, so not a TPC-C result.
    #[arg(long, value_enum)]
    only: Option<mix::Kind>,
    /// Profile each engine's server with `perf record` for this many seconds in the middle
    /// of every measured run, and report its CPU per transaction by handler entry point
    /// (needs `perf`; a diagnostic: perf's sampling costs the server a few percent).
    #[arg(long)]
    perf_seconds: Option<u64>,
    /// The engines' order: `interleaved` loads every engine first, then runs run 1 of each,
    /// run 2 of each in the reverse order, and so on, each run on a freshly started server
    /// with its own warm-up (so a machine that slows over the hour slows every engine
    /// alike); `sequential` runs each engine whole (load, restart, warm-up, all runs)
    /// before the next.
    #[arg(long, value_enum, default_value_t = Order::Interleaved)]
    order: Order,
    /// Seed of all random data and inputs.
    #[arg(long, default_value_t = 17)]
    seed: u64,
    /// A small run (2 warehouses, 5 s warm-up, one 20 s run, Riptide and InnoDB): a smoke
    /// test of the whole pipeline and of the consistency checks, not a measurement.
    #[arg(long)]
    quick: bool,
    /// The servers: plugins, budget, cap, durability.
    #[command(flatten)]
    server: ServerArgs,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("riptide-tpcc: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The resolved parameters of this invocation.
struct Ctx {
    setup: Setup,
    lab: Lab,
}

/// Runs everything; Ok(false) when an engine failed or a consistency check did.
fn real_main() -> Result<bool> {
    let mut args = Args::parse();
    args.server.default_allowance(ALLOWANCE_MIB);
    let q = args.quick;
    let engines = if !args.engines.is_empty() {
        args.engines.clone()
    } else if q {
        vec![Engine::Riptide, Engine::Innodb]
    } else {
        vec![Engine::Riptide, Engine::Innodb, Engine::Rocksdb]
    };
    if args.terminals == 0 {
        bail!("--terminals must be at least 1");
    }
    let lab = args.server.lab(&args.work_dir, &engines, "tpcc")?;
    let warehouses = args.warehouses.unwrap_or(if q {
        2
    } else {
        default_warehouses(args.server.cap_mib())
    });
    if warehouses == 0 || warehouses > i16::MAX as u64 {
        bail!("--warehouses must be within 1..=32767 (a SMALLINT column)");
    }
    let setup = Setup {
        warehouses,
        terminals: args.terminals,
        duration: args.duration.unwrap_or(if q { 20 } else { 120 }).max(1),
        warmup: args.warmup.unwrap_or(if q { 5 } else { 30 }),
        runs: args.runs.unwrap_or(if q { 1 } else { 3 }).max(1),
        load_threads: args.load_threads.max(1),
        bulk_load: !args.no_bulk_load,
        all_warehouses: !args.home_warehouses,
        protocol: if args.client_statements {
            Protocol::Statements
        } else {
            Protocol::Procedures
        },
        mix: Mix {
            remote_line_pct: args.remote_line_pct,
            remote_payment_pct: args.remote_payment_pct,
            only: args.only,
            ..Mix::default()
        },
        conditions: lab.conditions.clone(),
        quick: q,
        seed: args.seed,
        order: args.order,
        perf_seconds: args.perf_seconds.filter(|&n| n > 0),
        started: started(),
        command: command_line(),
    };
    let ctx = Ctx { setup, lab };
    let out_dir = out_dir(&args.out_dir)?;

    let s = &ctx.setup;
    let steps = schedule::steps(engines.len(), s.runs, s.order);
    let mp = MultiProgress::new();
    let pb = mp.add(steps_bar(schedule::progress_len(&steps)));
    note(
        &pb,
        format!(
            "tpcc: {} warehouses, {} terminals, {} s runs ({} s warm-up, {} runs, {}), {}",
            s.warehouses,
            s.terminals,
            s.duration,
            s.warmup,
            s.runs,
            s.order.name(),
            s.conditions.brief()
        ),
    );
    let mut rand = Rand::new(s.seed);
    let load_constants = Constants::load(&mut rand);
    let workload = Workload {
        warehouses: s.warehouses,
        mix: s.mix,
        constants: Constants::run(&load_constants, &mut rand),
        all_warehouses: s.all_warehouses,
        protocol: s.protocol,
    };
    let mut results: Vec<EngineResult> = engines.iter().map(|&e| EngineResult::new(e)).collect();
    for step in &steps {
        let i = match *step {
            Step::Load(i) | Step::Runs { engine: i, .. } => i,
        };
        let Some(res) = results.get_mut(i) else {
            continue;
        };
        let engine = res.engine();
        if res.record.error.is_some() {
            pb.inc(schedule::progress_len(std::slice::from_ref(step)));
            continue;
        }
        let mut footprint = std::mem::take(&mut res.record.footprint);
        let outcome = match *step {
            Step::Load(_) => ctx.lab.load(engine, &pb, &mut footprint, |bench| {
                load_session(s, bench, &mp, &pb, res, &load_constants)
            }),
            Step::Runs { first, last, .. } => {
                ctx.lab
                    .resume(engine, last == s.runs, &pb, &mut footprint, |bench| {
                        runs_session(s, bench, &mp, &pb, res, &workload, first..=last)
                    })
            }
        };
        res.record.footprint = footprint;
        if let Err(e) = outcome {
            note(&pb, format!("{} FAILED: {e:#}", engine.display()));
            res.record.error = Some(format!("{e:#}"));
        }
        write_outputs(s, &results, &out_dir)?;
    }
    for r in &results {
        for f in r.consistency_failures() {
            note(&pb, format!("{}: {f}", r.engine().display()));
        }
    }
    pb.finish_and_clear();
    println!("{}", report::markdown(&ctx.setup, &results));
    eprintln!(
        "results: {} (results.md, results.csv, runs.csv, latency.csv, engines.csv, \
         nopm-per-second.csv, tpcc-nopm.png); server logs in {}",
        out_dir.display(),
        ctx.lab.work_dir.display()
    );
    let mut ok = true;
    for r in &results {
        let failures = r.consistency_failures();
        if r.record.error.is_some() || !failures.is_empty() {
            ok = false;
            eprintln!(
                "riptide-tpcc: {} FAILED: {}",
                r.engine().display(),
                r.record
                    .error
                    .iter()
                    .cloned()
                    .chain(failures)
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
    }
    Ok(ok)
}

fn write_outputs(setup: &Setup, results: &[EngineResult], out: &Path) -> Result<()> {
    let write = |name: &str, text: String| -> Result<()> {
        let p = out.join(name);
        fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    };
    let records: Vec<&riptide_bench_harness::EngineRecord> =
        results.iter().map(|r| &r.record).collect();
    write("results.md", report::markdown(setup, results))?;
    write("results.csv", report::results_csv(setup, results))?;
    write("runs.csv", report::runs_csv(results))?;
    write("latency.csv", report::latency_csv(results))?;
    write(
        "engines.csv",
        riptide_bench_harness::engines_csv(&records, setup.conditions.cap),
    )?;
    write("nopm-per-second.csv", report::per_second_csv(results))?;
    let title = format!(
        "TPC-C NOPM per second (median run), {} warehouses, {} terminals, {} MiB per engine{}{}",
        setup.warehouses,
        setup.terminals,
        setup.conditions.budget.total_mib,
        setup.conditions.chart_suffix(),
        if setup.quick { " (quick)" } else { "" }
    );
    riptide_chart::lines(
        &out.join("tpcc-nopm.png"),
        &title,
        "second of the run",
        "New-Orders per minute",
        &report::chart_series(results),
    )
}

fn phase_bar(mp: &MultiProgress, len: u64, unit: &str) -> ProgressBar {
    let pb = mp.add(ProgressBar::new(len));
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}  {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb
}

/// One engine's first session: its tables created and loaded (timed), the load checked.
fn load_session(
    s: &Setup,
    bench: &mut Bench<'_>,
    mp: &MultiProgress,
    pb: &ProgressBar,
    res: &mut EngineResult,
    load_constants: &Constants,
) -> Result<()> {
    let engine = bench.engine;
    let name = engine.display();
    res.record.settings = bench.settings()?;
    bench.server.sql(&format!("CREATE DATABASE {DATABASE}"))?;
    let target = Target::new(&bench.paths.socket(), Some(DATABASE));

    pb.set_message(format!("{name}: loading {} warehouses", s.warehouses));
    let begun = Instant::now();
    let mut conn = target.connect()?;
    for sql in schema::create_tables(engine.name()) {
        conn.query_drop(&sql).with_context(|| format!("`{sql}`"))?;
    }
    if s.protocol == Protocol::Procedures {
        procedures::create(&mut conn)?;
    }
    let rows = phase_bar(mp, schema::expected_rows(s.warehouses), "rows");
    let bulk = s.bulk_load && engine == Engine::Riptide;
    let loaded = load::load(
        &target,
        bulk,
        s.warehouses,
        s.load_threads,
        s.seed,
        load_constants,
        &rows,
    );
    rows.finish_and_clear();
    loaded.map_err(|e| bench.explain(e))?;
    let load_time = begun.elapsed();
    if let Some(status) = bench.server.exited() {
        bail!("the server died during the load ({status})");
    }
    bench.loaded(load_time, DATABASE);
    let loaded_bytes = riptide_bench_harness::engine_bytes(engine, &bench.paths.data(), DATABASE);
    note(
        pb,
        format!(
            "{name}: loaded {} warehouses in {:.1} s; engine files {:.1} MiB{}",
            s.warehouses,
            load_time.as_secs_f64(),
            loaded_bytes as f64 / 1048576.0,
            s.conditions.of_cap(loaded_bytes)
        ),
    );
    pb.set_message(format!("{name}: checking the load"));
    let (counts, aggregates) = bench
        .unmeasured(|| Ok((check::row_counts(&mut conn)?, check::read(&mut conn)?)))
        .map_err(|e| bench.explain(e))?;
    let mut failures = check::count_failures(&counts, s.warehouses);
    failures.extend(aggregates.failures().iter().map(|f| f.to_string()));
    res.load_failures = Some(failures);
    pb.inc(1);
    Ok(())
}

/// A later session of one engine, on a server started on its loaded data: the warm-up,
/// EXPLAIN of every statement (first session only), then the measured runs `runs`; the
/// engine's files are measured after the last run of the invocation.
fn runs_session(
    s: &Setup,
    bench: &mut Bench<'_>,
    mp: &MultiProgress,
    pb: &ProgressBar,
    res: &mut EngineResult,
    workload: &Workload,
    runs: std::ops::RangeInclusive<u64>,
) -> Result<()> {
    let name = bench.engine.display();
    let target = Target::new(&bench.paths.socket(), Some(DATABASE));
    pb.set_message(format!("{name}: warm-up"));
    measure(bench, &target, workload, s, s.warmup, 0, mp)?;
    if res.plans.is_empty() {
        pb.set_message(format!("{name}: EXPLAIN of every statement"));
        match target
            .connect()
            .and_then(|mut c| plans::explain_all(&mut c))
        {
            Ok(p) => res.plans = p,
            Err(e) => note(pb, format!("{name}: EXPLAIN failed: {e:#}")),
        }
    }
    pb.inc(1);
    let last = *runs.end();
    for i in runs {
        pb.set_message(format!("{name}: run {i}/{}", s.runs));
        let r = measure(bench, &target, workload, s, s.duration, i, mp)?;
        note(
            pb,
            format!(
                "{name} run {i}: {:.0} NOPM, {:.0} TPM, New-Order p95 {:.1} ms, {:.1} retries/s, \
                 consistency {}",
                r.nopm(),
                r.tpm(),
                r.tally
                    .kind(mix::Kind::NewOrder)
                    .latency_ms(0.95)
                    .unwrap_or(0.0),
                r.retries_per_s(),
                if r.failures.is_empty() {
                    "passed".to_string()
                } else {
                    format!("FAILED ({})", r.failures.len())
                }
            ),
        );
        res.runs.push(r);
        bench.sample_rss();
        pb.inc(1);
    }
    if last == s.runs {
        bench.finished(DATABASE);
    }
    Ok(())
}

/// One run of `seconds` (run 0: the warm-up, whose consistency is not checked), with the
/// server's CPU and writes over it and the checks after it.
fn measure(
    bench: &mut Bench<'_>,
    target: &Target,
    w: &Workload,
    s: &Setup,
    seconds: u64,
    run: u64,
    mp: &MultiProgress,
) -> Result<RunResult> {
    let mut conn = target.connect()?;
    let next_before = check::next_o_id_sum(&mut conn)?;
    let before = bench.server.counters();
    let cache_before = CacheCounters::read(&bench.server, bench.engine);
    let me = std::process::id();
    let driver_before = ProcessCounters::read(me);
    let bar = phase_bar(mp, seconds, "s");
    let seed = s.seed.wrapping_add(run.wrapping_mul(1_000_003));
    // `--perf-seconds`: the middle of each measured run.
    let recording = match (s.perf_seconds, bench.server.pid()) {
        (Some(n), Some(pid)) if run > 0 => {
            let n = n.min(seconds);
            let data = bench
                .paths
                .data()
                .with_file_name(format!("perf-run{run}.data"));
            let delay = Duration::from_secs((seconds - n) / 2);
            Some(profile::Recording::start(pid, delay, n, &data))
        }
        _ => None,
    };
    let outcome = terminal::run(target, w, s.terminals, seconds, seed, &bar);
    bar.finish_and_clear();
    let profile = recording.and_then(|r| match r.finish() {
        Ok(p) => Some(p),
        Err(e) => {
            let engine = bench.engine.display();
            mp.suspend(|| eprintln!("{engine}: no profile of run {run}: {e:#}"));
            None
        }
    });
    let (tally, elapsed) = outcome.map_err(|e| bench.explain(e))?;
    let after = bench.server.counters();
    let server = before.zip(after).map(|(b, a)| a.since(&b));
    let cache = match (
        CacheCounters::read(&bench.server, bench.engine),
        cache_before,
    ) {
        (Ok(after), Ok(before)) => Some(after.since(&before)),
        (Err(e), _) | (_, Err(e)) => {
            let engine = bench.engine.display();
            mp.suspend(|| eprintln!("{engine}: could not read the cache counters: {e:#}"));
            None
        }
    };
    let driver = driver_before
        .zip(ProcessCounters::read(me))
        .map(|(b, a)| a.since(&b));
    let mut failures = Vec::new();
    if run > 0 {
        let next_after = check::next_o_id_sum(&mut conn)?;
        let grew = next_after.saturating_sub(next_before);
        if grew != tally.acknowledged_new_orders {
            failures.push(format!(
                "sum(D_NEXT_O_ID) grew by {grew} during the run, but the terminals saw {} \
                 New-Orders commit",
                tally.acknowledged_new_orders
            ));
        }
        let aggregates = bench
            .unmeasured(|| check::read(&mut conn))
            .map_err(|e| bench.explain(e))?;
        failures.extend(aggregates.failures().iter().map(|f| f.to_string()));
    }
    Ok(RunResult {
        seconds: elapsed.as_secs_f64(),
        tally,
        server,
        driver,
        cache,
        failures,
        profile,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_warehouses_make_4x_the_cap() {
        assert_eq!(default_warehouses(576), 36);
        assert_eq!(default_warehouses(256 + ALLOWANCE_MIB), 42);
        assert_eq!(default_warehouses(1), 1);
        assert!(default_warehouses(576) * MIB_PER_WAREHOUSE >= 4 * 576);
    }

    #[test]
    fn arguments_parse() {
        let a = Args::try_parse_from([
            "riptide-tpcc",
            "--plugin-dir",
            "p",
            "--engines",
            "riptide,myrocks",
            "--quick",
        ])
        .unwrap();
        assert_eq!(a.engines, vec![Engine::Riptide, Engine::Rocksdb]);
        assert!(
            Args::try_parse_from(["x", "--plugin-dir", "p", "--remote-line-pct", "101"]).is_err()
        );
    }
}
