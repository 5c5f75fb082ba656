//! `riptide-bench`: loads N random keys into each engine and reads them back, in one process,
//! so the engines are compared on the same machine in the same run. Prints a markdown table
//! with ratios against the peers and the absolute numbers beside them.
//!
//! Workloads (db_bench names): `fillrandom` (N puts of random 16-byte keys, 100-byte values,
//! no fsync), `readrandom` (N gets of those keys in another random order: all hits).
//! Each is repeated `--repeat` times on a fresh database; the median is reported.

mod chart;
mod engines;
mod queue;
mod sustained;
mod txn;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

/// Which benchmark to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    /// fillrandom + readrandom on every engine compiled in, with ratios.
    Compare,
    /// Random fill of N keys then an overwrite of all of them: throughput every second,
    /// longest stall, write and space amplification (Riptide).
    Sustained,
    /// Insert at the high end while deleting from the low end, scans from the low end:
    /// rows per second in 10-second windows (the pattern of TideSQL issue 122; Riptide).
    Queue,
    /// Commit throughput of small transactions (1-10 random puts): threads x optimistic /
    /// pessimistic x sync none / full, 5 s per cell (`--quick`: 1 s, threads 1 and 4; Riptide).
    Txn,
}

#[derive(Parser, Debug)]
#[command(about = "Riptide benchmarks against peer engines")]
struct Args {
    /// The benchmark.
    #[arg(long, value_enum, default_value = "compare")]
    workload: Workload,
    /// For `queue`: how long to run, in seconds.
    #[arg(long, default_value_t = 600)]
    seconds: u64,
    /// For `sustained`: Riptide's `max_compaction_bytes` in MiB (default: the engine's).
    #[arg(long)]
    max_compaction_mib: Option<u64>,
    /// For `sustained` and `queue`: turn Riptide's `young_space_bound` off (to measure what
    /// the young-database rules cost or save).
    #[arg(long)]
    no_young_space_bound: bool,
    /// For `queue`: rows preloaded before the run.
    #[arg(long, default_value_t = 1_000_000)]
    preload: u64,
    /// Where CSV files and PNG charts go. Default: target/bench-results.
    /// Number of keys.
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// Repetitions per engine and workload (median reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Small and fast: 100,000 keys, one repetition.
    #[arg(long)]
    quick: bool,
    #[arg(long)]
    out: Option<PathBuf>,
    /// Directory for the databases (wiped per run). Default: target/bench-data.
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Deterministic 16-byte key number `i`: a scramble of i, so insertion order is random but
/// every key can be regenerated for reads.
pub(crate) fn key_of(i: u64) -> [u8; 16] {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ 0xD6E8_FEB8_6659_FD93;
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

pub(crate) fn progress(n: u64, msg: String) -> ProgressBar {
    let pb = ProgressBar::new(n);
    pb.set_style(
        ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} ({per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg);
    pb
}

#[derive(Debug, Clone, Copy)]
struct Run {
    fill_ops: f64,
    read_ops: f64,
    disk_bytes: u64,
}

/// Peak resident set size of this process (`VmHWM` in `/proc/self/status`), if readable.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub(crate) fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn one_run(kind: engines::Kind, dir: &std::path::Path, args: &Args, rep: usize) -> Result<Run> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let engine = engines::open(kind, dir)?;
    let n = args.keys;
    let mut value = vec![0u8; args.value_size];
    let pb = progress(n, format!("{} fillrandom #{}", kind.name(), rep + 1));
    let start = Instant::now();
    for i in 0..n {
        value[..8.min(args.value_size)].copy_from_slice(&i.to_le_bytes()[..8.min(args.value_size)]);
        engine.put(&key_of(i), &value)?;
        if i % 8192 == 0 {
            pb.set_position(i);
        }
    }
    let fill = start.elapsed().as_secs_f64();
    pb.finish_and_clear();

    let pb = progress(n, format!("{} readrandom #{}", kind.name(), rep + 1));
    let start = Instant::now();
    for j in 0..n {
        let i = j.wrapping_mul(0x2545_F491_4F6C_DD1D) % n;
        let got = engine.get(&key_of(i))?;
        anyhow::ensure!(got.is_some(), "{}: key {i} missing", kind.name());
        if j % 8192 == 0 {
            pb.set_position(j);
        }
    }
    let read = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    drop(engine);
    Ok(Run {
        fill_ops: n as f64 / fill,
        read_ops: n as f64 / read,
        disk_bytes: dir_size(dir),
    })
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> Result<()> {
    let mut args = Args::parse();
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let base = args
        .dir
        .clone()
        .unwrap_or_else(|| target.join("bench-data"));
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| target.join("bench-results"));
    std::fs::create_dir_all(&out).with_context(|| format!("create {}", out.display()))?;
    match args.workload {
        Workload::Compare => {
            if args.quick {
                args.keys = args.keys.min(100_000);
                args.repeat = 1;
            }
            compare(&args, &base, &out)
        }
        Workload::Sustained => {
            if args.quick {
                args.keys = args.keys.min(300_000);
            }
            sustained::run(
                args.keys,
                args.value_size,
                args.max_compaction_mib.map(|m| m << 20),
                !args.no_young_space_bound,
                &base.join("sustained"),
                &out,
            )
        }
        Workload::Queue => {
            if args.quick {
                args.seconds = args.seconds.min(20);
                args.preload = args.preload.min(100_000);
            }
            queue::run(
                args.preload,
                args.seconds,
                args.value_size,
                !args.no_young_space_bound,
                &base.join("queue"),
                &out,
            )
        }
        Workload::Txn => txn::run(args.quick, &base.join("txn"), &out),
    }
}

/// fillrandom + readrandom on every engine, median of `repeat` runs, with ratios.
fn compare(args: &Args, base: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let base = base.to_path_buf();
    println!(
        "# fillrandom / readrandom: {} keys, 16-byte keys, {}-byte values, no fsync, median of {}",
        args.keys, args.value_size, args.repeat
    );
    let mut rows = Vec::new();
    for kind in engines::available() {
        let dir = base.join(kind.name());
        let mut runs = Vec::new();
        for rep in 0..args.repeat {
            runs.push(one_run(kind, &dir, args, rep)?);
        }
        let fill = median(runs.iter().map(|r| r.fill_ops).collect());
        let read = median(runs.iter().map(|r| r.read_ops).collect());
        let disk = runs.last().map(|r| r.disk_bytes).unwrap_or(0);
        rows.push((kind, fill, read, disk));
        let _ = std::fs::remove_dir_all(&dir);
    }
    let peer = rows.iter().find(|r| r.0.name() != "riptide").copied();
    println!();
    println!("| engine | fillrandom ops/s | readrandom ops/s | disk after load (MiB) |");
    println!("|---|---:|---:|---:|");
    for (kind, fill, read, disk) in &rows {
        println!(
            "| {} | {:.0} | {:.0} | {:.1} |",
            kind.name(),
            fill,
            read,
            *disk as f64 / (1 << 20) as f64
        );
    }
    if let (Some(r), Some(p)) = (rows.iter().find(|r| r.0.name() == "riptide"), peer) {
        println!();
        println!(
            "riptide / {}: fillrandom {:.2}x, readrandom {:.2}x",
            p.0.name(),
            r.1 / p.1,
            r.2 / p.2
        );
    }
    let mut csv = String::from("engine,fillrandom_ops_per_sec,readrandom_ops_per_sec,disk_bytes\n");
    for (kind, fill, read, disk) in &rows {
        csv.push_str(&format!("{},{fill:.0},{read:.0},{disk}\n", kind.name()));
    }
    let csv_path = out.join("compare.csv");
    std::fs::write(&csv_path, csv).with_context(|| format!("write {}", csv_path.display()))?;
    let groups = vec![
        (
            "fillrandom".to_string(),
            rows.iter().map(|r| (r.0.name().to_string(), r.1)).collect(),
        ),
        (
            "readrandom".to_string(),
            rows.iter().map(|r| (r.0.name().to_string(), r.2)).collect(),
        ),
    ];
    let png = out.join("compare.png");
    chart::ratio_bars(
        &png,
        &format!(
            "{} random 16-byte keys, {}-byte values",
            args.keys, args.value_size
        ),
        &groups,
    )?;
    println!("\nresults: {} and {}", csv_path.display(), png.display());
    Ok(())
}
