//! `--workload sustained`: a write load far larger than memory. Random fill of N keys, then an
//! overwrite of every key, with a 64 MiB write buffer and a 128 MiB block cache. Reports
//! throughput every second (CSV + PNG), the longest single-write stall, write amplification,
//! and space amplification during the run, at its end, and after a full manual compaction.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use riptide::{Db, Options, SyncMode};

use crate::{dir_size, key_of, progress};
use riptide_chart::{self as chart, Series};

/// One per-second sample.
#[derive(Clone)]
struct Sample {
    second: f64,
    ops_per_sec: f64,
    disk_bytes: u64,
    live_bytes: u64,
    /// Table bytes per level, then pending compaction bytes (what makes up `disk_bytes`).
    level_bytes: Vec<u64>,
    pending_compaction_bytes: u64,
}

/// Runs the workload and writes `sustained.csv` and `sustained.png` into `out`.
pub fn run(
    n: u64,
    value_size: usize,
    max_compaction_bytes: Option<u64>,
    young_space_bound: bool,
    dir: &Path,
    out: &Path,
) -> Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    let mut opts = Options::default()
        .young_space_bound(young_space_bound)
        .sync_mode(SyncMode::None)
        .write_buffer_size(64 << 20)
        .block_cache_size(128 << 20);
    if let Some(bytes) = max_compaction_bytes {
        opts = opts.max_compaction_bytes(bytes);
    }
    let db = Arc::new(Db::open(dir, opts)?);
    let entry = 16 + value_size as u64;
    let done = Arc::new(AtomicU64::new(0));
    let live_keys = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (db, done, live_keys, stop, dir) = (
            Arc::clone(&db),
            Arc::clone(&done),
            Arc::clone(&live_keys),
            Arc::clone(&stop),
            dir.to_path_buf(),
        );
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut samples = Vec::new();
            let mut last = 0;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(1));
                if stop.load(Ordering::Relaxed) {
                    // The run ended during this second: a partial sample would read as a dip.
                    break;
                }
                let now = done.load(Ordering::Relaxed);
                let stats = db.statistics();
                samples.push(Sample {
                    level_bytes: stats.levels.iter().map(|l| l.bytes).collect(),
                    pending_compaction_bytes: stats.pending_compaction_bytes,
                    second: start.elapsed().as_secs_f64(),
                    ops_per_sec: (now - last) as f64,
                    disk_bytes: dir_size(&dir),
                    live_bytes: live_keys.load(Ordering::Relaxed) * entry,
                });
                last = now;
            }
            samples
        })
    };

    let mut value = vec![0u8; value_size];
    let mut longest = Duration::ZERO;
    let mut phase_secs = [0.0f64; 2];
    for (phase, secs) in phase_secs.iter_mut().enumerate() {
        let pb = progress(
            n,
            if phase == 0 {
                "fill".into()
            } else {
                "overwrite".into()
            },
        );
        let start = Instant::now();
        for i in 0..n {
            let tag = i.wrapping_mul(31).wrapping_add(phase as u64);
            for (j, b) in value.iter_mut().enumerate().take(8) {
                *b = (tag >> (8 * j)) as u8;
            }
            let t = Instant::now();
            db.put(&key_of(i), &value)?;
            longest = longest.max(t.elapsed());
            done.fetch_add(1, Ordering::Relaxed);
            if phase == 0 {
                live_keys.store(i + 1, Ordering::Relaxed);
            }
            if i % 8192 == 0 {
                pb.set_position(i);
            }
        }
        pb.finish_and_clear();
        *secs = start.elapsed().as_secs_f64();
    }
    stop.store(true, Ordering::Relaxed);
    let samples = sampler
        .join()
        .map_err(|_| anyhow::anyhow!("sampler thread panicked"))?;
    let stats = db.statistics();
    let live = n * entry;
    let disk_end = dir_size(dir);
    let start = Instant::now();
    db.compact_range(&db.default_cf(), None)?;
    let compact_secs = start.elapsed().as_secs_f64();
    let disk_compacted = dir_size(dir);
    // Space amplification during the run, once at least a write buffer of data exists.
    let during = samples
        .iter()
        .filter(|s| s.live_bytes >= 64 << 20)
        .map(|s| s.disk_bytes as f64 / s.live_bytes as f64)
        .fold(0.0f64, f64::max);
    // The same once the database holds at least 1 GiB (16 write buffers), where the fixed
    // overheads of a young database (WAL, L0, the first L0 compaction's inputs and outputs
    // side by side) no longer dominate.
    let during_large = samples
        .iter()
        .filter(|s| s.live_bytes >= 1 << 30)
        .map(|s| s.disk_bytes as f64 / s.live_bytes as f64)
        .fold(0.0f64, f64::max);
    let mut amps: Vec<f64> = samples
        .iter()
        .filter(|s| s.live_bytes >= 64 << 20)
        .map(|s| s.disk_bytes as f64 / s.live_bytes as f64)
        .collect();
    amps.sort_by(f64::total_cmp);
    let during_median = amps.get(amps.len() / 2).copied().unwrap_or(0.0);
    let min_rate = samples
        .iter()
        .map(|s| s.ops_per_sec)
        .fold(f64::MAX, f64::min);

    println!("# sustained: {n} random 16-byte keys, {value_size}-byte values, fill then overwrite");
    println!("| metric | value |");
    println!("|---|---:|");
    println!("| fill | {:.0} ops/s |", n as f64 / phase_secs[0]);
    println!("| overwrite | {:.0} ops/s |", n as f64 / phase_secs[1]);
    println!("| slowest second | {min_rate:.0} ops |");
    println!(
        "| longest single write | {:.1} ms |",
        longest.as_secs_f64() * 1e3
    );
    println!(
        "| write stops / slowdowns | {} / {} |",
        stats.write_stops, stats.write_slowdowns
    );
    println!(
        "| write amplification | {:.2} |",
        stats.write_amplification()
    );
    println!("| space amplification, max during run (from 64 MiB live) | {during:.2} |");
    println!("| space amplification, max during run once live >= 1 GiB | {during_large:.2} |");
    println!("| space amplification, median during run | {during_median:.2} |");
    println!(
        "| peak RSS (VmHWM) | {} MiB |",
        crate::peak_rss_bytes().map_or_else(|| "?".into(), |b| (b >> 20).to_string())
    );
    println!(
        "| space amplification, end of run | {:.2} |",
        disk_end as f64 / live as f64
    );
    println!(
        "| space amplification, after full compaction ({compact_secs:.0} s) | {:.2} |",
        disk_compacted as f64 / live as f64
    );
    println!("\n{stats}");

    let levels = samples
        .iter()
        .map(|s| s.level_bytes.len())
        .max()
        .unwrap_or(0);
    let mut csv = String::from("second,ops_per_sec,disk_bytes,live_bytes,pending_compaction_bytes");
    for l in 0..levels {
        csv.push_str(&format!(",l{l}_bytes"));
    }
    csv.push('\n');
    for s in &samples {
        csv.push_str(&format!(
            "{:.1},{:.0},{},{},{}",
            s.second, s.ops_per_sec, s.disk_bytes, s.live_bytes, s.pending_compaction_bytes
        ));
        for l in 0..levels {
            csv.push_str(&format!(",{}", s.level_bytes.get(l).copied().unwrap_or(0)));
        }
        csv.push('\n');
    }
    let csv_path = out.join("sustained.csv");
    std::fs::write(&csv_path, csv).with_context(|| format!("write {}", csv_path.display()))?;
    let png = out.join("sustained.png");
    chart::lines(
        &png,
        &format!("Riptide: {n} random puts then {n} overwrites, writes per second"),
        "seconds",
        "writes per second",
        &[Series {
            name: "riptide".into(),
            points: samples.iter().map(|s| (s.second, s.ops_per_sec)).collect(),
        }],
    )?;
    println!("results: {} and {}", csv_path.display(), png.display());
    Ok(())
}
