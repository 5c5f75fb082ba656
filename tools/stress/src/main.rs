//! `riptide-stress`: the crash test (in the manner of RocksDB's db_stress / db_crashtest).
//!
//! * `run`: several threads of random puts, deletes, single deletes, range deletes, batches,
//!   transactions (optimistic and pessimistic, savepoints, two-phase commit), reads, scans and
//!   snapshot reads, each on its own key range, recording every acknowledged operation in an
//!   expected-state file ([`state`]). Runs until killed (or `--seconds`).
//! * `verify`: reopens the database and checks it against the expected state ([`verify`]).
//! * `crash --minutes N`: the driver. Each round picks random options, verifies, starts `run`
//!   as a child, kills it with SIGKILL after a random delay, and goes on with the same
//!   database; a final verification ends it. `cargo xtask crash` runs this.
//!
//! Exit status 0 only if every verification passed.

mod state;
mod verify;
mod workload;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide::{Compression, Db, Options, SyncMode};

use crate::state::StateFile;

/// The signal number of SIGKILL.
const SIGKILL: i32 = 9;
use crate::workload::Worker;

#[derive(Parser)]
#[command(about = "Riptide crash test: random operations, SIGKILL, verify")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// Where the database and its expected state live, and the shape of the key space.
#[derive(clap::Args, Clone)]
struct Shape {
    /// Directory holding `db/` and `expected-state`.
    #[arg(long)]
    dir: PathBuf,
    /// Writer threads (each owns a range of keys).
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Keys per thread.
    #[arg(long, default_value_t = 5_000)]
    keys_per_thread: u32,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run random operations until killed (or for `--seconds`).
    Run {
        #[command(flatten)]
        shape: Shape,
        /// Seed of the options and of the operations.
        #[arg(long)]
        seed: u64,
        /// Stop by itself after this many seconds (0: run until killed).
        #[arg(long, default_value_t = 0)]
        seconds: u64,
    },
    /// Reopen and check the database against the expected state.
    Verify {
        #[command(flatten)]
        shape: Shape,
        /// Seed of the options and of how prepared transactions are finished.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// The driver: rounds of verify, run, SIGKILL for `--minutes`.
    Crash {
        #[command(flatten)]
        shape: Shape,
        /// How long to keep killing.
        #[arg(long, default_value_t = 2.0)]
        minutes: f64,
        /// First seed (default: from the clock; printed, so a failure can be replayed).
        #[arg(long)]
        seed: Option<u64>,
        /// Longest a child runs before it is killed, in seconds.
        #[arg(long, default_value_t = 6.0)]
        max_round_seconds: f64,
    },
}

fn main() {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Cmd::Run {
            shape,
            seed,
            seconds,
        } => run(&shape, seed, seconds),
        Cmd::Verify { shape, seed } => verify_once(&shape, seed).map(|v| {
            println!("verified: {v:?}");
        }),
        Cmd::Crash {
            shape,
            minutes,
            seed,
            max_round_seconds,
        } => crash(&shape, minutes, seed, max_round_seconds),
    };
    if let Err(e) = outcome {
        eprintln!("riptide-stress: FAILED: {e:#}");
        std::process::exit(1);
    }
}

/// The options of the round with `seed`: small memtables and tables so flushes and
/// compactions run all the time, the rest at random.
fn options(seed: u64) -> (Options, String) {
    let mut r = StdRng::seed_from_u64(seed);
    let write_buffer = 1usize << r.random_range(14..=19);
    let target = 1u64 << r.random_range(15..=20);
    let l0 = r.random_range(2..=6);
    let sync = if r.random_bool(0.5) {
        SyncMode::Full
    } else {
        SyncMode::None
    };
    let zstd = r.random_bool(0.3);
    let subcompactions = r.random_range(1..=2);
    let young = r.random_bool(0.5);
    let open_files = match r.random_range(0..3) {
        0 => 16usize,
        1 => 64,
        _ => 512,
    };
    let coalesce = match r.random_range(0..3) {
        0 => 0usize,
        1 => 8,
        _ => 1024,
    };
    let opts = Options::default()
        .write_buffer_size(write_buffer)
        .target_file_size(target)
        .l0_compaction_trigger(l0)
        .sync_mode(sync)
        .compression(if zstd {
            Compression::Zstd { level: 1 }
        } else {
            Compression::None
        })
        .max_subcompactions(subcompactions)
        .young_space_bound(young)
        .max_open_files(open_files)
        .tombstone_coalesce_min_run(coalesce);
    let text = format!(
        "write_buffer {write_buffer}, target_file {target}, l0_trigger {l0}, sync {sync:?}, \
         zstd {zstd}, subcompactions {subcompactions}, young_space_bound {young}, \
         max_open_files {open_files}, coalesce {coalesce}"
    );
    (opts, text)
}

fn paths(shape: &Shape) -> (PathBuf, PathBuf) {
    (shape.dir.join("db"), shape.dir.join("expected-state"))
}

fn open_state(shape: &Shape) -> Result<StateFile> {
    std::fs::create_dir_all(&shape.dir)
        .with_context(|| format!("create {}", shape.dir.display()))?;
    StateFile::open(&paths(shape).1, shape.threads, shape.keys_per_thread)
}

fn run(shape: &Shape, seed: u64, seconds: u64) -> Result<()> {
    let state = open_state(shape)?;
    let (opts, _) = options(seed);
    let db = Db::open(paths(shape).0, opts).context("open the database")?;
    let stop = Arc::new(AtomicBool::new(false));
    let result = std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (0..shape.threads)
            .map(|t| {
                let (db, state, stop) = (&db, &state, Arc::clone(&stop));
                s.spawn(move || -> Result<()> {
                    let outcome = Worker::new(db, state, t, seed).and_then(|mut w| w.run(&stop));
                    if outcome.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    outcome
                })
            })
            .collect();
        if seconds > 0 {
            let end = Instant::now() + Duration::from_secs(seconds);
            while Instant::now() < end && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            stop.store(true, Ordering::Relaxed);
        }
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("a stress thread panicked"))??;
        }
        Ok(())
    });
    result?;
    db.close()?;
    Ok(())
}

fn verify_once(shape: &Shape, seed: u64) -> Result<verify::Verified> {
    let state = open_state(shape)?;
    let (opts, _) = options(seed);
    let db = Db::open(paths(shape).0, opts).context("reopen the database")?;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5EED);
    let v = verify::verify(&db, &state, &mut rng)?;
    db.close()?;
    Ok(v)
}

fn crash(shape: &Shape, minutes: f64, seed: Option<u64>, max_round: f64) -> Result<()> {
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let _ = std::fs::remove_dir_all(&shape.dir);
    println!(
        "crash test: {minutes} min, seed {seed}, {} threads x {} keys, in {}",
        shape.threads,
        shape.keys_per_thread,
        shape.dir.display()
    );
    let exe = std::env::current_exe().context("find this executable")?;
    let total = Duration::from_secs_f64(minutes * 60.0);
    let start = Instant::now();
    let bar = indicatif::ProgressBar::new(total.as_secs());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut rng = StdRng::seed_from_u64(seed);
    let mut totals = verify::Verified::default();
    let mut rounds = 0u64;
    let mut kill_points_fired = 0u64;
    while start.elapsed() < total {
        let round_seed = seed.wrapping_add(rounds);
        let v = verify_once(shape, round_seed).with_context(|| {
            format!(
                "verification before round {rounds} (seed {round_seed}; options: {}); the \
                 database is kept in {}",
                options(round_seed).1,
                shape.dir.display()
            )
        })?;
        add(&mut totals, &v);
        let wait = Duration::from_secs_f64(rng.random_range(0.2..max_round.max(0.3)));
        // Half the rounds also arm one named kill point inside the engine.
        let point = rng.random_bool(0.5).then(|| {
            let points = riptide::kill_points();
            let name = points
                .get(rng.random_range(0..points.len()))
                .copied()
                .unwrap_or("*");
            format!("{name}:{}", rng.random_range(2..=8))
        });
        let mut child = child_run(&exe, shape, round_seed, point.as_deref())?;
        let deadline = Instant::now() + wait;
        let mut fired = false;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait()? {
                if point.is_some() && status.signal() == Some(SIGKILL) {
                    // The armed kill point fired.
                    fired = true;
                    break;
                }
                bail!(
                    "round {rounds} (seed {round_seed}; options: {}): the stress run exited \
                     by itself ({status}) before it was killed; the database is kept in {}",
                    options(round_seed).1,
                    shape.dir.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if fired {
            kill_points_fired += 1;
        } else {
            child.kill().context("SIGKILL the stress run")?;
            child.wait()?;
        }
        rounds += 1;
        bar.set_position(start.elapsed().as_secs().min(total.as_secs()));
        bar.set_message(format!(
            "{rounds} rounds, {} operations acknowledged",
            totals.acked
        ));
    }
    let last = verify_once(shape, seed.wrapping_add(rounds)).context("final verification")?;
    add(&mut totals, &last);
    bar.finish_and_clear();
    println!(
        "crash test passed: {rounds} kills in {:.0}s ({kill_points_fired} at named kill \
         points), {} operations acknowledged, {} key checks, in-flight operations found done {} \
         / not done {}, prepared transactions committed {} / rolled back {} (seed {seed})",
        start.elapsed().as_secs_f64(),
        last.acked,
        totals.keys,
        totals.in_flight_done,
        totals.in_flight_not_done,
        totals.prepared_committed,
        totals.prepared_rolled_back
    );
    let _ = std::fs::remove_dir_all(&shape.dir);
    Ok(())
}

fn add(totals: &mut verify::Verified, v: &verify::Verified) {
    totals.keys += v.keys;
    totals.in_flight_done += v.in_flight_done;
    totals.in_flight_not_done += v.in_flight_not_done;
    totals.prepared_committed += v.prepared_committed;
    totals.prepared_rolled_back += v.prepared_rolled_back;
    totals.acked = v.acked;
}

fn child_run(
    exe: &Path,
    shape: &Shape,
    seed: u64,
    kill_point: Option<&str>,
) -> Result<std::process::Child> {
    let mut c = Command::new(exe);
    if let Some(p) = kill_point {
        c.env("RIPTIDE_KILL_POINTS", p);
    } else {
        c.env_remove("RIPTIDE_KILL_POINTS");
    }
    c.args(["run", "--dir"])
        .arg(&shape.dir)
        .args(["--threads", &shape.threads.to_string()])
        .args(["--keys-per-thread", &shape.keys_per_thread.to_string()])
        .args(["--seed", &seed.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start the stress run")
}
