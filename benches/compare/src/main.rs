//! `riptide-bench`: a db_bench-style comparison of Riptide with RocksDB (feature `rocksdb`)
//! and fjall, and Riptide-only workloads.
//!
//! The default `--workload dbbench` runs db_bench's workloads (fillseq, fillrandom, overwrite,
//! readrandom, readmissing, readseq, seekrandom, readwhilewriting, deleterandom, fillbatch) on
//! every engine, each engine in its own child process, `--repeat` times, and writes a markdown
//! table with ratios, JSON, CSV and PNG charts into `target/bench-results/dbbench-<UTC time>/`
//! (see [`dbbench`]). `--workload sustained|queue|txn` are the Riptide-only workloads.

mod dbbench;
mod engines;
mod queue;
mod sustained;
mod txn;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

/// Which benchmark to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    /// db_bench's workloads on every engine compiled in (Riptide, fjall, RocksDB with the
    /// `rocksdb` feature), each in its own process, with ratios.
    Dbbench,
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
    #[arg(long, value_enum, default_value = "dbbench")]
    workload: Workload,
    /// For `dbbench`: engines to run, comma-separated (default: every engine compiled in:
    /// riptide, fjall, and rocksdb with the `rocksdb` feature).
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// Number of keys.
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// For `dbbench`: gets of readrandom, readmissing and readwhilewriting (default: --keys).
    #[arg(long)]
    reads: Option<u64>,
    /// For `dbbench`: seeks of seekrandom, each followed by 100 nexts (default: --keys / 10).
    #[arg(long)]
    seeks: Option<u64>,
    /// For `dbbench`: reader threads of readwhilewriting (plus one writer).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// For `dbbench`: durability of every write (none: written to the OS, not fsynced).
    #[arg(long, value_enum, default_value = "none")]
    sync: engines::SyncMode,
    /// For `dbbench`: longest wait, after a workload that writes, for the engine to stop
    /// writing (so write amplification includes the flushes and compactions it caused).
    #[arg(long, default_value_t = 120)]
    quiesce_secs: u64,
    /// Repetitions per engine (median reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Small and fast (CI): `dbbench` 50,000 keys and one repetition; smaller sizes and
    /// shorter runs for the other workloads.
    #[arg(long)]
    quick: bool,
    /// For `queue`: how long to run, in seconds.
    #[arg(long, default_value_t = 600)]
    seconds: u64,
    /// For `sustained`: Riptide's `max_compaction_bytes` in MiB (default: the engine's).
    #[arg(long)]
    max_compaction_mib: Option<u64>,
    /// Turn Riptide's `young_space_bound` off (to measure what the young-database rules
    /// cost or save; `dbbench`, `sustained` and `queue`).
    #[arg(long)]
    no_young_space_bound: bool,
    /// For `dbbench`: one more Riptide option, as `NAME=VALUE` with a name of
    /// `riptide::Options::TABLE` (for example `compaction_pri=round_robin`), for A/B runs of
    /// a setting; repeatable. Applied after the shared settings; the report lists it.
    #[arg(long = "riptide-option")]
    riptide_options: Vec<String>,
    /// For `queue`: rows preloaded before the run.
    #[arg(long, default_value_t = 1_000_000)]
    preload: u64,
    /// Where results go (`dbbench`: a new `dbbench-<UTC time>` directory inside).
    /// Default: target/bench-results.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Directory for the databases (wiped per run). Default: target/bench-data.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// For `dbbench`: only re-render results.md, results.csv and the charts from this
    /// results.json of an earlier run (into its directory).
    #[arg(long)]
    render: Option<PathBuf>,
    /// Internal: run as the `dbbench` child for this engine.
    #[arg(long, hide = true)]
    engine: Option<String>,
    /// Internal: the child's repetition number.
    #[arg(long, hide = true, default_value_t = 1)]
    rep: usize,
    /// Internal: where the child writes its JSON result.
    #[arg(long, hide = true)]
    result_file: Option<PathBuf>,
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

/// Peak resident set size of this process (`VmHWM` in `/proc/self/status`), if readable.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes of the files under `p`, subdirectories included (0 if unreadable).
pub(crate) fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Disk space used by the files under `p` (allocated blocks, so preallocated or sparse
/// files count what they occupy), subdirectories included.
pub(crate) fn disk_usage(p: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => disk_usage(&e.path()),
                    Ok(m) => m.blocks() * 512,
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> Result<()> {
    let mut args = Args::parse();
    if args.engine.is_some() {
        args.workload = Workload::Dbbench;
    }
    // benches/compare -> the workspace root.
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.join("../../target"), |root| root.join("target"));
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
        Workload::Dbbench => {
            if args.quick {
                args.keys = args.keys.min(50_000);
                args.repeat = 1;
                args.quiesce_secs = args.quiesce_secs.min(10);
            }
            let cfg = dbbench::Config {
                keys: args.keys,
                value_size: args.value_size,
                reads: args.reads.unwrap_or(args.keys),
                seeks: args.seeks.unwrap_or(args.keys / 10).max(1),
                threads: args.threads.max(1),
                sync: args.sync,
                quiesce_secs: args.quiesce_secs,
                young_space_bound: !args.no_young_space_bound,
                riptide_options: args.riptide_options.clone(),
            };
            if let Some(json) = &args.render {
                return dbbench::render(json);
            }
            if let Some(engine) = &args.engine {
                // A child: `--dir` is this engine's database directory.
                let result = args
                    .result_file
                    .as_deref()
                    .context("--engine needs --result-file")?;
                let dir = args.dir.as_deref().context("--engine needs --dir")?;
                return dbbench::child(engines::Kind::parse(engine)?, &cfg, dir, args.rep, result);
            }
            let base = base.join("dbbench");
            let kinds = if args.engines.is_empty() {
                engines::available()
            } else {
                args.engines
                    .iter()
                    .map(|e| engines::Kind::parse(e))
                    .collect::<Result<Vec<_>>>()?
            };
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            dbbench::run(&cfg, &kinds, args.repeat.max(1), &base, &out, &command).map(|_| ())
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
