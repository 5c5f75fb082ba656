//! `--workload txn`: commit throughput of small transactions (Riptide). Each transaction puts
//! 1 to 10 random keys out of 1,000,000 (16-byte keys, 100-byte values) and commits; threads
//! 1, 2, 4 and 8 (`--quick`: 1 and 4) x optimistic / pessimistic x `SyncMode::None` / `Full`,
//! a fixed time per cell (5 s; `--quick` 1 s), each on a fresh database. Conflicts (and
//! deadlocks or lock timeouts) are retried and counted as aborts. Prints a markdown table of
//! commits/s, aborts/s and p50/p99 commit latency (the `commit` call), writes `txn.csv` and
//! `txn.png` (commits/s against threads, one line per mode and sync).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::{Rng, SeedableRng, rngs::StdRng};
use riptide::{Concurrency, Db, ErrorKind, Options, SyncMode, TransactionOptions};

use riptide_chart::{self as chart, Series};

const KEY_SPACE: u64 = 1_000_000;
const VALUE_SIZE: usize = 100;
const MAX_PUTS: usize = 10;

/// One cell of the grid.
#[derive(Debug, Clone, Copy)]
struct Cell {
    threads: usize,
    concurrency: Concurrency,
    sync: SyncMode,
}

impl Cell {
    fn concurrency_name(&self) -> &'static str {
        match self.concurrency {
            Concurrency::Optimistic => "optimistic",
            Concurrency::Pessimistic => "pessimistic",
        }
    }

    fn sync_name(&self) -> &'static str {
        match self.sync {
            SyncMode::None => "none",
            SyncMode::Full => "full",
            SyncMode::Interval(_) => "interval",
        }
    }
}

/// What one cell measured.
#[derive(Debug, Clone, Copy)]
struct Measured {
    commits_per_sec: f64,
    aborts_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
}

/// What one worker thread counted.
#[derive(Default)]
struct Worker {
    commits: u64,
    aborts: u64,
    /// Duration of each successful `commit` call, in microseconds.
    commit_us: Vec<u32>,
}

fn worker(db: &Db, concurrency: Concurrency, seed: u64, deadline: Instant) -> Result<Worker> {
    let cf = db.default_cf();
    let opts = TransactionOptions::default()
        .concurrency(concurrency)
        .lock_timeout(Duration::from_secs(1));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut value = vec![0u8; VALUE_SIZE];
    let mut out = Worker::default();
    while Instant::now() < deadline {
        let n = rng.random_range(1..=MAX_PUTS);
        let keys: Vec<[u8; 16]> = (0..n)
            .map(|_| crate::key_of(rng.random_range(0..KEY_SPACE)))
            .collect();
        rng.fill(&mut value[..]);
        // Retry the same transaction until it commits (or the cell is over).
        loop {
            let txn = db.begin_transaction(opts.clone())?;
            let attempt = keys
                .iter()
                .try_for_each(|k| txn.put(&cf, k, &value))
                .and_then(|()| {
                    let started = Instant::now();
                    txn.commit()?;
                    Ok(started.elapsed())
                });
            match attempt {
                Ok(took) => {
                    out.commits += 1;
                    out.commit_us
                        .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
                    break;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Conflict | ErrorKind::Deadlock | ErrorKind::TimedOut
                    ) =>
                {
                    out.aborts += 1;
                    if Instant::now() >= deadline {
                        break;
                    }
                }
                Err(e) => return Err(e).context("transaction"),
            }
        }
    }
    Ok(out)
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted.get(i).copied().map_or(0.0, f64::from)
}

fn measure(cell: Cell, seconds: u64, dir: &Path) -> Result<Measured> {
    let _ = std::fs::remove_dir_all(dir);
    let db = Db::open(dir, Options::default().sync_mode(cell.sync))
        .with_context(|| format!("open {}", dir.display()))?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let workers: Vec<Worker> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cell.threads)
            .map(|t| {
                let db = &db;
                s.spawn(move || worker(db, cell.concurrency, 0x5EED + t as u64, deadline))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("a worker thread panicked"))?
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    db.close()?;
    let _ = std::fs::remove_dir_all(dir);
    let commits: u64 = workers.iter().map(|w| w.commits).sum();
    let aborts: u64 = workers.iter().map(|w| w.aborts).sum();
    let mut latencies: Vec<u32> = workers.into_iter().flat_map(|w| w.commit_us).collect();
    latencies.sort_unstable();
    Ok(Measured {
        commits_per_sec: commits as f64 / elapsed,
        aborts_per_sec: aborts as f64 / elapsed,
        p50_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
    })
}

/// Runs the grid and writes `txn.csv` and `txn.png` into `out`.
pub fn run(quick: bool, dir: &Path, out: &Path) -> Result<()> {
    let (thread_counts, seconds): (&[usize], u64) = if quick {
        (&[1, 4], 1)
    } else {
        (&[1, 2, 4, 8], 5)
    };
    let mut cells = Vec::new();
    for concurrency in [Concurrency::Optimistic, Concurrency::Pessimistic] {
        for sync in [SyncMode::None, SyncMode::Full] {
            for &threads in thread_counts {
                cells.push(Cell {
                    threads,
                    concurrency,
                    sync,
                });
            }
        }
    }
    let pb = crate::progress(cells.len() as u64, "txn cells".into());
    let mut rows = Vec::new();
    for cell in &cells {
        let m = measure(*cell, seconds, dir)?;
        rows.push((*cell, m));
        pb.inc(1);
    }
    pb.finish_and_clear();

    println!(
        "# txn: 1-{MAX_PUTS} random puts per transaction over {KEY_SPACE} keys, 16-byte keys, \
         {VALUE_SIZE}-byte values, {seconds} s per cell"
    );
    println!(
        "| threads | concurrency | sync | commits/s | aborts/s | p50 commit (us) | p99 commit (us) |"
    );
    println!("|---:|---|---|---:|---:|---:|---:|");
    let mut csv = String::from(
        "threads,concurrency,sync,commits_per_sec,aborts_per_sec,p50_commit_us,p99_commit_us\n",
    );
    for (cell, m) in &rows {
        println!(
            "| {} | {} | {} | {:.0} | {:.1} | {:.0} | {:.0} |",
            cell.threads,
            cell.concurrency_name(),
            cell.sync_name(),
            m.commits_per_sec,
            m.aborts_per_sec,
            m.p50_us,
            m.p99_us
        );
        csv.push_str(&format!(
            "{},{},{},{:.0},{:.1},{:.0},{:.0}\n",
            cell.threads,
            cell.concurrency_name(),
            cell.sync_name(),
            m.commits_per_sec,
            m.aborts_per_sec,
            m.p50_us,
            m.p99_us
        ));
    }
    let csv_path = out.join("txn.csv");
    std::fs::write(&csv_path, csv).with_context(|| format!("write {}", csv_path.display()))?;

    let mut series: Vec<Series> = Vec::new();
    for (cell, m) in &rows {
        let name = format!("{}, sync {}", cell.concurrency_name(), cell.sync_name());
        let point = (cell.threads as f64, m.commits_per_sec);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    let png = out.join("txn.png");
    chart::lines(
        &png,
        &format!("Small transactions (1-{MAX_PUTS} puts): commits per second"),
        "threads",
        "commits/s",
        &series,
    )?;
    println!("\nresults: {} and {}", csv_path.display(), png.display());
    Ok(())
}
