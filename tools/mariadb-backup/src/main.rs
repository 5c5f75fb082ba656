//! `riptide-mariadb-backup`: the online backup test of Riptide inside MariaDB
//! (`cargo xtask backup-test`, docs/TESTING.md; issue 20, item 1).
//!
//! A private `mariadbd` runs money transfers on RIPTIDE tables from several connections
//! ([`load`]: two account rows and a ledger row per transaction, secondary indexes on both
//! tables, small memtables so flushes and compactions run all along). Meanwhile checkpoints
//! are taken with `SET GLOBAL riptide_create_checkpoint`, one every `--interval-ms`. For
//! each, every connection's count of acknowledged transfers is read just before the SET is
//! sent, and its count of transfers whose COMMIT was sent just after the SET returns. Then
//! the load stops, the server shuts down cleanly, and each checkpoint is started in a second
//! server (a copy of the primary's data directory for the table definitions, the checkpoint
//! as `--riptide-data-dir`) and checked ([`verify`]). It must hold every transfer
//! acknowledged before it began, none sent after it ended, each transfer whole; its ledger
//! must explain every balance, CHECK TABLE must pass, and every index must agree with its
//! table. An XA transaction prepared before the first checkpoint (and never finished on the
//! primary) must be listed by `XA RECOVER` in every restored server, its row invisible until
//! `XA COMMIT` there makes it visible. The writers' stall at each checkpoint (the engine's own figure, from the error
//! log) is reported.
//!
//! Exit status 0 only if every checkpoint verified.

mod load;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use mysql::prelude::Queryable;
use riptide_mariadb_server::Server;

use crate::load::Progress;
use crate::verify::{Bounds, Checkpoint, verify};

#[derive(Parser)]
#[command(
    name = "riptide-mariadb-backup",
    about = "Online backup test of RIPTIDE inside MariaDB: checkpoints under a write load, each \
             restored in a second server and verified against the writers' ledger"
)]
struct Cli {
    /// Working directory: the servers' data directories, sockets, logs, the checkpoints.
    /// Emptied at the start.
    #[arg(long)]
    dir: PathBuf,
    /// Folder holding ha_riptide.so.
    #[arg(long)]
    plugin_dir: PathBuf,
    /// `--plugin-maturity` for the servers (the plugin declares experimental).
    #[arg(long, default_value = "experimental")]
    plugin_maturity: String,
    /// Checkpoints to take and verify.
    #[arg(long, default_value_t = 20)]
    checkpoints: u32,
    /// Milliseconds of load between two checkpoints.
    #[arg(long, default_value_t = 1000)]
    interval_ms: u64,
    /// Connections writing at once.
    #[arg(long, default_value_t = 4)]
    connections: u64,
    /// Seed of the transfers (default: from the clock); printed for replay.
    #[arg(long)]
    seed: Option<u64>,
}

/// The servers' options: small memtables and tables, so that the load flushes and compacts
/// while the checkpoints are taken (their table files are linked while compactions replace
/// them).
fn server_args() -> Vec<String> {
    [
        "--riptide=FORCE",
        "--riptide-write-buffer-size=1048576",
        "--riptide-db-write-buffer-size=4194304",
        "--riptide-target-file-size=1048576",
        "--riptide-l0-compaction-trigger=2",
        "--innodb-buffer-pool-size=32M",
        // Each restore copies the primary's data directory (InnoDB's redo log included).
        "--innodb-log-file-size=8M",
        "--max-connections=64",
    ]
    .map(String::from)
    .to_vec()
}

fn main() {
    if let Err(e) = run(&Cli::parse()) {
        eprintln!("riptide-mariadb-backup: FAILED: {e:#}");
        std::process::exit(1);
    }
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {what} {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

fn run(cli: &Cli) -> Result<()> {
    let seed = cli.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    if cli.checkpoints == 0 || cli.connections == 0 {
        bail!("--checkpoints and --connections must be at least 1");
    }
    println!(
        "riptide-mariadb-backup: seed {seed}, {} checkpoints every {} ms, {} connections",
        cli.checkpoints, cli.interval_ms, cli.connections
    );
    let _ = std::fs::remove_dir_all(&cli.dir);
    std::fs::create_dir_all(&cli.dir).with_context(|| format!("creating {}", cli.dir.display()))?;
    let dir = std::path::absolute(&cli.dir)?;
    let mut primary = Server::new(&dir.join("primary"), &cli.plugin_dir, &cli.plugin_maturity)?;
    primary.install()?;
    primary.start(&server_args())?;
    load::create(&primary)?;
    let xa = load::prepare_xa(&primary).context("preparing the XA transaction")?;

    let (checkpoints, transfers, load_time) = take_checkpoints(cli, &dir, &primary, seed)?;
    let stalls = logged_checkpoints(&primary.log_since_start());
    drop(xa);
    primary.shutdown()?;
    if stalls.len() != checkpoints.len() {
        bail!(
            "the error log reports {} checkpoints, {} were taken",
            stalls.len(),
            checkpoints.len()
        );
    }

    let pb = bar(checkpoints.len() as u64, "checkpoints verified");
    let mut in_flight = 0u64;
    let mut largest = 0u64;
    let mut starts = Vec::new();
    for cp in &checkpoints {
        pb.set_message(cp.dir.display().to_string());
        let v = verify(
            cp,
            &primary.datadir(),
            &dir.join("restore"),
            &cli.plugin_dir,
            &cli.plugin_maturity,
            &server_args(),
        )?;
        in_flight += v.in_flight;
        largest = largest.max(v.transfers);
        starts.push(v.start);
        let _ = std::fs::remove_dir_all(&cp.dir);
        pb.inc(1);
    }
    pb.finish_and_clear();

    let mut stall_us: Vec<u64> = stalls.iter().map(|s| s.0).collect();
    let mut took_ms: Vec<u64> = stalls.iter().map(|s| s.1).collect();
    starts.sort();
    println!(
        "riptide-mariadb-backup: passed: {} checkpoints taken under load ({transfers} transfers \
         in {:.1} s, {:.0}/s) and verified in a second server each, the last holding \
         {largest} transfers; {in_flight} transfers in flight at a checkpoint were in it, whole; \
         a prepared XA transaction listed by XA RECOVER and committed in each; writers held off per checkpoint \
         min / median / max {} / {} / {} us; a checkpoint took {} / {} / {} ms; a restored \
         server started in {} ms (median)",
        checkpoints.len(),
        load_time.as_secs_f64(),
        transfers as f64 / load_time.as_secs_f64().max(1e-9),
        min(&stall_us),
        median(&mut stall_us),
        max(&stall_us),
        min(&took_ms),
        median(&mut took_ms),
        max(&took_ms),
        starts.get(starts.len() / 2).map_or(0, |d| d.as_millis())
    );
    Ok(())
}

/// Runs the load and takes the checkpoints; returns them with the transfers acknowledged
/// and the load's duration.
fn take_checkpoints(
    cli: &Cli,
    dir: &Path,
    primary: &Server,
    seed: u64,
) -> Result<(Vec<Checkpoint>, u64, Duration)> {
    let stop = Arc::new(AtomicBool::new(false));
    let progress: Vec<Arc<Progress>> = (0..cli.connections)
        .map(|_| Arc::new(Progress::default()))
        .collect();
    let begun = Instant::now();
    let mut checkpoints = Vec::new();
    let outcome = thread::scope(|s| -> Result<()> {
        let writers: Vec<_> = progress
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (p, stop) = (Arc::clone(p), Arc::clone(&stop));
                s.spawn(move || load::writer(primary, i as u64, seed, p, stop))
            })
            .collect();
        let taken = (|| -> Result<()> {
            let mut c = primary.connect(None)?;
            let pb = bar(u64::from(cli.checkpoints), "checkpoints taken");
            for i in 1..=cli.checkpoints {
                thread::sleep(Duration::from_millis(cli.interval_ms));
                if writers.iter().any(|w| w.is_finished()) {
                    break;
                }
                let path = dir.join(format!("cp-{i:03}"));
                let lo: Vec<u64> = progress
                    .iter()
                    .map(|p| p.acknowledged.load(Ordering::SeqCst))
                    .collect();
                c.exec_drop(
                    "SET GLOBAL riptide_create_checkpoint = ?",
                    (path.to_string_lossy().into_owned(),),
                )
                .with_context(|| format!("checkpoint {}", path.display()))?;
                let hi: Vec<u64> = progress
                    .iter()
                    .map(|p| p.committing.load(Ordering::SeqCst))
                    .collect();
                let bounds = lo
                    .into_iter()
                    .zip(hi)
                    .map(|(lo, hi)| Bounds { lo, hi })
                    .collect();
                checkpoints.push(Checkpoint { dir: path, bounds });
                pb.inc(1);
            }
            pb.finish_and_clear();
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.join()
                .map_err(|_| anyhow!("a writer panicked"))?
                .context("a writer failed")?;
        }
        taken
    });
    let load_time = begun.elapsed();
    outcome?;
    if checkpoints.len() < cli.checkpoints as usize {
        bail!("only {} checkpoints were taken", checkpoints.len());
    }
    load::check_retries(&progress)?;
    let transfers = progress
        .iter()
        .map(|p| p.acknowledged.load(Ordering::SeqCst))
        .sum();
    Ok((checkpoints, transfers, load_time))
}

/// (writers held off in us, total ms) of every checkpoint the error log reports
/// (`RIPTIDE: checkpoint at sequence number N written to P in T ms: ...; writers held off W
/// us`).
fn logged_checkpoints(log: &str) -> Vec<(u64, u64)> {
    log.lines()
        .filter(|l| l.contains("RIPTIDE: checkpoint at sequence number"))
        .filter_map(|l| {
            let ms = l
                .split(" in ")
                .nth(1)?
                .split(" ms")
                .next()?
                .trim()
                .parse()
                .ok()?;
            let us = l
                .split("writers held off ")
                .nth(1)?
                .split(" us")
                .next()?
                .trim()
                .parse()
                .ok()?;
            Some((us, ms))
        })
        .collect()
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn min(v: &[u64]) -> u64 {
    v.iter().copied().min().unwrap_or(0)
}

fn max(v: &[u64]) -> u64 {
    v.iter().copied().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checkpoint_lines_are_read() {
        let log = "2026-11-30 1 [Note] RIPTIDE: checkpoint at sequence number 812 written to \
                   /x/cp-001 in 14 ms: 9 table files linked (3 MiB), 0 copied, 2 WAL \
                   segments, 1 MiB copied; writers held off 37 us\nother line\n";
        assert_eq!(logged_checkpoints(log), vec![(37, 14)]);
        assert!(logged_checkpoints("nothing").is_empty());
    }
}
