//! `riptide-sysbench`: the MariaDB-level comparison of Riptide, InnoDB and MyRocks with
//! Debian's sysbench (issue 7). `cargo xtask sysbench` installs MariaDB if needed, builds
//! `ha_riptide.so`, makes a plugin folder holding it and a link to Debian's `ha_rocksdb.so`,
//! and runs this binary; everything else (servers, cgroup, sysbench, report, chart) is here,
//! so the whole measurement is one program whose `--help` documents it.
//!
//! # What each engine gets, the memory cap
//!
//! The servers, their budget and durability settings, the cgroup and its allowance rule,
//! and the restart after the load are the harness's (`benches/harness`,
//! `riptide-bench-harness`, shared with `riptide-tpcc`); its crate docs say what each engine
//! gets and why. The defaults: 256 MiB budget per engine (`--budget-mib`; LSM engines
//! 64 MiB of it as memtables, `--write-buffer-mib`), cap = budget + 320 MiB
//! (`--allowance-mib`), log synced about once a second (`--durable`: at every commit).
//!
//! # The runs
//!
//! Per engine: `sysbench oltp_common prepare` (timed: the load time; it fills the tables,
//! then builds the secondary index with `CREATE INDEX`; Riptide's server has
//! `riptide_bulk_load` on meanwhile unless `--no-bulk-load`), data size on disk, then a restart
//! of the server, so the workloads run on a fresh process with cold caches (harness docs).
//! Then per workload (`oltp_point_select`, `oltp_read_only`, `oltp_read_write`,
//! `oltp_update_index`, `oltp_update_non_index`, `oltp_insert`, `oltp_delete`, in that
//! order: the writing ones last) a warm-up run that is discarded and `--runs` measured
//! runs. `--rand-type=uniform` (sysbench's default `special` sends most requests to 1% of
//! the rows, which would fit in any cache). p95 and p99 come from sysbench's histogram
//! (`sysbench.rs`). Reported: median TPS, p95/p99, the worst second, Riptide's ratio to
//! each peer, the load time, the data size after the load and at the end, the cgroup's
//! peak memory and anonymous memory during the measured phase, the restart time.
//!
//! Per transaction, for every engine (issue 18: how the field compares engines, CPU/query,
//! rKB/query, wKB/query): the server's CPU in microseconds (utime + stime of mariadbd over
//! the run), the KiB it read and wrote (`read_bytes` / `write_bytes` of `/proc/<pid>/io`:
//! storage I/O, not page-cache hits), each divided by the run's transactions; the block cache
//! hit rate (InnoDB: its buffer pool's) and, for the LSM engines, the bloom filter checks
//! per transaction and the share that ruled the key out, from the status variables read
//! around each run (`riptide_bench_harness::CacheCounters`); and the space amplification
//! after the load and at the end: engine files over the logical data (196 bytes a row:
//! id, k, c and pad, plus the k index entry). All of it goes into
//! `results.md`, `results.csv`, `runs.csv`, `engines.csv`, `sysbench-tps.png` and
//! `sysbench-cpu.png` (server CPU per transaction) in `--out-dir`.

mod report;
mod sysbench;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::ProgressBar;
use riptide_bench_harness::{
    Bench, CacheCounters, Engine, Lab, ServerArgs, command_line, engine_bytes, note, num, out_dir,
    started, steps_bar, tail,
};

use report::{Cell, EngineResult, Setup};

/// The default workload set, in run order.
const WORKLOADS: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
];

#[derive(Parser, Debug)]
#[command(
    args_override_self = true,
    about = "sysbench OLTP workloads on Riptide, InnoDB and MyRocks, each in its own \
             memory-capped MariaDB server (see the crate docs for what each engine gets)"
)]
struct Args {
    /// Where the servers' data directories and logs go.
    #[arg(long, default_value = "target/sysbench")]
    work_dir: PathBuf,
    /// Where results.md, the CSV files and the chart go.
    #[arg(long, default_value = "target/sysbench-results")]
    out_dir: PathBuf,
    /// Engines, in run and report order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "riptide,innodb,rocksdb"
    )]
    engines: Vec<Engine>,
    /// sysbench workloads (default: the seven OLTP scripts listed in the crate docs).
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Tables (default 10; --quick 2).
    #[arg(long)]
    tables: Option<u64>,
    /// Rows per table (default 1,000,000; --quick 20,000).
    #[arg(long)]
    table_size: Option<u64>,
    /// Client threads.
    #[arg(long, default_value_t = 4)]
    threads: u64,
    /// Seconds per measured run (default 60; --quick 10).
    #[arg(long)]
    time: Option<u64>,
    /// Seconds of the discarded warm-up before each workload (default 30; --quick 5).
    #[arg(long)]
    warmup: Option<u64>,
    /// Measured runs per workload; the median is reported (default 3; --quick 1).
    #[arg(long)]
    runs: Option<u64>,
    /// A small run (2 tables x 20,000 rows, 5 s warm-up, one 10 s run per workload): a smoke
    /// test of the whole pipeline, not a measurement.
    #[arg(long)]
    quick: bool,
    /// Load Riptide the ordinary way. By default its server runs sysbench's `prepare` with
    /// `SET GLOBAL riptide_bulk_load=1`, as a DBA loads in bulk: each sysbench connection's
    /// INSERTs (autocommit) form one bulk load, which the table's `CREATE INDEX` ends, so
    /// the rows appended to each table are ingested straight into the last level.
    #[arg(long)]
    no_bulk_load: bool,
    /// sysbench `--rand-type` (uniform, gaussian, special, pareto).
    #[arg(long, default_value = "uniform")]
    rand_type: String,
    /// The servers: plugins, budget, cap, durability.
    #[command(flatten)]
    server: ServerArgs,
}

/// The resolved parameters of this invocation.
struct Ctx {
    setup: Setup,
    lab: Lab,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("riptide-sysbench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs everything; Ok(false) when an engine failed (its error is in the report).
fn real_main() -> Result<bool> {
    let args = Args::parse();
    let q = args.quick;
    let workloads: Vec<String> = if args.workloads.is_empty() {
        WORKLOADS.iter().map(|w| (*w).to_string()).collect()
    } else {
        args.workloads.clone()
    };
    if !sysbench::available() {
        bail!("sysbench is not installed (`cargo xtask setup` installs it)");
    }
    sysbench::check_workloads(&workloads)?;
    let lab = args.server.lab(&args.work_dir, &args.engines, "sysbench")?;
    let setup = Setup {
        tables: args.tables.unwrap_or(if q { 2 } else { 10 }),
        table_size: args
            .table_size
            .unwrap_or(if q { 20_000 } else { 1_000_000 }),
        threads: args.threads.max(1),
        time: args.time.unwrap_or(if q { 10 } else { 60 }),
        warmup: args.warmup.unwrap_or(if q { 5 } else { 30 }),
        runs: args.runs.unwrap_or(if q { 1 } else { 3 }).max(1),
        conditions: lab.conditions.clone(),
        rand_type: args.rand_type.clone(),
        bulk_load: !args.no_bulk_load,
        quick: q,
        workloads,
        started: started(),
        command: command_line(),
    };
    let ctx = Ctx { setup, lab };
    let out_dir = out_dir(&args.out_dir)?;

    let s = &ctx.setup;
    let steps = args.engines.len() as u64 * (1 + s.workloads.len() as u64 * (1 + s.runs));
    let pb = steps_bar(steps);
    note(
        &pb,
        format!(
            "sysbench: {} x {} rows, {} threads, {} s runs ({} s warm-up, {} runs), {}",
            s.tables,
            s.table_size,
            s.threads,
            s.time,
            s.warmup,
            s.runs,
            s.conditions.brief()
        ),
    );

    let mut results: Vec<EngineResult> = Vec::new();
    for &engine in &args.engines {
        let mut res = EngineResult::new(engine);
        if let Err(e) = measure(&ctx, engine, &pb, &mut res) {
            note(&pb, format!("{} FAILED: {e:#}", engine.display()));
            res.record.error = Some(format!("{e:#}"));
        }
        results.push(res);
        write_outputs(&ctx.setup, &results, &out_dir)?;
    }
    pb.finish_and_clear();
    let md = report::markdown(&ctx.setup, &results);
    println!("{md}");
    eprintln!(
        "results: {} (results.md, results.csv, runs.csv, engines.csv, sysbench-tps.png, \
         sysbench-cpu.png); \
         server logs and sysbench output in {}",
        out_dir.display(),
        ctx.lab.work_dir.display()
    );
    Ok(results.iter().all(|r| r.record.error.is_none()))
}

fn write_outputs(setup: &Setup, results: &[EngineResult], out: &Path) -> Result<()> {
    let write = |name: &str, text: String| -> Result<()> {
        let p = out.join(name);
        fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    };
    write("results.md", report::markdown(setup, results))?;
    write("results.csv", report::results_csv(setup, results))?;
    write("runs.csv", report::runs_csv(results))?;
    write("engines.csv", report::engines_csv(setup, results))?;
    let groups = report::chart_groups(setup, results);
    let base = if results.iter().any(|r| r.engine() == Engine::Innodb) {
        Engine::Innodb.display()
    } else {
        results.first().map_or("", |r| r.engine().display())
    };
    let title = format!(
        "sysbench TPS, {} x {} rows, {} threads, {} MiB per engine{}{}",
        setup.tables,
        setup.table_size,
        setup.threads,
        setup.conditions.budget.total_mib,
        setup.conditions.chart_suffix(),
        if setup.quick { " (quick)" } else { "" }
    );
    riptide_chart::relative_bars(&out.join("sysbench-tps.png"), &title, "TPS", base, &groups)?;
    let cpu_title = format!(
        "sysbench server CPU per transaction (lower is cheaper), {} x {} rows{}{}",
        setup.tables,
        setup.table_size,
        setup.conditions.chart_suffix(),
        if setup.quick { " (quick)" } else { "" }
    );
    let cpu = report::cpu_chart_groups(setup, results);
    riptide_chart::relative_bars(
        &out.join("sysbench-cpu.png"),
        &cpu_title,
        "server CPU per transaction",
        base,
        &cpu,
    )
}

/// One engine: fresh data directory and cgroup, server, load, workloads, sizes, shutdown.
fn measure(ctx: &Ctx, engine: Engine, pb: &ProgressBar, res: &mut EngineResult) -> Result<()> {
    let mut footprint = std::mem::take(&mut res.record.footprint);
    let outcome = ctx.lab.run(engine, pb, &mut footprint, |bench| {
        serve(&ctx.setup, bench, pb, res)
    });
    res.record.footprint = footprint;
    outcome
}

fn serve(s: &Setup, bench: &mut Bench<'_>, pb: &ProgressBar, res: &mut EngineResult) -> Result<()> {
    let engine = bench.engine;
    let name = engine.display();
    res.record.settings = bench.settings()?;
    bench.server.sql("CREATE DATABASE sbtest")?;
    let target = sysbench::Target {
        socket: bench.paths.socket(),
        engine: engine.name(),
        tables: s.tables,
        table_size: s.table_size,
        threads: s.threads,
        rand_type: s.rand_type.clone(),
        log: bench.paths.dir.join("sysbench.log"),
    };

    pb.set_message(format!(
        "{name}: loading {} x {} rows",
        s.tables, s.table_size
    ));
    let bulk = s.bulk_load && engine == Engine::Riptide;
    if bulk {
        bench.server.sql("SET GLOBAL riptide_bulk_load=1")?;
    }
    let load = target.prepare().map_err(|e| bench.explain(e))?;
    if bulk {
        bench.server.sql("SET GLOBAL riptide_bulk_load=0")?;
    }
    if let Some(status) = bench.server.exited() {
        bail!(
            "the server died during the load ({status}) although sysbench reported success; \
             last lines of {}:\n{}",
            bench.paths.error_log().display(),
            tail(&bench.paths.error_log(), 5)
        );
    }
    let indexes = bench.server.sql(
        "SELECT COUNT(DISTINCT TABLE_NAME) FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA='sbtest' AND INDEX_NAME LIKE 'k\\_%'",
    )?;
    if indexes.trim() != s.tables.to_string() {
        bail!(
            "after the load {} of {} tables have their secondary index k: the load failed",
            indexes.trim(),
            s.tables
        );
    }
    bench.loaded(load, "sbtest");
    let loaded_bytes = engine_bytes(engine, &bench.paths.data(), "sbtest");
    pb.inc(1);
    note(
        pb,
        format!(
            "{name}: loaded {} rows in {:.1} s; engine files {:.1} MiB{}",
            s.tables * s.table_size,
            load.as_secs_f64(),
            loaded_bytes as f64 / 1048576.0,
            s.conditions.of_cap(loaded_bytes)
        ),
    );

    bench.restart()?;

    for w in &s.workloads {
        pb.set_message(format!("{name}: {w} warm-up"));
        target
            .run(w, s.warmup, "warm-up")
            .map_err(|e| bench.explain(e))?;
        pb.inc(1);
        res.cells.push(Cell {
            workload: w.clone(),
            runs: Vec::new(),
        });
        for i in 1..=s.runs {
            pb.set_message(format!("{name}: {w} run {i}/{}", s.runs));
            let server_before = bench.server.counters();
            let cache_before = CacheCounters::read(&bench.server, engine);
            let mut r = target
                .run(w, s.time, &format!("run {i}"))
                .map_err(|e| bench.explain(e))?;
            r.server = bench
                .server
                .counters()
                .zip(server_before)
                .map(|(after, before)| after.since(&before));
            r.cache = match (CacheCounters::read(&bench.server, engine), cache_before) {
                (Ok(after), Ok(before)) => Some(after.since(&before)),
                (Err(e), _) | (_, Err(e)) => {
                    note(
                        pb,
                        format!("{name}: could not read the cache counters: {e:#}"),
                    );
                    None
                }
            };
            note(
                pb,
                format!(
                    "{name} {w} run {i}: {:.0} TPS, p95 {:.2} ms, p99 {:.2} ms, {} us CPU, \
                     {} KiB read, {} KiB written per transaction",
                    r.tps,
                    r.p95_ms,
                    r.p99_ms,
                    num(r.cpu_us_per_txn()),
                    num(r.kib_read_per_txn()),
                    num(r.kib_written_per_txn())
                ),
            );
            if let Some(cell) = res.cells.last_mut() {
                cell.runs.push(r);
            }
            bench.sample_rss();
            pb.inc(1);
        }
    }
    res.rows_end = Some(count_rows(bench, s.tables)?);
    bench.finished("sbtest");
    Ok(())
}

/// The rows of the sbtest tables now (oltp_insert adds rows), for the space amplification at
/// the end; counted after the last measured run.
fn count_rows(bench: &Bench<'_>, tables: u64) -> Result<u64> {
    let sum = (1..=tables)
        .map(|t| format!("(SELECT COUNT(*) FROM sbtest.sbtest{t})"))
        .collect::<Vec<_>>()
        .join(" + ");
    let out = bench.server.sql(&format!("SELECT {sum}"))?;
    out.trim()
        .parse()
        .with_context(|| format!("counting the rows of the sbtest tables: got {out:?}"))
}
