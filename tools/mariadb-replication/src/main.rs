//! `riptide-mariadb-replication`: the crash-safe replication test of Riptide inside MariaDB
//! (`cargo xtask replication`, docs/TESTING.md; issue 20, item 2).
//!
//! Two private servers on this machine ([`pair`]): a primary with the binary log
//! (`sync_binlog=1`, ROW format, `riptide_sync_mode=full`) and a replica that follows it
//! over TCP on 127.0.0.1 with GTID (`MASTER_USE_GTID=slave_pos`), four optimistic parallel
//! apply threads, its own binary log, and `gtid_pos_auto_engines=RIPTIDE`, so that its
//! GTID position commits in the same engine transaction as the rows it applies. The tables
//! are RIPTIDE (or InnoDB with `--engines innodb`, for the comparison).
//!
//! Several connections write on the primary ([`load`]: sysbench-like small transactions,
//! hot counters, one ledger row per transaction). Each round kills the replica with SIGKILL
//! during the load and restarts it (it must resume replicating by itself), then kills the
//! primary and restarts it (crash recovery against its binary log: every transaction the
//! load was told committed must be there, checked with the ledger) and lets the load go on;
//! even rounds kill them in the other order. After each round the load stops, the replica
//! must apply everything the primary has (`@@gtid_slave_pos` against `@@gtid_binlog_pos`),
//! and every table must have the same `CHECKSUM TABLE` and row count on both, with `CHECK
//! TABLE` passing ([`verify`]). Last, the replica's apply rate: its SQL thread stopped
//! while the load runs for `--apply-seconds`, then started, timed until it has applied the
//! backlog.
//!
//! Exit status 0 only if every round of every engine verified.

mod load;
mod pair;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::load::{Load, LoadStats, Progress, check_ledger};
use crate::pair::{Engine, Pair, ParallelMode};
use crate::verify::{Compared, compare};

#[derive(Parser)]
#[command(
    name = "riptide-mariadb-replication",
    about = "Crash-safe replication test of RIPTIDE inside MariaDB: a primary and a parallel \
             GTID replica under a write load, kill -9 of each in turn, the replica checked equal \
             to the primary after every round; the replica's apply rate"
)]
struct Cli {
    /// Working directory: a folder per engine with both servers' data directories, sockets
    /// and logs. Emptied at the start.
    #[arg(long)]
    dir: PathBuf,
    /// Folder holding ha_riptide.so.
    #[arg(long)]
    plugin_dir: PathBuf,
    /// `--plugin-maturity` for the servers (the plugin declares experimental).
    #[arg(long, default_value = "experimental")]
    plugin_maturity: String,
    /// Rounds per engine (each kills the replica and the primary once).
    #[arg(long, default_value_t = 6)]
    rounds: u32,
    /// Seed of the load and of the kill moments (default: from the clock); printed for replay.
    #[arg(long)]
    seed: Option<u64>,
    /// Engines of the test's tables, run one after the other with the same seed
    /// (`riptide,innodb` compares the replica's apply rate).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "riptide")]
    engines: Vec<Engine>,
    /// The replica's `slave_parallel_mode` (4 threads).
    #[arg(long, value_enum, default_value_t = ParallelMode::Optimistic)]
    parallel_mode: ParallelMode,
    /// Connections writing on the primary.
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Seconds of load per round (the two kills fall inside it).
    #[arg(long, default_value_t = 9.0)]
    round_seconds: f64,
    /// Rows of each sbtest table at the start.
    #[arg(long, default_value_t = 10_000)]
    rows: u32,
    /// Seconds of load while the replica's SQL thread is stopped, for the apply-rate
    /// measurement at the end (0: none).
    #[arg(long, default_value_t = 10.0)]
    apply_seconds: f64,
    /// Seconds the replica may take to catch up after a round.
    #[arg(long, default_value_t = 300)]
    catch_up_timeout: u64,
    /// Seconds without any progress of the replica's position that fail the run as a stall
    /// (with what its transactions wait for).
    #[arg(long, default_value_t = 30)]
    stall_seconds: u64,
}

/// Figures of one engine's run.
#[derive(Default)]
struct Run {
    rounds: u32,
    load: LoadStats,
    load_time: Duration,
    /// Transactions in flight at a kill of the primary that recovery committed.
    in_doubt_committed: u64,
    primary_recovery: Vec<Duration>,
    replica_recovery: Vec<Duration>,
    /// From the replica's restart until both replication threads ran.
    replica_resume: Vec<Duration>,
    /// Per round: transactions the replica was behind when the load stopped, and how long
    /// it took to apply them.
    catch_up: Vec<(u64, Duration)>,
    /// `Slave_retried_transactions` summed over the replica's lives.
    replica_retries: u64,
    compared: Compared,
    /// The apply-rate phase: transactions the primary committed with the replica's SQL
    /// thread stopped, the load's duration, and how long the replica took to apply them.
    apply: Option<(u64, Duration, Duration)>,
    /// During the apply-rate phase, per transaction applied: the replica engine's log syncs
    /// (`Riptide_wal_syncs` or `Innodb_data_fsyncs`) and its binary log group commits.
    apply_syncs: Option<(f64, f64)>,
    /// `[ERROR]` lines of the servers' logs (all their starts), besides the expected ones.
    log_errors: Vec<String>,
}

/// Which server a kill hits.
#[derive(Clone, Copy, Debug)]
enum Victim {
    Replica,
    Primary,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("\nriptide-mariadb-replication: FAILED: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: &Cli) -> Result<()> {
    if cli.connections == 0 || cli.rounds == 0 || cli.rows < 10 {
        bail!("--connections and --rounds must be at least 1, --rows at least 10");
    }
    if cli.engines.is_empty() {
        bail!("--engines names no engine");
    }
    let seed = cli.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    println!(
        "riptide-mariadb-replication: seed {seed}, {} round(s) of {} s per engine ({}), {} \
         connections, {} rows per table, replica in {} parallel mode",
        cli.rounds,
        cli.round_seconds,
        cli.engines
            .iter()
            .map(|e| e.name())
            .collect::<Vec<_>>()
            .join(", "),
        cli.connections,
        cli.rows,
        cli.parallel_mode.name()
    );
    let _ = std::fs::remove_dir_all(&cli.dir);
    std::fs::create_dir_all(&cli.dir).with_context(|| format!("creating {}", cli.dir.display()))?;
    let dir = std::path::absolute(&cli.dir)?;
    let started = Instant::now();
    let mut runs = Vec::new();
    for &engine in &cli.engines {
        let edir = dir.join(engine.name());
        let r = run_engine(cli, engine, &edir, seed).with_context(|| {
            format!(
                "{} (replay: cargo xtask replication --rounds {} --seed {seed} --engines {}{}; \
                 servers' data directories and logs kept in {})",
                engine.name(),
                cli.rounds,
                engine.name(),
                if cli.parallel_mode == ParallelMode::Optimistic {
                    String::new()
                } else {
                    format!(" -- --parallel-mode {}", cli.parallel_mode.name())
                },
                edir.display()
            )
        })?;
        print_summary(engine, cli.parallel_mode, &r);
        runs.push((engine, r));
    }
    if runs.len() > 1 {
        print_comparison(&runs);
    }
    println!(
        "riptide-mariadb-replication: passed in {:.0} s (seed {seed})",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn bar(len: u64, engine: Engine) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} rounds ({}) {{msg}}",
            engine.name()
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// The seed of round `r` (0: the initial load, `rounds + 1`: the apply-rate phase).
fn round_seed(seed: u64, r: u64) -> u64 {
    seed.wrapping_add(r.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .rotate_left(17)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

fn run_engine(cli: &Cli, engine: Engine, dir: &Path, seed: u64) -> Result<Run> {
    let mut run = Run::default();
    let mut pair = Pair::setup(
        dir,
        &cli.plugin_dir,
        &cli.plugin_maturity,
        engine,
        cli.parallel_mode,
    )?;
    let timeout = Duration::from_secs(cli.catch_up_timeout);
    let stall = Duration::from_secs(cli.stall_seconds);
    {
        let mut p = pair.primary.connect(None)?;
        load::create(&mut p, engine, cli.rows, round_seed(seed, 0))
            .context("creating the tables on the primary")?;
    }
    let target = pair.primary_pos()?;
    pair.wait_applied(&target, timeout, stall)
        .context("the replica applying the initial tables")?;
    if engine == Engine::Riptide {
        pair.check_riptide_gtid_table(Duration::from_secs(30))?;
    }
    compare_servers(&pair, &mut run).context("after the initial load")?;

    let progress: Vec<Arc<Progress>> = (0..cli.connections)
        .map(|_| Arc::new(Progress::default()))
        .collect();
    let pb = bar(u64::from(cli.rounds), engine);
    for r in 1..=cli.rounds {
        let outcome = round(cli, &mut pair, &progress, r, seed, &mut run, &pb);
        if let Err(e) = outcome {
            pb.abandon();
            return Err(e.context(format!("round {r}")));
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    if cli.apply_seconds > 0.0 {
        apply_rate(cli, &pair, &progress, seed, &mut run).context("the apply-rate phase")?;
    }
    run.replica_retries += retried_transactions(&pair)?;
    for (server, name) in [(&pair.primary, "primary"), (&pair.replica, "replica")] {
        let log = std::fs::read_to_string(server.error_log()).unwrap_or_default();
        run.log_errors.extend(
            log.lines()
                .filter(|l| l.contains("[ERROR]") && !expected_error(l))
                .map(|l| format!("{name}: {l}")),
        );
    }
    pair.replica
        .shutdown()
        .context("clean shutdown of the replica")?;
    pair.primary
        .shutdown()
        .context("clean shutdown of the primary")?;
    Ok(run)
}

/// The `[ERROR]` lines a kill of the primary makes the replica log: its IO thread lost the
/// connection and reconnects.
fn expected_error(line: &str) -> bool {
    line.contains("Error reading packet from server: Lost connection")
        || line.contains("Slave I/O: error reconnecting to master")
}

/// The replica's `Slave_retried_transactions` (since its start).
fn retried_transactions(pair: &Pair) -> Result<u64> {
    let mut c = pair.replica.connect(None)?;
    let row: Option<(String, u64)> =
        c.query_first("SHOW GLOBAL STATUS LIKE 'Slave_retried_transactions'")?;
    Ok(row.map_or(0, |(_, n)| n))
}

/// Compares the two servers' tables and the primary's ledger (after the replica caught up).
fn compare_servers(pair: &Pair, run: &mut Run) -> Result<()> {
    let mut p = pair.primary.connect(None)?;
    let mut r = pair.replica.connect(None)?;
    let c = compare(&mut p, &mut r)?;
    run.compared.tables += c.tables;
    run.compared.rows += c.rows;
    Ok(())
}

/// Sleeps until `until`, watching the load and both servers.
fn watch(pair: &mut Pair, load: &mut Option<Load>, until: Instant) -> Result<()> {
    while Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
        if load.as_ref().is_some_and(Load::any_finished) {
            if let Some(l) = load.take() {
                l.finish()?;
            }
            bail!("a writer stopped on its own");
        }
        for (server, name) in [
            (&mut pair.primary, "primary"),
            (&mut pair.replica, "replica"),
        ] {
            if !server.running() {
                bail!(
                    "the {name} died on its own during the load; its log:\n{}",
                    server.log_tail(40)
                );
            }
        }
    }
    Ok(())
}

fn round(
    cli: &Cli,
    pair: &mut Pair,
    progress: &[Arc<Progress>],
    r: u32,
    seed: u64,
    run: &mut Run,
    pb: &ProgressBar,
) -> Result<()> {
    let say = |msg: String| pb.suspend(|| println!("{msg}"));
    let rseed = round_seed(seed, u64::from(r));
    let mut rng = StdRng::seed_from_u64(rseed);
    let total = Duration::from_secs_f64(cli.round_seconds.max(0.5));
    let kill_at = [
        total.mul_f64(rng.random_range(0.2..0.45)),
        total.mul_f64(rng.random_range(0.55..0.8)),
    ];
    let order = if r % 2 == 1 {
        [Victim::Replica, Victim::Primary]
    } else {
        [Victim::Primary, Victim::Replica]
    };
    let opts = pair.primary.opts(None);
    let mut starts = 0u64;
    let mut load = Some(Load::start(
        &opts,
        pair.engine(),
        progress,
        cli.rows,
        rseed,
    )?);
    let began = Instant::now();
    let mut notes = Vec::new();
    let mut round_stats = LoadStats::default();
    for (victim, at) in order.into_iter().zip(kill_at) {
        pb.set_message(format!("load, then kill -9 of the {victim:?}").to_lowercase());
        watch(pair, &mut load, began + at)?;
        match victim {
            Victim::Replica => {
                run.replica_retries += retried_transactions(pair)?;
                pair.replica.kill()?;
                let rec = pair
                    .start_replica()
                    .context("restarting the killed replica")?;
                let resume = Instant::now();
                pair.wait_running(Duration::from_secs(60))
                    .context("the replica resuming replication after its restart")?;
                let resume = rec + resume.elapsed();
                run.replica_recovery.push(rec);
                run.replica_resume.push(resume);
                notes.push(format!(
                    "replica killed at {:.1} s, up in {:.2} s, replicating in {:.2} s",
                    at.as_secs_f64(),
                    rec.as_secs_f64(),
                    resume.as_secs_f64()
                ));
            }
            Victim::Primary => {
                if let Some(l) = load.take() {
                    l.killing();
                    pair.primary.kill()?;
                    round_stats.add(&l.finish()?);
                } else {
                    pair.primary.kill()?;
                }
                let rec = pair
                    .start_primary()
                    .context("restarting the killed primary")?;
                run.primary_recovery.push(rec);
                let mut c = pair.primary.connect(None)?;
                let committed = check_ledger(&mut c, progress, "primary")
                    .context("after the primary's crash recovery")?;
                run.in_doubt_committed += committed;
                notes.push(format!(
                    "primary killed at {:.1} s, recovered in {:.2} s ({committed} in-doubt \
                     transaction(s) committed)",
                    at.as_secs_f64(),
                    rec.as_secs_f64()
                ));
                starts += 1;
                load = Some(Load::start(
                    &opts,
                    pair.engine(),
                    progress,
                    cli.rows,
                    rseed ^ starts,
                )?);
            }
        }
    }
    pb.set_message("load".to_string());
    watch(pair, &mut load, began + total)?;
    if let Some(l) = load.take() {
        round_stats.add(&l.finish()?);
    }
    let loaded = began.elapsed();

    pb.set_message("replica catching up".to_string());
    let target = pair.primary_pos()?;
    let from = pair.replica_pos()?;
    let took = pair.wait_applied(
        &target,
        Duration::from_secs(cli.catch_up_timeout),
        Duration::from_secs(cli.stall_seconds),
    )?;
    let behind = target.total().saturating_sub(from.total());
    run.catch_up.push((behind, took));

    pb.set_message("comparing".to_string());
    let mut c = pair.primary.connect(None)?;
    check_ledger(&mut c, progress, "primary")?;
    let mut c = pair.replica.connect(None)?;
    check_ledger(&mut c, progress, "replica")?;
    compare_servers(pair, run)?;

    run.rounds += 1;
    run.load_time += loaded;
    run.load.add(&round_stats);
    say(format!(
        "round {r}: {} transactions committed in {:.1} s ({} retried); {}; replica {behind} \
         behind at the end, caught up in {:.2} s; tables equal",
        round_stats.committed,
        loaded.as_secs_f64(),
        round_stats.retries,
        notes.join("; "),
        took.as_secs_f64()
    ));
    Ok(())
}

/// The apply rate: the replica's SQL thread stopped while the load runs, then started and
/// timed until it has applied what its IO thread fetched meanwhile.
fn apply_rate(
    cli: &Cli,
    pair: &Pair,
    progress: &[Arc<Progress>],
    seed: u64,
    run: &mut Run,
) -> Result<()> {
    let timeout = Duration::from_secs(cli.catch_up_timeout);
    let mut r = pair.replica.connect(None)?;
    r.query_drop("STOP SLAVE SQL_THREAD")
        .context("STOP SLAVE SQL_THREAD")?;
    let load = Load::start(
        &pair.primary.opts(None),
        pair.engine(),
        progress,
        cli.rows,
        round_seed(seed, u64::from(cli.rounds) + 1),
    )?;
    let began = Instant::now();
    let until = began + Duration::from_secs_f64(cli.apply_seconds);
    while Instant::now() < until && !load.any_finished() {
        thread::sleep(Duration::from_millis(20));
    }
    let stats = load.finish()?;
    let loaded = began.elapsed();
    let target = pair.primary_pos()?;
    pair.wait_fetched(&target, timeout)?;
    let from = pair.replica_pos()?;
    let syncs_before = sync_counters(&mut r, pair.engine())?;
    r.query_drop("START SLAVE SQL_THREAD")
        .context("START SLAVE SQL_THREAD")?;
    let took = pair.wait_applied(&target, timeout, Duration::from_secs(cli.stall_seconds))?;
    let syncs_after = sync_counters(&mut r, pair.engine())?;
    let applied = target.total().saturating_sub(from.total());
    let per = |after: u64, before: u64| after.saturating_sub(before) as f64 / applied.max(1) as f64;
    run.apply_syncs = Some((
        per(syncs_after.0, syncs_before.0),
        per(syncs_after.1, syncs_before.1),
    ));
    let mut c = pair.replica.connect(None)?;
    check_ledger(&mut c, progress, "replica")?;
    compare_servers(pair, run)?;
    run.load.add(&stats);
    run.load_time += loaded;
    run.apply = Some((applied, loaded, took));
    Ok(())
}

/// The engine's log syncs (`Riptide_wal_syncs`, or `Innodb_data_fsyncs` for InnoDB) and
/// `Binlog_group_commits` of a server.
fn sync_counters(c: &mut mysql::Conn, engine: Engine) -> Result<(u64, u64)> {
    let name = match engine {
        Engine::Riptide => "Riptide_wal_syncs",
        Engine::Innodb => "Innodb_data_fsyncs",
    };
    let rows: Vec<(String, u64)> = c
        .query(format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('{name}', 'Binlog_group_commits')"
        ))
        .context("reading the replica's sync counters")?;
    let get = |n: &str| {
        rows.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map_or(0, |(_, v)| *v)
    };
    Ok((get(name), get("Binlog_group_commits")))
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn max(v: &[Duration]) -> Duration {
    v.iter().copied().max().unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn apply_tps(run: &Run) -> Option<f64> {
    run.apply
        .map(|(n, _, took)| n as f64 / took.as_secs_f64().max(1e-9))
}

fn print_summary(engine: Engine, mode: ParallelMode, run: &Run) {
    let l = &run.load;
    println!(
        "\nreplication test passed ({}, tables ENGINE={}):",
        engine.name(),
        engine.table_engine()
    );
    println!(
        "  rounds                {} (each: kill -9 of the replica and of the primary, in \
         alternating order)",
        run.rounds
    );
    println!(
        "  transactions          {} committed on the primary in {:.1} s of load ({:.0}/s), {} \
         retried after a deadlock or lock wait, {} connections cut by a kill, {} in flight at \
         a kill found committed; slowest COMMIT {} ms",
        l.committed,
        run.load_time.as_secs_f64(),
        l.committed as f64 / run.load_time.as_secs_f64().max(1e-9),
        l.retries,
        l.cut,
        run.in_doubt_committed,
        l.max_commit.as_millis()
    );
    println!(
        "  recovery              primary median {} / max {}; replica median {} / max {}, \
         replicating again median {} / max {}",
        secs(median(&run.primary_recovery)),
        secs(max(&run.primary_recovery)),
        secs(median(&run.replica_recovery)),
        secs(max(&run.replica_recovery)),
        secs(median(&run.replica_resume)),
        secs(max(&run.replica_resume)),
    );
    let times: Vec<Duration> = run.catch_up.iter().map(|c| c.1).collect();
    let behind: Vec<String> = run.catch_up.iter().map(|c| c.0.to_string()).collect();
    println!(
        "  catch-up after rounds median {} / max {} (transactions behind when the load \
         stopped: {})",
        secs(median(&times)),
        secs(max(&times)),
        behind.join(", ")
    );
    if let (Some((n, loaded, took)), Some(tps)) = (run.apply, apply_tps(run)) {
        println!(
            "  apply rate            {tps:.0} transactions/s: {n} transactions ({:.1} s of \
             primary load, {:.0}/s) applied in {} by 4 parallel threads ({})",
            loaded.as_secs_f64(),
            n as f64 / loaded.as_secs_f64().max(1e-9),
            secs(took),
            mode.name()
        );
        if let Some((engine_syncs, groups)) = run.apply_syncs {
            println!(
                "                        per transaction applied: {engine_syncs:.2} {} log syncs, \
                 {groups:.2} binary log group commits",
                engine.table_engine()
            );
        }
    }
    println!(
        "  verified              {} table comparisons (CHECKSUM TABLE, row count, CHECK TABLE \
         on both), {} rows; replica retried {} transactions (optimistic conflicts)",
        run.compared.tables, run.compared.rows, run.replica_retries
    );
    if !run.log_errors.is_empty() {
        println!(
            "  [ERROR] lines in the servers' logs, besides the replica's reconnections ({}):",
            run.log_errors.len()
        );
        for e in run.log_errors.iter().take(10) {
            println!("    {e}");
        }
    }
}

fn print_comparison(runs: &[(Engine, Run)]) {
    let innodb = runs
        .iter()
        .find(|(e, _)| *e == Engine::Innodb)
        .and_then(|(_, r)| apply_tps(r));
    println!(
        "\n| engine | rounds | transactions | primary commits/s | replica applies/s | vs InnoDB |"
    );
    println!("|---|---|---|---|---|---|");
    for (e, r) in runs {
        let tps = apply_tps(r);
        println!(
            "| {} | {} | {} | {:.0} | {} | {} |",
            e.name(),
            r.rounds,
            r.load.committed,
            r.load.committed as f64 / r.load_time.as_secs_f64().max(1e-9),
            tps.map_or("-".into(), |t| format!("{t:.0}")),
            match (tps, innodb) {
                (Some(t), Some(i)) if i > 0.0 => format!("{:.2}x", t / i),
                _ => "-".into(),
            }
        );
    }
}
