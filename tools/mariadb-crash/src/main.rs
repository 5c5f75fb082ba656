//! `riptide-mariadb-crash`: the crash test of Riptide inside MariaDB
//! (`cargo xtask crash --mariadb`, docs/TESTING.md).
//!
//! A private `mariadbd` with `ENGINE=RIPTIDE` and `riptide_sync_mode=full` runs transactions
//! from several connections on RIPTIDE tables with secondary and unique indexes (and, in one
//! transaction out of five, on an InnoDB table too: a two-engine commit). Each connection
//! owns a partition of every key and indexed value ([`model`]), predicts every statement's
//! outcome, and records each transaction's id in a ledger table inside the transaction
//! ([`worker`]). At a random moment the server is killed with SIGKILL (sometimes again
//! during its crash recovery), restarted with the same options, and checked ([`verify`]):
//! every acknowledged transaction is there, the one whose COMMIT was in flight is there
//! entirely or not at all (decided by its ledger row), nothing else is; every secondary
//! index agrees with the primary key; CHECK TABLE passes; no prepared transaction is left.
//! Beside them one more connection runs DDL in a cycle on tables of its own ([`ddl`]): index
//! builds and drops, instant column changes, a copying ALTER, a bulk load; after the restart
//! each table's definition is the one before or after the DDL in flight, and agrees with
//! its rows and indexes. A writer inserts, updates and deletes rows of its own in the DDL
//! table meanwhile ([`ddl_writer`]), so online index builds run under concurrent writes.
//! Then a clean shutdown, and the next round on the same data directory with new options.
//! Rounds alternate the binary log on (two-phase commit through Riptide's XA handlerton,
//! recovery from the binlog) and off.
//!
//! Exit status 0 only if every round verified.

mod ddl;
mod ddl_writer;
mod model;
mod server;
mod verify;
mod worker;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::ddl::DdlState;
use crate::ddl_writer::WriterState;
use crate::model::{MAX_CONNECTIONS, Part, SCHEMA, fences};
use crate::server::{DB, Server, ServerConfig};
use crate::verify::{Verified, verify};
use crate::worker::{InDoubt, LoadOutcome, LoadStats, Shared, Worker};

#[derive(Parser)]
#[command(
    name = "riptide-mariadb-crash",
    about = "Crash test of RIPTIDE inside MariaDB: transactional load, SIGKILL of mariadbd, \
             restart, verification against the client's ledger"
)]
struct Cli {
    /// Working directory: data directory, socket, error log. Emptied at the start.
    #[arg(long)]
    dir: PathBuf,
    /// Folder holding ha_riptide.so.
    #[arg(long)]
    plugin_dir: PathBuf,
    /// `--plugin-maturity` for the server (the plugin declares experimental).
    #[arg(long, default_value = "experimental")]
    plugin_maturity: String,
    /// Number of rounds (default 1 when --minutes is not given either).
    #[arg(long, conflicts_with = "minutes")]
    rounds: Option<u64>,
    /// Run rounds until this many minutes have passed.
    #[arg(long)]
    minutes: Option<f64>,
    /// Seed of the run (default: from the clock); printed for replay.
    #[arg(long)]
    seed: Option<u64>,
    /// Connections writing at once (each owns a partition of the keys).
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Longest load phase of a round, in seconds (each round draws 1 s up to this).
    #[arg(long, default_value_t = 8.0)]
    max_load_seconds: f64,
    /// Percentage of transactions, in rounds with the binary log, that also write an InnoDB
    /// table (two engines in one transaction: two-phase commit coordinated by the binlog).
    #[arg(long, default_value_t = 20)]
    two_engine_percent: u8,
    /// Also run two-engine transactions in rounds without the binary log (coordinated by
    /// MariaDB's tc.log). Off by default: MariaDB 10.11's tc.log recovery rolls back every
    /// prepared transaction without looking its XID up (sql/handler.cc
    /// `xarecover_handlerton`: with `ha_recover(&xids)` from `TC_LOG_MMAP::recover` and no
    /// MEM_ROOT, nothing consults the commit list), so InnoDB, which leaves the commit of a
    /// two-engine transaction to a later checkpoint, loses acknowledged transactions there.
    #[arg(long)]
    two_engine_without_binlog: bool,
    /// The binary log: on in odd rounds (`alternate`), in every round (`on`) or in none.
    #[arg(long, value_enum, default_value_t = Binlog::Alternate)]
    binlog: Binlog,
    /// Fail on a deadlock error instead of counting it (the transaction is rolled back by the
    /// server and checked absent either way).
    #[arg(long)]
    fail_on_deadlock: bool,
    /// Percentage of rounds whose restarted server is killed again during crash recovery.
    #[arg(long, default_value_t = 20)]
    recovery_kill_percent: u8,
}

/// Which rounds run with the binary log.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Binlog {
    /// Odd rounds.
    Alternate,
    /// Every round.
    On,
    /// No round.
    Off,
}

/// Figures of the whole run.
#[derive(Default)]
struct Summary {
    rounds: u64,
    binlog_rounds: u64,
    load: LoadStats,
    in_doubt_committed: u64,
    in_doubt_absent: u64,
    recovery_kills: u64,
    verified: Verified,
    verifications: u64,
    max_recovery: Duration,
    log_errors: Vec<String>,
    /// What the last crash recovery decided for the transactions in doubt (for reports).
    last_in_doubt: Vec<String>,
    /// The DDL connection's progress (index builds, instant column changes, bulk loads).
    ddl: DdlState,
    /// DDL steps in flight at a kill that had taken effect / had not.
    ddl_in_flight_applied: u64,
    ddl_in_flight_absent: u64,
    /// The DDL table writer's progress.
    ddl_writer: WriterState,
}

/// The seed of round `r` of a run with seed `seed`.
fn round_seed(seed: u64, r: u64) -> u64 {
    seed.wrapping_add(r.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .rotate_left(17)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

fn round_config(rng: &mut StdRng, r: u64, binlog: Binlog) -> ServerConfig {
    let pick = |rng: &mut StdRng, xs: &[u64]| xs.get(rng.random_range(0..xs.len())).copied();
    ServerConfig {
        binlog: match binlog {
            Binlog::Alternate => r % 2 == 1,
            Binlog::On => true,
            Binlog::Off => false,
        },
        sync_binlog: rng.random_bool(0.5),
        binlog_format: if rng.random_bool(0.5) { "ROW" } else { "MIXED" },
        write_buffer: pick(rng, &[64 << 10, 256 << 10, 1 << 20, 8 << 20]).unwrap_or(1 << 20),
        target_file: pick(rng, &[64 << 10, 256 << 10, 2 << 20]).unwrap_or(256 << 10),
        zstd: rng.random_bool(0.5),
        l0_slowdown: rng.random_range(2..=12),
        max_open_files: if rng.random_bool(0.3) { 16 } else { 512 },
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("\nFAILED: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: &Cli) -> Result<()> {
    if cli.connections == 0 || cli.connections > MAX_CONNECTIONS {
        bail!("--connections must be 1 to {MAX_CONNECTIONS}");
    }
    let seed = cli.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let rounds = match (cli.rounds, cli.minutes) {
        (Some(r), _) => Some(r),
        (None, Some(_)) => None,
        (None, None) => Some(1),
    };
    let deadline = cli
        .minutes
        .map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    eprintln!(
        "MariaDB crash test: seed {seed}, {} connections, {}, in {}",
        cli.connections,
        rounds.map_or_else(
            || format!("{} minutes", cli.minutes.unwrap_or_default()),
            |r| format!("{r} round(s)")
        ),
        cli.dir.display()
    );
    let start = Instant::now();
    let mut server = Server::new(&cli.dir, &cli.plugin_dir, &cli.plugin_maturity)?;
    server.install()?;

    let bar = match rounds {
        Some(r) => ProgressBar::new(r),
        None => ProgressBar::new(cli.minutes.map_or(0, |m| (m * 60.0) as u64)),
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut parts = vec![Part::default(); cli.connections];
    let mut summary = Summary::default();
    let mut next_txn = 1i64;
    let mut r = 0u64;
    loop {
        r += 1;
        let done = match (rounds, deadline) {
            (Some(n), _) => r > n,
            (None, Some(d)) => Instant::now() >= d,
            (None, None) => true,
        };
        if done {
            break;
        }
        let result = round(
            cli,
            &mut server,
            r,
            round_seed(seed, r),
            &mut parts,
            &mut next_txn,
            &mut summary,
            &bar,
        );
        if let Err(e) = result {
            bar.abandon();
            let notes = if summary.last_in_doubt.is_empty() {
                "none".to_string()
            } else {
                summary.last_in_doubt.join("; ")
            };
            return Err(e.context(format!(
                "transactions in doubt at the last kill: {notes}"
            )).context(format!(
                "round {r} failed (replay: cargo xtask crash --mariadb --rounds {r} --seed {seed}{}; \
                 data directory and log kept in {}; server log: {})",
                replay_options(cli),
                cli.dir.display(),
                server.error_log().display()
            )));
        }
        match rounds {
            Some(_) => bar.inc(1),
            None => bar.set_position(start.elapsed().as_secs()),
        }
    }
    bar.finish_and_clear();
    print_summary(&summary, seed, start.elapsed());
    Ok(())
}

/// The options of this run that differ from the defaults, for the replay line (they are
/// options of `riptide-mariadb-crash`: `cargo xtask crash --mariadb` passes only its own).
fn replay_options(cli: &Cli) -> String {
    let mut o = Vec::new();
    if cli.connections != 4 {
        o.push(format!("--connections {}", cli.connections));
    }
    if cli.max_load_seconds != 8.0 {
        o.push(format!("--max-load-seconds {}", cli.max_load_seconds));
    }
    if cli.two_engine_percent != 20 {
        o.push(format!("--two-engine-percent {}", cli.two_engine_percent));
    }
    if cli.two_engine_without_binlog {
        o.push("--two-engine-without-binlog".into());
    }
    if !matches!(cli.binlog, Binlog::Alternate) {
        o.push(format!("--binlog {:?}", cli.binlog).to_lowercase());
    }
    if cli.recovery_kill_percent != 20 {
        o.push(format!(
            "--recovery-kill-percent {}",
            cli.recovery_kill_percent
        ));
    }
    if cli.fail_on_deadlock {
        o.push("--fail-on-deadlock".into());
    }
    if o.is_empty() {
        String::new()
    } else {
        format!(", with riptide-mariadb-crash options {}", o.join(" "))
    }
}

/// The `[ERROR]` lines of this start's server log.
fn error_lines(server: &Server) -> Vec<String> {
    server
        .log_since_start()
        .lines()
        .filter(|l| l.contains("[ERROR]"))
        .map(str::to_string)
        .collect()
}

/// Checks the options the server runs with.
fn check_settings(server: &Server, cfg: &ServerConfig) -> Result<()> {
    let mut conn = server.connect(None)?;
    let row: Option<(String, u8)> = conn.query_first("SELECT @@riptide_sync_mode, @@log_bin")?;
    let want_bin = u8::from(cfg.binlog);
    match row {
        Some((mode, bin)) if mode.eq_ignore_ascii_case("full") && bin == want_bin => Ok(()),
        other => bail!(
            "the server runs with (riptide_sync_mode, log_bin) = {other:?}, expected (full, {want_bin})"
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn round(
    cli: &Cli,
    server: &mut Server,
    r: u64,
    seed: u64,
    parts: &mut [Part],
    next_txn: &mut i64,
    summary: &mut Summary,
    bar: &ProgressBar,
) -> Result<()> {
    let mut rng = StdRng::seed_from_u64(seed);
    let cfg = round_config(&mut rng, r, cli.binlog);
    let say = |msg: String| bar.suspend(|| eprintln!("{msg}"));
    say(format!("round {r}: {}", cfg.describe()));
    bar.set_message(format!("round {r}: start"));

    // 1. Start cleanly (the previous round ended with a clean shutdown) and verify.
    server.start(&cfg.args()).context("clean start")?;
    check_settings(server, &cfg)?;
    if r == 1 {
        let mut conn = server.connect(None)?;
        conn.query_drop(format!("CREATE DATABASE {DB}"))?;
        let mut conn = server.connect(Some(DB))?;
        for sql in SCHEMA {
            conn.query_drop(*sql).with_context(|| format!("`{sql}`"))?;
        }
        for w in 0..parts.len() {
            for sql in fences(w).0 {
                conn.query_drop(&sql).with_context(|| format!("`{sql}`"))?;
            }
        }
        for sql in ddl::schema() {
            conn.query_drop(&sql)
                .with_context(|| format!("creating the DDL table: `{:.80}`", sql))?;
        }
    }
    let mut conn = server.connect(Some(DB))?;
    let v = verify(&mut conn, parts).context("verification after a clean restart")?;
    ddl::verify_ddl(&mut conn, &mut summary.ddl, &mut summary.ddl_writer)
        .context("verification of the DDL tables after a clean restart")?;
    drop(conn);
    summary.verified.add(&v);
    summary.verifications += 1;

    // 2. Load, then SIGKILL at a random moment.
    let load_for = Duration::from_secs_f64(rng.random_range(1.0..=cli.max_load_seconds.max(1.0)));
    bar.set_message(format!("round {r}: load {:.1}s", load_for.as_secs_f64()));
    let shared = Arc::new(Shared {
        killing: AtomicBool::new(false),
        next_txn: AtomicI64::new(*next_txn),
        in_flight_since: (0..cli.connections).map(|_| AtomicU64::new(0)).collect(),
        epoch: Instant::now(),
    });
    let mut handles = Vec::new();
    for (w, part) in parts.iter().enumerate() {
        let conn = server.connect(Some(DB))?;
        let mut worker = Worker::new(
            w,
            r as i64,
            rng.random(),
            conn,
            Arc::clone(&shared),
            if cfg.binlog || cli.two_engine_without_binlog {
                f64::from(cli.two_engine_percent.min(100)) / 100.0
            } else {
                0.0
            },
        );
        worker.allow_deadlocks = !cli.fail_on_deadlock;
        let part = part.clone();
        handles.push(
            thread::Builder::new()
                .name(format!("conn-{w}"))
                .spawn(move || worker.run(part))
                .context("spawning a connection thread")?,
        );
    }
    let ddl_handle = {
        let conn = server.connect(Some(DB))?;
        let state = summary.ddl.clone();
        let shared = Arc::clone(&shared);
        let seed = rng.random();
        let binlog = cfg.binlog;
        thread::Builder::new()
            .name("ddl".into())
            .spawn(move || ddl::run(conn, state, shared, seed, binlog))
            .context("spawning the DDL thread")?
    };
    let writer_handle = {
        let conn = server.connect(Some(DB))?;
        let state = summary.ddl_writer.clone();
        let shared = Arc::clone(&shared);
        let seed = rng.random();
        thread::Builder::new()
            .name("ddl-writer".into())
            .spawn(move || ddl_writer::run(conn, state, shared, seed))
            .context("spawning the DDL table writer")?
    };
    let load_start = Instant::now();
    let mut trouble: Option<String> = None;
    loop {
        thread::sleep(Duration::from_millis(20));
        if !server.running() {
            trouble = Some(format!(
                "mariadbd died on its own during the load; its log:\n{}",
                server.log_tail(40)
            ));
            break;
        }
        if handles.iter().any(|h| h.is_finished())
            || ddl_handle.is_finished()
            || writer_handle.is_finished()
        {
            break; // a connection failed: its report follows
        }
        if load_start.elapsed() < load_for {
            continue;
        }
        // Time to kill, unless a statement has been running for long: give it up to a
        // minute more (a write stall is not a hang), then call it a hang.
        let now = shared.epoch.elapsed().as_millis() as u64;
        let oldest = shared
            .in_flight_since
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .filter(|s| *s != 0)
            .min();
        match oldest {
            Some(since) if now.saturating_sub(since) > 60_000 => {
                trouble = Some(format!(
                    "a statement has been running for {} s: the server hangs; its log:\n{}",
                    now.saturating_sub(since) / 1000,
                    server.log_tail(20)
                ));
                break;
            }
            Some(since) if now.saturating_sub(since) > 5_000 => {}
            _ => break,
        }
    }
    let loaded = load_start.elapsed();
    shared.killing.store(true, Ordering::SeqCst);
    server.kill()?;
    let mut outcomes: Vec<LoadOutcome> = Vec::new();
    for h in handles {
        outcomes.push(
            h.join()
                .map_err(|_| anyhow!("a connection thread panicked"))?,
        );
    }
    *next_txn = shared.next_txn.load(Ordering::SeqCst);
    let (ddl_state, ddl_failure) = ddl_handle
        .join()
        .map_err(|_| anyhow!("the DDL thread panicked"))?;
    let (writer_state, writer_failure) = writer_handle
        .join()
        .map_err(|_| anyhow!("the DDL table writer panicked"))?;
    let ddl_done_before = summary.ddl.done;
    summary.ddl = ddl_state;
    summary.ddl_writer = writer_state;
    let failures: Vec<String> = outcomes.iter().filter_map(|o| o.failure.clone()).collect();
    if let Some(t) = trouble {
        bail!("{t}");
    }
    if let Some(f) = failures.first() {
        bail!("{f}");
    }
    if let Some(f) = ddl_failure {
        bail!("{f}");
    }
    if let Some(f) = writer_failure {
        bail!("{f}");
    }
    let mut stats = LoadStats::default();
    let mut in_doubt: Vec<(usize, InDoubt)> = Vec::new();
    for (w, o) in outcomes.into_iter().enumerate() {
        stats.add(&o.stats);
        if let Some(p) = parts.get_mut(w) {
            *p = o.part;
        }
        if let Some(d) = o.in_doubt {
            in_doubt.push((w, d));
        }
    }

    // 3. Sometimes kill it again during crash recovery.
    if rng.random_bool(f64::from(cli.recovery_kill_percent.min(100)) / 100.0) {
        let after = Duration::from_millis(rng.random_range(0..1500));
        bar.set_message(format!("round {r}: kill during recovery"));
        server.spawn(&cfg.args())?;
        thread::sleep(after);
        if !server.running() {
            bail!(
                "mariadbd exited by itself during crash recovery; its log:\n{}",
                server.log_tail(40)
            );
        }
        server.kill()?;
        summary.recovery_kills += 1;
        say(format!(
            "round {r}: killed again {} ms into crash recovery",
            after.as_millis()
        ));
    }

    // 4. Restart (crash recovery) and verify.
    bar.set_message(format!("round {r}: recovery"));
    let recovery = server.start(&cfg.args()).context("restart after SIGKILL")?;
    summary.max_recovery = summary.max_recovery.max(recovery);
    let mut conn = server.connect(Some(DB))?;
    let (mut yes, mut no) = (0, 0);
    summary.last_in_doubt.clear();
    for (w, d) in in_doubt {
        let found: Option<i64> =
            conn.query_first(format!("SELECT txn FROM ledger WHERE txn = {}", d.txn))?;
        summary.last_in_doubt.push(format!(
            "round {r} txn {} of connection {w}{}: {}",
            d.txn,
            if d.two_engine {
                " (RIPTIDE + InnoDB)"
            } else {
                ""
            },
            if found.is_some() {
                "committed"
            } else {
                "absent"
            }
        ));
        if found.is_some() {
            yes += 1;
            if let Some(p) = parts.get_mut(w) {
                *p = d.after;
            }
        } else {
            no += 1;
        }
    }
    let v = verify(&mut conn, parts).context(format!(
        "verification after SIGKILL and recovery (round {r})"
    ))?;
    let ddl_in_flight = summary.ddl.in_flight;
    let ddl_acked = summary.ddl.done;
    let ddl_rows = ddl::verify_ddl(&mut conn, &mut summary.ddl, &mut summary.ddl_writer).context(
        format!("verification of the DDL tables after SIGKILL and recovery (round {r})"),
    )?;
    if ddl_in_flight {
        if summary.ddl.done > ddl_acked {
            summary.ddl_in_flight_applied += 1;
        } else {
            summary.ddl_in_flight_absent += 1;
        }
    }
    drop(conn);
    let errors = error_lines(server);
    summary.log_errors.extend(errors.iter().cloned());
    bar.set_message(format!("round {r}: shutdown"));
    server.shutdown().context("clean shutdown")?;

    summary.rounds += 1;
    summary.binlog_rounds += u64::from(cfg.binlog);
    summary.in_doubt_committed += yes;
    summary.in_doubt_absent += no;
    summary.verified.add(&v);
    summary.verifications += 1;
    say(format!(
        "round {r}: load {:.1} s: {} committed, {} rolled back, {} cut before COMMIT, \
         in doubt {yes} committed / {no} absent, {} deadlocks; {} DDL steps ({}); recovery \
         {:.1} s; verified {} rows, {} index entries, {ddl_rows} rows of the DDL tables{}",
        loaded.as_secs_f64(),
        stats.committed,
        stats.rolled_back,
        stats.cut,
        stats.deadlocks,
        ddl_acked.saturating_sub(ddl_done_before),
        if ddl_in_flight {
            if summary.ddl.done > ddl_acked {
                "the one in flight took effect"
            } else {
                "the one in flight did not take effect"
            }
        } else {
            "none in flight"
        },
        recovery.as_secs_f64(),
        v.rows,
        v.index_entries,
        if errors.is_empty() {
            String::new()
        } else {
            format!(", {} [ERROR] lines in the server log", errors.len())
        }
    ));
    summary.load.add(&stats);
    Ok(())
}

fn print_summary(s: &Summary, seed: u64, took: Duration) {
    let l = &s.load;
    println!(
        "\nMariaDB crash test passed: seed {seed}, {:.0} s",
        took.as_secs_f64()
    );
    println!(
        "  rounds                {} ({} with the binary log, {} also killed during recovery)",
        s.rounds, s.binlog_rounds, s.recovery_kills
    );
    println!(
        "  transactions          {} acknowledged ({} over two engines), {} rolled back, {} cut before COMMIT",
        l.committed, l.two_engine, l.rolled_back, l.cut
    );
    println!(
        "  in doubt at the kill  {} found committed, {} found absent (each whole or absent)",
        s.in_doubt_committed, s.in_doubt_absent
    );
    println!(
        "  statements            {} ({} expected duplicate-key errors, {} reads checked, {} ROLLBACK TO SAVEPOINT)",
        l.statements, l.dup_errors, l.reads, l.savepoint_rollbacks
    );
    println!(
        "  verified              {} verifications: {} rows, {} index entries, {} CHECK TABLE OK",
        s.verifications, s.verified.rows, s.verified.index_entries, s.verified.checked_tables
    );
    println!(
        "  DDL                   {} steps acknowledged ({} bulk loads); in flight at a kill: {} took effect, {} did not",
        s.ddl.done, s.ddl.bulk_loads, s.ddl_in_flight_applied, s.ddl_in_flight_absent
    );
    println!(
        "  DDL table writer      {} statements acknowledged, {} given up (deadlock, lock wait, changed definition); {} of its rows at the end",
        s.ddl_writer.acknowledged,
        s.ddl_writer.given_up,
        s.ddl_writer.present.len()
    );
    println!(
        "  slowest               COMMIT {} ms, restart after SIGKILL {:.1} s",
        l.max_commit.as_millis(),
        s.max_recovery.as_secs_f64()
    );
    if l.deadlocks > 0 {
        println!(
            "  deadlocks             {} transactions rolled back by the server with ER_LOCK_DEADLOCK \
             (checked absent) although no two connections write the same rows; the first:\n    {}",
            l.deadlocks,
            l.deadlock_example
                .as_deref()
                .unwrap_or_default()
                .replace('\n', "\n    ")
        );
    }
    if !s.log_errors.is_empty() {
        println!(
            "  server log [ERROR] lines after restarts ({}):",
            s.log_errors.len()
        );
        for e in s.log_errors.iter().take(10) {
            println!("    {e}");
        }
    }
}
