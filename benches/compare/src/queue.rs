//! `--workload queue`: the pattern that collapsed another LSM engine (TideSQL issue 122).
//! One thread inserts at the high end of the key space, another deletes from the low end at
//! the same rate (the table keeps `preload` rows), a third scans 100 rows from the low end
//! again and again, walking whatever tombstones lie there. Reports rows per second and scans
//! per second in 10-second windows (CSV + PNG) and whether every window stayed within 3x of
//! the median.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use riptide::{Db, Options, ReadOptions, SyncMode, WriteBatch};

use crate::median;
use riptide_chart::{self as chart, Series};

const WINDOW: Duration = Duration::from_secs(10);

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

/// Runs the workload and writes `queue.csv` and `queue.png` into `out`.
pub fn run(
    preload: u64,
    seconds: u64,
    value_size: usize,
    young_space_bound: bool,
    dir: &Path,
    out: &Path,
) -> Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    let opts = Options::default()
        .young_space_bound(young_space_bound)
        .sync_mode(SyncMode::None)
        .write_buffer_size(64 << 20)
        .block_cache_size(128 << 20);
    let db = Arc::new(Db::open(dir, opts)?);
    let value = vec![7u8; value_size];
    let mut batch = WriteBatch::new();
    for i in 0..preload {
        batch.put(&key(i), &value);
        if batch.len() == 1000 {
            db.write(std::mem::take(&mut batch))?;
        }
    }
    db.write(batch)?;

    let inserted = Arc::new(AtomicU64::new(preload));
    let deleted = Arc::new(AtomicU64::new(0));
    let scans = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    {
        let (db, inserted, stop, value) = (
            Arc::clone(&db),
            Arc::clone(&inserted),
            Arc::clone(&stop),
            value.clone(),
        );
        threads.push(std::thread::spawn(move || -> riptide::Result<()> {
            while !stop.load(Ordering::Relaxed) {
                let next = inserted.load(Ordering::Relaxed);
                db.put(&key(next), &value)?;
                inserted.store(next + 1, Ordering::Release);
            }
            Ok(())
        }));
    }
    {
        let (db, inserted, deleted, stop) = (
            Arc::clone(&db),
            Arc::clone(&inserted),
            Arc::clone(&deleted),
            Arc::clone(&stop),
        );
        threads.push(std::thread::spawn(move || -> riptide::Result<()> {
            while !stop.load(Ordering::Relaxed) {
                let low = deleted.load(Ordering::Relaxed);
                // Same rate as the inserter: keep `preload` rows.
                if low + preload >= inserted.load(Ordering::Acquire) {
                    std::thread::yield_now();
                    continue;
                }
                db.delete(&key(low))?;
                deleted.store(low + 1, Ordering::Relaxed);
            }
            Ok(())
        }));
    }
    {
        let (db, scans, stop) = (Arc::clone(&db), Arc::clone(&scans), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || -> riptide::Result<()> {
            while !stop.load(Ordering::Relaxed) {
                let mut it = db.iter(ReadOptions::default())?;
                it.seek_to_first()?;
                let mut n = 0;
                while it.valid() && n < 100 {
                    n += 1;
                    it.next()?;
                }
                scans.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }));
    }

    let pb = crate::progress(seconds, "queue (seconds)".into());
    let start = Instant::now();
    let mut windows: Vec<(f64, f64, f64)> = Vec::new();
    let (mut last_rows, mut last_scans) = (0u64, 0u64);
    while start.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(WINDOW.min(Duration::from_secs(seconds)));
        let rows = deleted.load(Ordering::Relaxed);
        let sc = scans.load(Ordering::Relaxed);
        let secs = WINDOW.as_secs_f64();
        windows.push((
            start.elapsed().as_secs_f64(),
            (rows - last_rows) as f64 / secs,
            (sc - last_scans) as f64 / secs,
        ));
        last_rows = rows;
        last_scans = sc;
        pb.set_position(start.elapsed().as_secs());
    }
    pb.finish_and_clear();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked"))??;
    }

    let rows: Vec<f64> = windows.iter().map(|w| w.1).collect();
    let med = median(rows.clone());
    let (lo, hi) = rows
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &r| (a.min(r), b.max(r)));
    let steady = rows.iter().all(|&r| r * 3.0 >= med && r <= med * 3.0);
    let scan_med = median(windows.iter().map(|w| w.2).collect());
    println!(
        "# queue: {preload} rows kept, insert at the high end, delete at the low end, {seconds} s"
    );
    println!("| metric | value |");
    println!("|---|---:|");
    println!("| rows/s (insert + delete), median of 10 s windows | {med:.0} |");
    println!("| slowest / fastest window | {lo:.0} / {hi:.0} |");
    println!(
        "| every window within 3x of the median | {} |",
        if steady { "yes" } else { "NO" }
    );
    println!("| scans of 100 rows from the low end per second, median | {scan_med:.0} |");
    println!("\n{}", db.statistics());

    let mut csv = String::from("second,rows_per_sec,scans_per_sec\n");
    for (t, r, s) in &windows {
        csv.push_str(&format!("{t:.0},{r:.0},{s:.1}\n"));
    }
    let csv_path = out.join("queue.csv");
    std::fs::write(&csv_path, csv).with_context(|| format!("write {}", csv_path.display()))?;
    let png = out.join("queue.png");
    chart::lines(
        &png,
        "Insert at the high end, delete at the low end, scan from the low end (10 s windows)",
        "seconds",
        "per second",
        &[Series {
            name: "rows inserted and deleted".into(),
            points: windows.iter().map(|w| (w.0, w.1)).collect(),
        }],
    )?;
    // Scans run at a far smaller rate: their own chart, so their curve is readable.
    let scans_png = out.join("queue-scans.png");
    chart::lines(
        &scans_png,
        "Scans of 100 rows from the low end, over deleted rows (10 s windows)",
        "seconds",
        "scans per second",
        &[Series {
            name: "scans of 100 rows".into(),
            points: windows.iter().map(|w| (w.0, w.2)).collect(),
        }],
    )?;
    println!(
        "results: {}, {} and {}",
        csv_path.display(),
        png.display(),
        scans_png.display()
    );
    Ok(())
}
