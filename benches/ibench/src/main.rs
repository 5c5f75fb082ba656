//! `riptide-ibench`: the insert benchmark, as the field runs it on MySQL-family engines, on
//! Riptide, InnoDB and MyRocks, each in its own memory-capped MariaDB server (issue 19,
//! `cargo xtask ibench`).
//!
//! # The servers
//!
//! The harness of `benches/harness` (`riptide-bench-harness`), shared with `riptide-sysbench`
//! and `riptide-tpcc`: the same budget per engine, the same durability (`--durable`: a log
//! sync at every commit), the same memory cgroup and allowance rule, one fresh server per
//! engine; its crate docs say what each engine gets.
//!
//! # The phases
//!
//! `--clients` clients (default 4), each with its own table `piN` and connection, so no
//! client waits for another's row locks. The table is the insert benchmark's: a `BIGINT`
//! primary key `transactionid`, a `DATETIME`, three `INT` columns (cash register, customer,
//! product), a price (`DECIMAL(10,2)` here: exact comparisons), and a `VARCHAR` of 10 to 20
//! random letters. In order:
//!
//! 1. **l.i0**: each client inserts `--rows` / `--clients` rows into its table in primary-key
//!    order, 100 rows per `INSERT`, one `INSERT` per transaction. No secondary index yet.
//! 2. **l.x**: each client adds the three secondary indexes to its table with one `ALTER
//!    TABLE` (`marketsegment (price, customerid)`, `registersegment (cashregisterid, price,
//!    customerid)`, `pdc (price, dateandtime, customerid)`), all clients at once.
//!
//!    l.i0 and l.x are the load. Then the server is restarted (cold caches, the workload cap,
//!    as in the other benchmarks).
//! 3. **l.i1**: for `--write-seconds`, each client runs transactions that insert 50 rows at
//!    the end of its table and delete the 50 oldest (a range delete by primary key): the
//!    table keeps its size while every index takes inserts and deletes.
//! 4. **l.i2**: the same with 5 rows per transaction.
//! 5. **qr100**: for `--query-seconds`, each client runs range queries on its table as fast
//!    as it can: ten entries of one of the secondary indexes (chosen at random) from a
//!    random start, read from the index alone. Meanwhile a background writer per table
//!    inserts 100 rows a second and deletes as many.
//! 6. **qp100**: the same with point queries by primary key (of rows that exist: a miss is
//!    a wrong result and fails the run).
//!
//! At the end the rows of every table are counted by primary key and by each secondary
//! index; all must equal the rows the driver left, or the run fails.
//!
//! # Reported
//!
//! Per phase and engine: rows (or queries) per second, the server's CPU microseconds, KiB
//! written and KiB read per row (or query), the engine's files after the phase, and each
//! figure's ratio, Riptide over each peer. The load time (l.i0 + l.x), sizes and memory as in
//! the other benchmarks. Files: `results.md`, `results.csv`, `per-second.csv`,
//! `engines.csv`, `ibench-rates.png` and `ibench-per-second.png` in `--out-dir`.

mod phases;
mod report;
mod rows;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::ProgressBar;
use mysql::prelude::Queryable as _;
use riptide_bench_harness::{
    Bench, Engine, Lab, ServerArgs, command_line, engine_bytes, mib, note, num, out_dir, started,
    steps_bar,
};

use phases::{Ctx, Outcome, Queries, Tables, Target};
use report::{EngineResult, PhaseResult, Setup};

/// The benchmark's database.
const DATABASE: &str = "ib";
/// Rows per `INSERT` (and transaction) of l.i0.
const LOAD_BATCH: u64 = 100;
/// Rows per transaction of l.i1 and l.i2.
const I1_BATCH: u64 = 50;
const I2_BATCH: u64 = 5;

#[derive(Parser, Debug)]
#[command(
    args_override_self = true,
    about = "The insert benchmark (l.i0, l.x, l.i1, l.i2, qr100, qp100) on Riptide, InnoDB \
             and MyRocks, each in its own memory-capped MariaDB server (see the crate docs \
             for the phases and what each engine gets)"
)]
struct Args {
    /// Where the servers' data directories and logs go.
    #[arg(long, default_value = "target/ibench")]
    work_dir: PathBuf,
    /// Where results.md, the CSV files and the charts go.
    #[arg(long, default_value = "target/ibench-results")]
    out_dir: PathBuf,
    /// Engines, in run and report order (default riptide,innodb,rocksdb; --quick
    /// riptide,innodb).
    #[arg(long, value_enum, value_delimiter = ',')]
    engines: Vec<Engine>,
    /// Clients, each with its own table.
    #[arg(long, default_value_t = 4)]
    clients: usize,
    /// Rows l.i0 loads, over all tables (default 30,000,000: about 5 GiB in InnoDB with
    /// its indexes, 9x the default cap; --quick 40,000).
    #[arg(long)]
    rows: Option<u64>,
    /// Seconds of l.i1 and of l.i2 (default 300; --quick 5).
    #[arg(long)]
    write_seconds: Option<u64>,
    /// Seconds of qr100 and of qp100 (default 300; --quick 5).
    #[arg(long)]
    query_seconds: Option<u64>,
    /// Seed of the generated rows and queries (the same for every engine).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A small run (40,000 rows, 5 s phases, Riptide and InnoDB): a smoke test of the whole
    /// pipeline, not a measurement.
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
            eprintln!("riptide-ibench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs everything; Ok(false) when an engine failed (its error is in the report).
fn real_main() -> Result<bool> {
    let args = Args::parse();
    let q = args.quick;
    let engines = if args.engines.is_empty() {
        if q {
            vec![Engine::Riptide, Engine::Innodb]
        } else {
            vec![Engine::Riptide, Engine::Innodb, Engine::Rocksdb]
        }
    } else {
        args.engines.clone()
    };
    let clients = args.clients.max(1);
    let rows = args.rows.unwrap_or(if q { 40_000 } else { 30_000_000 });
    let lab = args.server.lab(&args.work_dir, &engines, "ibench")?;
    let setup = Setup {
        clients,
        rows_per_table: (rows / clients as u64).max(1),
        load_batch: LOAD_BATCH,
        write_seconds: args.write_seconds.unwrap_or(if q { 5 } else { 300 }),
        query_seconds: args.query_seconds.unwrap_or(if q { 5 } else { 300 }),
        seed: args.seed,
        conditions: lab.conditions.clone(),
        quick: q,
        started: started(),
        command: command_line(),
    };
    let out = out_dir(&args.out_dir)?;
    let pb = steps_bar(engines.len() as u64 * report::PHASES.len() as u64);
    note(
        &pb,
        format!(
            "ibench: {} clients x {} rows, l.i1/l.i2 {} s, qr100/qp100 {} s, {}",
            setup.clients,
            setup.rows_per_table,
            setup.write_seconds,
            setup.query_seconds,
            setup.conditions.brief()
        ),
    );
    let mut results: Vec<EngineResult> = Vec::new();
    for &engine in &engines {
        let mut res = EngineResult::new(engine);
        if let Err(e) = measure(&setup, &lab, engine, &pb, &mut res) {
            note(&pb, format!("{} FAILED: {e:#}", engine.display()));
            res.record.error = Some(format!("{e:#}"));
        }
        results.push(res);
        write_outputs(&setup, &results, &out)?;
    }
    pb.finish_and_clear();
    println!("{}", report::markdown(&setup, &results));
    eprintln!(
        "results: {} (results.md, results.csv, per-second.csv, engines.csv, ibench-rates.png, \
         ibench-per-second.png); server logs in {}",
        out.display(),
        lab.work_dir.display()
    );
    Ok(results.iter().all(|r| r.record.error.is_none()))
}

fn write_outputs(setup: &Setup, results: &[EngineResult], out: &Path) -> Result<()> {
    let write = |name: &str, text: String| -> Result<()> {
        let p = out.join(name);
        fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    };
    let records: Vec<&riptide_bench_harness::EngineRecord> =
        results.iter().map(|r| &r.record).collect();
    write("results.md", report::markdown(setup, results))?;
    write("results.csv", report::results_csv(results))?;
    write("per-second.csv", report::per_second_csv(results))?;
    write(
        "engines.csv",
        riptide_bench_harness::engines_csv(&records, setup.conditions.cap),
    )?;
    let base = if results.iter().any(|r| r.engine() == Engine::Innodb) {
        Engine::Innodb.display()
    } else {
        results.first().map_or("", |r| r.engine().display())
    };
    riptide_chart::relative_bars(
        &out.join("ibench-rates.png"),
        &report::chart_title(setup, "Insert benchmark, rows or queries per second"),
        "rows or queries per second",
        base,
        &report::rate_groups(results),
    )?;
    riptide_chart::lines(
        &out.join("ibench-per-second.png"),
        &report::chart_title(setup, "Insert benchmark l.i0 and l.i1, rows per second"),
        "second of the phase",
        "rows per second",
        &report::per_second_series(results),
    )
}

/// One engine: fresh data directory and cgroup, server, phases, sizes, shutdown.
fn measure(
    s: &Setup,
    lab: &Lab,
    engine: Engine,
    pb: &ProgressBar,
    res: &mut EngineResult,
) -> Result<()> {
    let mut footprint = std::mem::take(&mut res.record.footprint);
    let outcome = lab.run(engine, pb, &mut footprint, |bench| serve(s, bench, pb, res));
    res.record.footprint = footprint;
    outcome
}

/// Runs `f` (one phase) and records it with the server's CPU and I/O over it and the
/// engine's files after it.
fn phase(
    bench: &mut Bench<'_>,
    res: &mut EngineResult,
    pb: &ProgressBar,
    name: &'static str,
    f: impl FnOnce() -> Result<Outcome>,
) -> Result<()> {
    let engine = bench.engine;
    pb.set_message(format!("{}: {name}", engine.display()));
    let before = bench.server.counters();
    let outcome = f().map_err(|e| bench.explain(e))?;
    let server = bench
        .server
        .counters()
        .zip(before)
        .map(|(after, before)| after.since(&before));
    let p = PhaseResult {
        name,
        outcome,
        server,
        engine_bytes: engine_bytes(engine, &bench.paths.data(), DATABASE),
    };
    note(
        pb,
        format!(
            "{} {name}: {} {}/s in {:.1} s, {} us CPU, {} KiB written, {} KiB read per op; \
             engine files {}",
            engine.display(),
            num(p.rate()),
            if name.starts_with('q') {
                "queries"
            } else {
                "rows"
            },
            p.outcome.seconds,
            num(p.cpu_us()),
            num(p.kib_written()),
            num(p.kib_read()),
            mib(p.engine_bytes)
        ),
    );
    res.phases.push(p);
    bench.sample_rss();
    pb.inc(1);
    Ok(())
}

fn serve(s: &Setup, bench: &mut Bench<'_>, pb: &ProgressBar, res: &mut EngineResult) -> Result<()> {
    res.record.settings = bench.settings()?;
    bench.server.sql(&format!("CREATE DATABASE {DATABASE}"))?;
    for c in 0..s.clients {
        bench.server.sql(&format!(
            "USE {DATABASE}; {}",
            rows::create_table(c, bench.engine.name())
        ))?;
    }
    let tables = Tables::new(s.clients);
    // The socket stays the same over the restart.
    let target = Target {
        socket: bench.paths.socket(),
        database: DATABASE.to_string(),
    };
    let ctx = Ctx {
        target: &target,
        clients: s.clients,
        seed: s.seed,
        tables: &tables,
        pb,
    };
    phase(bench, res, pb, "l.i0", || {
        phases::load(&ctx, s.rows_per_table, s.load_batch)
    })?;
    phase(bench, res, pb, "l.x", || phases::create_indexes(&ctx))?;
    let load: f64 = res.phases.iter().map(|p| p.outcome.seconds).sum();
    bench.loaded(Duration::from_secs_f64(load), DATABASE);
    bench.restart()?;
    phase(bench, res, pb, "l.i1", || {
        phases::insert_delete(&ctx, "l.i1", I1_BATCH, s.write_seconds)
    })?;
    phase(bench, res, pb, "l.i2", || {
        phases::insert_delete(&ctx, "l.i2", I2_BATCH, s.write_seconds)
    })?;
    phase(bench, res, pb, "qr100", || {
        phases::query(&ctx, "qr100", Queries::Range, s.query_seconds)
    })?;
    phase(bench, res, pb, "qp100", || {
        phases::query(&ctx, "qp100", Queries::Point, s.query_seconds)
    })?;
    let expected = tables.rows();
    let counts = bench.unmeasured(|| count_rows(&target, s.clients))?;
    res.final_counts = Some(counts.clone());
    let (by_pk, by_index) = &counts;
    if *by_pk != expected || by_index.iter().any(|n| n != by_pk) {
        bail!(
            "rows at the end: {by_pk} by primary key, {by_index:?} by the secondary indexes; \
             the driver left {expected} (a wrong result)"
        );
    }
    bench.finished(DATABASE);
    Ok(())
}

/// Rows of all tables: by primary key, and by each secondary index.
fn count_rows(target: &Target, clients: usize) -> Result<(u64, Vec<u64>)> {
    let mut conn = target.connect()?;
    let mut count = |index: &str| -> Result<u64> {
        let mut sum = 0;
        for c in 0..clients {
            let sql = format!(
                "SELECT COUNT(*) FROM {} FORCE INDEX ({index})",
                rows::table(c)
            );
            let n: Option<u64> = conn.query_first(&sql).with_context(|| format!("`{sql}`"))?;
            sum += n.with_context(|| format!("`{sql}` returned nothing"))?;
        }
        Ok(sum)
    };
    let by_pk = count("PRIMARY")?;
    let by_index = rows::SECONDARY_INDEXES
        .iter()
        .map(|(name, _)| count(name))
        .collect::<Result<Vec<_>>>()?;
    Ok((by_pk, by_index))
}
