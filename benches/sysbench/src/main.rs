//! `riptide-sysbench`: the MariaDB-level comparison of Riptide, InnoDB and MyRocks with
//! Debian's sysbench (issue 7). `cargo xtask sysbench` installs MariaDB if needed, builds
//! `ha_riptide.so`, makes a plugin folder holding it and a link to Debian's `ha_rocksdb.so`,
//! and runs this binary; everything else (servers, cgroup, sysbench, report, chart) is here,
//! so the whole measurement is one program whose `--help` documents it.
//!
//! # What each engine gets
//!
//! One memory budget `B` (`--budget-mib`, default 256 MiB) per engine:
//!
//! | engine | memory | durability (default / `--durable`) |
//! |---|---|---|
//! | InnoDB | `innodb_buffer_pool_size=B`, `innodb_flush_method=O_DIRECT` | `innodb_flush_log_at_trx_commit=2` / `1` |
//! | MyRocks | `rocksdb_block_cache_size=B-W`, `rocksdb_db_write_buffer_size=W`, `write_buffer_size=W/2` (in `rocksdb_default_cf_options`) | `rocksdb_flush_log_at_trx_commit=2` / `1` |
//! | Riptide | `riptide_block_cache_size=B-W`, `riptide_db_write_buffer_size=W`, `riptide_write_buffer_size=W/2` | `riptide_sync_mode=interval` (1 s) / `full` |
//!
//! `W` = `--write-buffer-mib` (default 64). With 2 the log is written to the OS at every
//! commit and fsynced about once a second by all three. Index and filter blocks count
//! against the block cache in both LSM engines (MyRocks' `rocksdb_cache_index_and_filter_blocks`
//! is ON by default; Riptide always caches them). MyRocks gets Riptide's table defaults:
//! no compression and a 10 bits/key whole-key bloom filter. Every server: no binary log,
//! Aria page cache and MyISAM key buffer 8 MiB (they only hold the system tables),
//! InnoDB buffer pool 8 MiB when InnoDB is not the engine under test; everything else is
//! the server's default. The results print `SHOW GLOBAL VARIABLES` of each server.
//!
//! # The memory cap, and why one server per engine
//!
//! Each engine runs in its own, freshly started `mariadbd` with a fresh data directory, which
//! a shell puts into the cgroup v1 memory group `/sys/fs/cgroup/memory/riptide-sysbench`
//! before it execs the server; `memory.limit_in_bytes` = budget + `--allowance-mib`
//! (default 320 MiB). The allowance holds what each server needs beyond its budget: the
//! server itself (about 70 MiB resident at idle), connections, the InnoDB log buffer, the
//! LSM engines' own structures and the allocator's overhead. Rule: the largest overhead
//! measured without a cap (peak resident memory during the workloads minus the budget, with
//! the same settings), plus 64 MiB for the page cache of the server's own files, rounded up.
//! Measured (4 x 250,000 rows, uncapped, `MALLOC_ARENA_MAX=2`; benches/RESULTS.md): InnoDB
//! 331 MiB peak (75 over the budget), Riptide 346 MiB (90), MyRocks 474 MiB
//! over the seven workloads and 492 MiB after one minute of `oltp_update_index` alone
//! (236, still growing): 236 + 64 = 300, so 320. Every server runs with
//! `MALLOC_ARENA_MAX=2` (glibc's per-thread arenas kept 72 MiB of Riptide's and 61 MiB of
//! MyRocks' resident memory). The load (`CREATE INDEX`) needs more than the workloads
//! (peak resident: InnoDB 339 MiB, MyRocks 878 MiB, Riptide 1,974 MiB while it copies each
//! table in one transaction): `--load-allowance-mib`. The cgroup
//! charges the server's anonymous memory *and* the page cache of every file it reads or
//! writes, so the OS page cache cannot hold more than what is left of the cap. InnoDB uses
//! O_DIRECT and so cannot use what the server leaves of the allowance as page cache; the
//! LSM engines (buffered I/O) can. That is the disadvantage InnoDB has here, and it is
//! bounded by the allowance. `--load-allowance-mib` raises the cap during the load only (for
//! engines whose index build does not fit; the report says so); `--no-cap` runs without
//! the cgroup (the report says so).
//!
//! The issue asked for one server with all three engines. With one cgroup around one server,
//! the cap must hold all three caches at once (3 x budget + allowance), and the engine under
//! test would then find the idle engines' unused budget free for page cache: exactly the
//! hiding of the disk the cap is there to prevent. A cap of budget + allowance around
//! one server with three filled caches would OOM-kill it instead. So each engine has its
//! own server run (same binary, same options except its engine's), one after the other,
//! each loading only its own plugin.
//!
//! # The runs
//!
//! Per engine: `sysbench oltp_common prepare` (timed: the load time; it fills the tables,
//! then builds the secondary index with `CREATE INDEX`), data size on disk, then a restart
//! of the server, so the workloads run on a fresh process with cold caches: the load leaves
//! memory behind (measured without the cap: MyRocks' server grew from 225 to 850 MB resident
//! while loading 1M rows, and both LSM servers were OOM-killed at the cap as soon as the
//! first workload filled their caches on top of it). Then per workload (`oltp_point_select`, `oltp_read_only`, `oltp_read_write`,
//! `oltp_update_index`, `oltp_update_non_index`, `oltp_insert`, `oltp_delete`, in that
//! order: the writing ones last) a warm-up run that is discarded and `--runs` measured
//! runs. `--rand-type=uniform` (sysbench's default `special` sends most requests to 1% of
//! the rows, which would fit in any cache). p95 and p99 come from sysbench's histogram
//! (`sysbench.rs`). Reported: median TPS, p95/p99, the worst second, Riptide's ratio to
//! each peer, the load time, the data size after the load and at the end, the cgroup's
//! peak memory and anonymous memory during the measured phase, the restart time;
//! `results.md`, `results.csv`, `runs.csv`, `engines.csv` and
//! `sysbench-tps.png` in `--out-dir`.

mod report;
mod server;
mod sysbench;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use report::{Cell, EngineResult, Setup};
use server::{Budget, Cgroup, Server, ServerPaths};

/// The engines compared.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Riptide (ha_riptide.so).
    Riptide,
    /// InnoDB (built into the server).
    Innodb,
    /// MyRocks (Debian's ha_rocksdb.so).
    #[value(alias = "myrocks")]
    Rocksdb,
}

impl Engine {
    /// The name sysbench's `--mysql-storage-engine` and `ENGINE=` take.
    pub fn sysbench_name(self) -> &'static str {
        match self {
            Engine::Riptide => "riptide",
            Engine::Innodb => "innodb",
            Engine::Rocksdb => "rocksdb",
        }
    }

    /// The name in reports.
    pub fn display(self) -> &'static str {
        match self {
            Engine::Riptide => "Riptide",
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "MyRocks",
        }
    }

    /// The plugin file the server must load, if any.
    fn plugin(self) -> Option<&'static str> {
        match self {
            Engine::Riptide => Some("ha_riptide.so"),
            Engine::Innodb => None,
            Engine::Rocksdb => Some("ha_rocksdb.so"),
        }
    }

    /// The name in information_schema.ENGINES.
    fn schema_name(self) -> &'static str {
        match self {
            Engine::Riptide => "RIPTIDE",
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "ROCKSDB",
        }
    }
}

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
    /// Folder holding ha_riptide.so and ha_rocksdb.so (`cargo xtask sysbench` makes it).
    #[arg(long)]
    plugin_dir: PathBuf,
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
    /// Memory budget per engine in MiB (InnoDB buffer pool; LSM block cache + memtables).
    #[arg(long, default_value_t = 256)]
    budget_mib: u64,
    /// Of the budget, the LSM engines' memtables (all together) in MiB.
    #[arg(long, default_value_t = 64)]
    write_buffer_mib: u64,
    /// What the cgroup allows beyond the budget for the server itself, in MiB (the largest
    /// measured server overhead plus 64 MiB; crate docs).
    #[arg(long, default_value_t = 320)]
    allowance_mib: u64,
    /// Raise the cap to budget + this many MiB while loading (`prepare`), back to budget +
    /// --allowance-mib for the workloads (default: the same cap for both). For engines whose
    /// index build does not fit the cap; the report prints it.
    #[arg(long)]
    load_allowance_mib: Option<u64>,
    /// Full durability: the log synced at every commit by all three engines.
    #[arg(long)]
    durable: bool,
    /// Run without the memory cgroup (the results are marked: the page cache may hold the
    /// data).
    #[arg(long)]
    no_cap: bool,
    /// A small run (2 tables x 20,000 rows, 5 s warm-up, one 10 s run per workload): a smoke
    /// test of the whole pipeline, not a measurement.
    #[arg(long)]
    quick: bool,
    /// sysbench `--rand-type` (uniform, gaussian, special, pareto).
    #[arg(long, default_value = "uniform")]
    rand_type: String,
    /// Keep each engine's data directory after its run (default: removed, logs kept).
    #[arg(long)]
    keep_data: bool,
}

/// The resolved parameters of this invocation.
struct Ctx {
    setup: Setup,
    load_cap: Option<u64>,
    budget: Budget,
    plugin_dir: PathBuf,
    work_dir: PathBuf,
    keep_data: bool,
}

fn note(pb: &ProgressBar, msg: impl AsRef<str>) {
    if pb.is_hidden() {
        eprintln!("{}", msg.as_ref());
    } else {
        pb.println(msg.as_ref());
    }
}

fn absolute(p: &Path) -> Result<PathBuf> {
    if p.is_absolute() {
        Ok(p.to_path_buf())
    } else {
        Ok(std::env::current_dir()
            .context("reading the current directory")?
            .join(p))
    }
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
    if args.engines.is_empty() {
        bail!("no engines given");
    }
    if args.write_buffer_mib >= args.budget_mib {
        bail!(
            "--write-buffer-mib ({}) must be below --budget-mib ({})",
            args.write_buffer_mib,
            args.budget_mib
        );
    }
    if !sysbench::available() {
        bail!("sysbench is not installed (`cargo xtask setup` installs it)");
    }
    sysbench::check_workloads(&workloads)?;
    let plugin_dir = absolute(&args.plugin_dir)?;
    for e in &args.engines {
        if let Some(so) = e.plugin()
            && !plugin_dir.join(so).exists()
        {
            bail!(
                "{} is missing: {} needs it (`cargo xtask sysbench` builds and links it)",
                plugin_dir.join(so).display(),
                e.display()
            );
        }
    }
    let cap = (!args.no_cap).then_some((args.budget_mib + args.allowance_mib) * 1024 * 1024);
    if let Some(limit) = cap {
        // Fail now, before any loading, if the cgroup cannot be made.
        Cgroup::create(limit)?.remove()?;
    }
    let started = Command::new("date")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let setup = Setup {
        tables: args.tables.unwrap_or(if q { 2 } else { 10 }),
        table_size: args
            .table_size
            .unwrap_or(if q { 20_000 } else { 1_000_000 }),
        threads: args.threads.max(1),
        time: args.time.unwrap_or(if q { 10 } else { 60 }),
        warmup: args.warmup.unwrap_or(if q { 5 } else { 30 }),
        runs: args.runs.unwrap_or(if q { 1 } else { 3 }).max(1),
        budget_mib: args.budget_mib,
        write_buffer_mib: args.write_buffer_mib,
        cap,
        load_cap: cap.map(|c| {
            args.load_allowance_mib
                .map_or(c, |a| (args.budget_mib + a) * 1024 * 1024)
        }),
        durable: args.durable,
        rand_type: args.rand_type.clone(),
        quick: q,
        workloads,
        started,
        command: std::env::args()
            .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
            .collect::<Vec<_>>()
            .join(" "),
    };
    let ctx = Ctx {
        budget: Budget {
            total_mib: args.budget_mib,
            write_buffer_mib: args.write_buffer_mib,
            durable: args.durable,
        },
        plugin_dir,
        work_dir: absolute(&args.work_dir)?,
        keep_data: args.keep_data,
        load_cap: setup.load_cap,
        setup,
    };
    let out_dir = absolute(&args.out_dir)?;
    fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    fs::create_dir_all(&ctx.work_dir)
        .with_context(|| format!("creating {}", ctx.work_dir.display()))?;

    let s = &ctx.setup;
    let steps = args.engines.len() as u64 * (1 + s.workloads.len() as u64 * (1 + s.runs));
    let pb = ProgressBar::new(steps);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} steps  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    note(
        &pb,
        format!(
            "sysbench: {} x {} rows, {} threads, {} s runs ({} s warm-up, {} runs), budget {} \
             MiB/engine, {}{}",
            s.tables,
            s.table_size,
            s.threads,
            s.time,
            s.warmup,
            s.runs,
            s.budget_mib,
            cap.map_or("NO memory cap".into(), |c| format!(
                "cgroup cap {} MiB",
                c / 1024 / 1024
            )),
            if s.durable { ", durable" } else { "" }
        ),
    );

    let mut results: Vec<EngineResult> = Vec::new();
    for &engine in &args.engines {
        let mut res = EngineResult::new(engine);
        if let Err(e) = measure(&ctx, engine, &pb, &mut res) {
            note(&pb, format!("{} FAILED: {e:#}", engine.display()));
            res.error = Some(format!("{e:#}"));
        }
        results.push(res);
        write_outputs(&ctx.setup, &results, &out_dir)?;
    }
    pb.finish_and_clear();
    let md = report::markdown(&ctx.setup, &results);
    println!("{md}");
    eprintln!(
        "results: {} (results.md, results.csv, runs.csv, engines.csv, sysbench-tps.png); \
         server logs and sysbench output in {}",
        out_dir.display(),
        ctx.work_dir.display()
    );
    Ok(results.iter().all(|r| r.error.is_none()))
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
    let base = if results.iter().any(|r| r.engine == Engine::Innodb) {
        Engine::Innodb.display()
    } else {
        results.first().map_or("", |r| r.engine.display())
    };
    let title = format!(
        "sysbench TPS, {} x {} rows, {} threads, {} MiB per engine{}{}{}",
        setup.tables,
        setup.table_size,
        setup.threads,
        setup.budget_mib,
        if setup.cap.is_none() { ", NO CAP" } else { "" },
        if setup.durable { ", durable" } else { "" },
        if setup.quick { " (quick)" } else { "" }
    );
    riptide_chart::relative_bars(&out.join("sysbench-tps.png"), &title, base, &groups)
}

/// One engine: fresh data directory and cgroup, server, load, workloads, sizes, shutdown.
fn measure(ctx: &Ctx, engine: Engine, pb: &ProgressBar, res: &mut EngineResult) -> Result<()> {
    let name = engine.display();
    let paths = ServerPaths {
        dir: ctx.work_dir.join(engine.sysbench_name()),
    };
    pb.set_message(format!("{name}: creating the data directory"));
    paths.init()?;
    let mut cgroup = ctx.load_cap.map(Cgroup::create).transpose()?;
    let outcome = serve(ctx, engine, pb, res, &paths, cgroup.as_mut());
    let mut outcome = outcome;
    if let Some(cg) = cgroup {
        res.peak_memory = Some(cg.max_usage());
        res.limit_hits = Some(cg.failcnt());
        let kills = cg.oom_kills();
        if kills > 0 {
            outcome = outcome.context(format!(
                "the kernel OOM-killed {kills} process(es) in the cgroup (cap {} MiB): raise \
                 --allowance-mib (--load-allowance-mib if it died while loading)",
                cg.limit() / 1024 / 1024
            ));
        }
        cg.remove()?;
    }
    if !ctx.keep_data {
        let _ = fs::remove_dir_all(paths.data());
    }
    outcome
}

fn serve(
    ctx: &Ctx,
    engine: Engine,
    pb: &ProgressBar,
    res: &mut EngineResult,
    paths: &ServerPaths,
    mut cgroup: Option<&mut Cgroup>,
) -> Result<()> {
    let name = engine.display();
    let s = &ctx.setup;
    pb.set_message(format!("{name}: starting the server"));
    let mut server = Server::start(
        paths.clone(),
        &ctx.plugin_dir,
        &ctx.budget.server_options(engine),
        cgroup.as_deref(),
    )?;
    let support = server.sql(&format!(
        "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='{}'",
        engine.schema_name()
    ))?;
    if !matches!(support.trim(), "YES" | "DEFAULT") {
        bail!(
            "the server started but {name} is not available (support: {:?}); see {}",
            support.trim(),
            paths.error_log().display()
        );
    }
    res.settings = server.variables(server::reported_variables(engine))?;
    server.sql("CREATE DATABASE sbtest")?;
    let target = sysbench::Target {
        socket: paths.socket(),
        engine: engine.sysbench_name(),
        tables: s.tables,
        table_size: s.table_size,
        threads: s.threads,
        rand_type: s.rand_type.clone(),
        log: paths.dir.join("sysbench.log"),
    };
    let sample_rss = |res: &mut EngineResult, cgroup: Option<&Cgroup>| {
        if let Some(cg) = cgroup {
            res.max_rss = Some(res.max_rss.unwrap_or(0).max(cg.rss()));
        }
    };
    let with_server_state = |server: &mut Server, e: anyhow::Error| -> anyhow::Error {
        match server.exited() {
            Some(status) => e.context(format!(
                "the server exited ({status}); last lines of {}:\n{}",
                paths.error_log().display(),
                server::tail(&paths.error_log(), 5)
            )),
            None => e,
        }
    };

    pb.set_message(format!(
        "{name}: loading {} x {} rows",
        s.tables, s.table_size
    ));
    let load = target
        .prepare()
        .map_err(|e| with_server_state(&mut server, e))?;
    if let Some(status) = server.exited() {
        bail!(
            "the server died during the load ({status}) although sysbench reported success; \
             last lines of {}:\n{}",
            paths.error_log().display(),
            server::tail(&paths.error_log(), 5)
        );
    }
    let indexes = server.sql(
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
    res.load = Some(load);
    res.load_peak_rss = server.peak_rss();
    res.load_rss = cgroup.as_deref().map(Cgroup::rss);
    res.engine_bytes_loaded = server::engine_bytes(engine, &paths.data());
    res.datadir_bytes_loaded = server::disk_usage(&paths.data());
    pb.inc(1);
    note(
        pb,
        format!(
            "{name}: loaded {} rows in {:.1} s; engine files {:.1} MiB{}",
            s.tables * s.table_size,
            load.as_secs_f64(),
            res.engine_bytes_loaded as f64 / 1048576.0,
            s.cap.map_or(String::new(), |c| format!(
                " = {:.1}x the cap",
                res.engine_bytes_loaded as f64 / c as f64
            ))
        ),
    );

    // A fresh server for the measured phase: what the load left in memory (the index builds
    // of `CREATE INDEX`, malloc's retained arenas) is no workload's footprint, and every
    // engine starts the workloads with cold caches. The cgroup's peak and failure counters
    // restart with it.
    pb.set_message(format!("{name}: restarting the server"));
    server.stop()?;
    if let (Some(cg), Some(cap)) = (cgroup.as_deref_mut(), s.cap) {
        cg.set_limit(cap)?;
        cg.reset_counters()?;
    }
    let restart = Instant::now();
    server = Server::start(
        paths.clone(),
        &ctx.plugin_dir,
        &ctx.budget.server_options(engine),
        cgroup.as_deref(),
    )?;
    res.restart = Some(restart.elapsed());
    sample_rss(res, cgroup.as_deref());

    for w in &s.workloads {
        pb.set_message(format!("{name}: {w} warm-up"));
        target
            .run(w, s.warmup, "warm-up")
            .map_err(|e| with_server_state(&mut server, e))?;
        pb.inc(1);
        res.cells.push(Cell {
            workload: w.clone(),
            runs: Vec::new(),
        });
        for i in 1..=s.runs {
            pb.set_message(format!("{name}: {w} run {i}/{}", s.runs));
            let r = target
                .run(w, s.time, &format!("run {i}"))
                .map_err(|e| with_server_state(&mut server, e))?;
            note(
                pb,
                format!(
                    "{name} {w} run {i}: {:.0} TPS, p95 {:.2} ms, p99 {:.2} ms",
                    r.tps, r.p95_ms, r.p99_ms
                ),
            );
            if let Some(cell) = res.cells.last_mut() {
                cell.runs.push(r);
            }
            sample_rss(res, cgroup.as_deref());
            pb.inc(1);
        }
    }
    res.run_peak_rss = server.peak_rss();
    res.engine_bytes_end = server::engine_bytes(engine, &paths.data());
    pb.set_message(format!("{name}: shutting down"));
    server.stop()
}
