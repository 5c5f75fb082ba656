//! `--workload dbbench` (the default): db_bench's workloads through one [`Engine`] interface
//! on Riptide, fjall and RocksDB (feature `rocksdb`).
//!
//! Each engine runs in its own child process (this binary re-invoked with `--engine NAME`), so
//! the peak RSS (`VmHWM`) and the bytes written to disk (`/proc/self/io` `write_bytes`) belong
//! to one engine. A child runs, each on a fresh database:
//!
//! 1. `fillseq`: N puts in key order;
//! 2. `fillrandom`: N puts in random key order, then on that database `overwrite` (N puts of
//!    random existing keys), `readrandom` (random gets, all hits), `readmissing` (random gets
//!    of absent keys, interleaved with the present ones), `readseq` (a full scan),
//!    `seekrandom` (seek to a random key, then read 100 entries), `readwhilewriting`
//!    (`--threads` readers doing random gets while one writer overwrites random keys at full
//!    speed; ops/s and latency are the readers'), `deleterandom` (every key deleted once, in
//!    random order);
//! 3. `fillbatch`: N random puts in atomic batches of 100 (ops/s counts keys, latency is per
//!    batch).
//!
//! After a workload that writes, the child waits (outside the timed window) until the engine
//! stops writing to disk (no more than 64 KiB in a second, at most `--quiesce-secs`), so each
//! workload's write amplification (disk bytes written / user bytes written) includes the
//! flushes and compactions it caused, and the next workload starts on a settled tree.
//! Latencies are per call, in an HDR histogram (3 significant digits). The parent repeats
//! every engine `--repeat` times (engines interleaved within a repetition) and reports the
//! median of each figure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use hdrhistogram::Histogram;
use riptide_chart as chart;
use serde::{Deserialize, Serialize};

use crate::engines::{self, Engine, Kind, SyncMode};
use crate::{disk_usage, key_of, median, peak_rss_bytes, progress};

/// The workloads, in the order they run and are reported.
pub const WORKLOADS: [&str; 10] = [
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readmissing",
    "readseq",
    "seekrandom",
    "readwhilewriting",
    "deleterandom",
    "fillbatch",
];

/// Entries read after each seek of `seekrandom` (db_bench `--seek_nexts`).
const SEEK_NEXTS: usize = 100;
/// Keys per batch of `fillbatch`.
const BATCH: usize = 100;

/// `true`, the default of [`Config::young_space_bound`] in results written before it existed.
fn on() -> bool {
    true
}

/// What one run measures; the parent hands it to each child on the command line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    /// Keys loaded by the fill workloads.
    pub keys: u64,
    /// Value size in bytes (keys are 16 bytes).
    pub value_size: usize,
    /// Gets of `readrandom`, `readmissing` and `readwhilewriting` (total over its readers).
    pub reads: u64,
    /// Seeks of `seekrandom`.
    pub seeks: u64,
    /// Reader threads of `readwhilewriting`.
    pub threads: usize,
    /// Durability of every write.
    pub sync: SyncMode,
    /// Longest wait for the engine to stop writing after a write workload, in seconds.
    pub quiesce_secs: u64,
    /// Riptide's `young_space_bound` (on by default; off to measure what it costs).
    #[serde(default = "on")]
    pub young_space_bound: bool,
    /// More Riptide options, each `NAME=VALUE` (`--riptide-option`), applied after the
    /// shared settings.
    #[serde(default)]
    pub riptide_options: Vec<String>,
}

/// One workload on one engine in one repetition (or the median over repetitions).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// db_bench name of the workload.
    pub workload: String,
    /// Operations counted for ops/s (keys for `fillbatch`, seeks for `seekrandom`).
    pub ops: u64,
    /// Wall time of the timed window.
    pub seconds: f64,
    /// `ops / seconds`.
    pub ops_per_sec: f64,
    /// Median latency of one call, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// 99.9th percentile latency, microseconds.
    pub p999_us: f64,
    /// Slowest call, microseconds.
    pub max_us: f64,
    /// Bytes of keys and values the workload wrote (key bytes for deletes).
    pub user_bytes: u64,
    /// `/proc/self/io` `write_bytes` during the workload and its quiesce.
    pub disk_write_bytes: u64,
    /// `disk_write_bytes / user_bytes` for workloads that write.
    pub write_amp: Option<f64>,
    /// Disk space of the database directory after the workload and its quiesce (allocated
    /// blocks).
    pub disk_bytes_after: u64,
    /// Peak RSS during the workload (`VmHWM`, reset before it through `clear_refs`).
    pub peak_rss_bytes: u64,
    /// Seconds waited after the workload for background writes to stop.
    pub quiesce_seconds: f64,
    /// `readwhilewriting`: the writer's puts per second.
    pub writer_ops_per_sec: Option<f64>,
}

/// Everything one child measured: one engine, one repetition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineRun {
    /// Engine name.
    pub engine: String,
    /// Repetition (1-based; 0 for a median).
    pub rep: usize,
    /// Per workload, in [`WORKLOADS`] order.
    pub workloads: Vec<WorkloadResult>,
    /// User bytes written over the whole run.
    pub total_user_bytes: u64,
    /// `/proc/self/io` `write_bytes` over the whole run (after a final flush).
    pub total_disk_write_bytes: u64,
    /// `total_disk_write_bytes / total_user_bytes`.
    pub total_write_amp: f64,
    /// `/proc/self/io` `cancelled_write_bytes` over the run (bytes of deleted files that never
    /// reached the disk; not subtracted above).
    pub cancelled_write_bytes: u64,
    /// Peak RSS of the child process over the whole run.
    pub peak_rss_bytes: u64,
    /// Wall time of the child, seconds.
    pub seconds: f64,
}

/// `write_bytes` and `cancelled_write_bytes` of this process.
fn proc_io() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("write_bytes:"), field("cancelled_write_bytes:"))
}

/// Resets `VmHWM` to the current RSS (Linux >= 4.0), so the next reading is this workload's.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A small fast generator (SplitMix64): the same sequence for every engine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// 16-byte key number `i` of `fillseq`: ascending.
fn seq_key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

fn fill_value(value: &mut [u8], i: u64) {
    for (d, s) in value.iter_mut().zip(i.to_le_bytes()) {
        *d = s;
    }
}

fn new_hist() -> Histogram<u64> {
    // Auto-resizing, 3 significant digits: cannot fail.
    Histogram::<u64>::new(3).unwrap_or_else(|_| unreachable!("3 significant digits is valid"))
}

/// Timed window of one workload.
struct Timing {
    seconds: f64,
    ops: u64,
    hist: Histogram<u64>,
    user_bytes: u64,
    writer_ops_per_sec: Option<f64>,
}

/// Runs `op(i)` for i in 0..calls, timing each call; `op` returns the ops it did.
fn drive(
    label: &str,
    calls: u64,
    user_bytes_per_call: u64,
    mut op: impl FnMut(u64) -> Result<u64>,
) -> Result<Timing> {
    let pb = progress(calls, label.to_string());
    let mut hist = new_hist();
    let mut ops = 0;
    let start = Instant::now();
    let mut t0 = start;
    for i in 0..calls {
        ops += op(i)?;
        let t1 = Instant::now();
        let _ = hist.record(t1.duration_since(t0).as_nanos() as u64);
        t0 = t1;
        if i % 4096 == 0 {
            pb.set_position(i);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    Ok(Timing {
        seconds,
        ops,
        hist,
        user_bytes: user_bytes_per_call * calls,
        writer_ops_per_sec: None,
    })
}

/// One child: the state between workloads.
struct Child<'a> {
    kind: Kind,
    cfg: &'a Config,
    dir: &'a Path,
    seed: u64,
    results: Vec<WorkloadResult>,
    total_user_bytes: u64,
}

impl Child<'_> {
    fn fresh(&self) -> Result<Box<dyn Engine>> {
        let _ = std::fs::remove_dir_all(self.dir);
        std::fs::create_dir_all(self.dir)
            .with_context(|| format!("create {}", self.dir.display()))?;
        engines::open(
            self.kind,
            self.dir,
            self.cfg.sync,
            self.cfg.young_space_bound,
            &self.cfg.riptide_options,
        )
    }

    /// Waits until the process has written less than 64 KiB in one second (or the cap).
    fn quiesce(&self) -> f64 {
        let start = Instant::now();
        let cap = Duration::from_secs(self.cfg.quiesce_secs);
        let mut last = proc_io().0;
        while start.elapsed() < cap {
            std::thread::sleep(Duration::from_secs(1));
            let now = proc_io().0;
            if now.saturating_sub(last) < 64 << 10 {
                break;
            }
            last = now;
        }
        start.elapsed().as_secs_f64()
    }

    fn measure(
        &mut self,
        name: &str,
        engine: &dyn Engine,
        body: impl FnOnce(&dyn Engine, &str, &mut Rng) -> Result<Timing>,
    ) -> Result<()> {
        reset_peak_rss();
        let (w0, _) = proc_io();
        let label = format!("{} {name}", self.kind.name());
        let mut rng = Rng(self.seed ^ (name.len() as u64 * 0x1000_0001));
        let t = body(engine, &label, &mut rng).with_context(|| label.clone())?;
        let quiesce_seconds = if t.user_bytes > 0 {
            self.quiesce()
        } else {
            0.0
        };
        let (w1, _) = proc_io();
        let us = |q: f64| t.hist.value_at_quantile(q) as f64 / 1000.0;
        let disk_write_bytes = w1.saturating_sub(w0);
        let r = WorkloadResult {
            workload: name.to_string(),
            ops: t.ops,
            seconds: t.seconds,
            ops_per_sec: t.ops as f64 / t.seconds.max(1e-9),
            p50_us: us(0.5),
            p99_us: us(0.99),
            p999_us: us(0.999),
            max_us: t.hist.max() as f64 / 1000.0,
            user_bytes: t.user_bytes,
            disk_write_bytes,
            write_amp: (t.user_bytes > 0).then(|| disk_write_bytes as f64 / t.user_bytes as f64),
            disk_bytes_after: disk_usage(self.dir),
            peak_rss_bytes: peak_rss_bytes().unwrap_or(0),
            quiesce_seconds,
            writer_ops_per_sec: t.writer_ops_per_sec,
        };
        eprintln!(
            "{label:>28}: {:>10.0} ops/s  p50 {:.1} us  p99 {:.1} us  p99.9 {:.1} us{}",
            r.ops_per_sec,
            r.p50_us,
            r.p99_us,
            r.p999_us,
            r.write_amp
                .map(|w| format!("  write amp {w:.2}"))
                .unwrap_or_default()
        );
        self.total_user_bytes += t.user_bytes;
        self.results.push(r);
        Ok(())
    }
}

/// The child: runs every workload on `kind` and writes an [`EngineRun`] as JSON to `result`.
pub fn child(kind: Kind, cfg: &Config, dir: &Path, rep: usize, result: &Path) -> Result<()> {
    let started = Instant::now();
    let (w_start, c_start) = proc_io();
    let mut c = Child {
        kind,
        cfg,
        dir,
        seed: 0x5EED_0000 + rep as u64,
        results: Vec::new(),
        total_user_bytes: 0,
    };
    let n = cfg.keys;
    let vs = cfg.value_size;
    let kv = 16 + vs as u64;

    // 1. fillseq on a fresh database.
    let engine = c.fresh()?;
    c.measure("fillseq", engine.as_ref(), |e, label, _| {
        let mut value = vec![0u8; vs];
        drive(label, n, kv, |i| {
            fill_value(&mut value, i);
            e.put(&seq_key(i), &value)?;
            Ok(1)
        })
    })?;
    engine.close()?;

    // 2. fillrandom and the workloads on its database.
    let engine = c.fresh()?;
    c.measure("fillrandom", engine.as_ref(), |e, label, _| {
        let mut value = vec![0u8; vs];
        drive(label, n, kv, |i| {
            fill_value(&mut value, i);
            e.put(&key_of(i), &value)?;
            Ok(1)
        })
    })?;
    c.measure("overwrite", engine.as_ref(), |e, label, rng| {
        let mut value = vec![0u8; vs];
        drive(label, n, kv, |i| {
            fill_value(&mut value, i ^ 0xFFFF);
            e.put(&key_of(rng.below(n)), &value)?;
            Ok(1)
        })
    })?;
    c.measure("readrandom", engine.as_ref(), |e, label, rng| {
        drive(label, cfg.reads, 0, |_| {
            let i = rng.below(n);
            ensure!(e.get(&key_of(i))?.is_some(), "key {i} missing");
            Ok(1)
        })
    })?;
    c.measure("readmissing", engine.as_ref(), |e, label, rng| {
        drive(label, cfg.reads, 0, |_| {
            let i = n + rng.below(n);
            ensure!(e.get(&key_of(i))?.is_none(), "absent key {i} found");
            Ok(1)
        })
    })?;
    c.measure("readseq", engine.as_ref(), |e, label, _| {
        let mut cur = e.cursor()?;
        cur.seek(&[])?;
        let mut bytes = 0usize;
        let t = drive(label, n, 0, |_| {
            ensure!(cur.valid(), "scan ended early");
            bytes += cur.key().len() + cur.value().len();
            cur.next()?;
            Ok(1)
        })?;
        ensure!(!cur.valid(), "scan found more than {n} keys");
        ensure!(
            bytes as u64 == n * kv,
            "scan read {bytes} bytes, expected {}",
            n * kv
        );
        Ok(t)
    })?;
    c.measure("seekrandom", engine.as_ref(), |e, label, rng| {
        let mut cur = e.cursor()?;
        let mut entries = 0u64;
        let t = drive(label, cfg.seeks, 0, |_| {
            cur.seek(&key_of(rng.below(n)))?;
            let mut k = 0;
            while k < SEEK_NEXTS && cur.valid() {
                entries += cur.value().len() as u64 / vs.max(1) as u64;
                cur.next()?;
                k += 1;
            }
            Ok(1)
        })?;
        // Fewer than 100 only after a seek near the end of the key space.
        ensure!(
            entries >= cfg.seeks * SEEK_NEXTS as u64 * 9 / 10,
            "seekrandom read only {entries} entries"
        );
        Ok(t)
    })?;
    c.measure("readwhilewriting", engine.as_ref(), |e, label, rng| {
        read_while_writing(e, label, cfg, rng.next())
    })?;
    c.measure("deleterandom", engine.as_ref(), |e, label, _| {
        drive(label, n, 16, |i| {
            e.delete(&key_of(i))?;
            Ok(1)
        })
    })?;
    engine.close()?;

    // 3. fillbatch on a fresh database.
    let engine = c.fresh()?;
    c.measure("fillbatch", engine.as_ref(), |e, label, _| {
        let keys: Vec<[u8; 16]> = (0..BATCH as u64).map(key_of).collect();
        let mut keys = keys;
        let mut values = vec![vec![0u8; vs]; BATCH];
        let calls = n.div_ceil(BATCH as u64);
        drive(label, calls, kv * BATCH as u64, |b| {
            let first = b * BATCH as u64;
            let m = (n - first).min(BATCH as u64) as usize;
            for (j, (k, v)) in keys.iter_mut().zip(values.iter_mut()).take(m).enumerate() {
                *k = key_of(first + j as u64);
                fill_value(v, first + j as u64);
            }
            let pairs: Vec<(&[u8], &[u8])> = keys
                .iter()
                .zip(values.iter())
                .take(m)
                .map(|(k, v)| (k.as_slice(), v.as_slice()))
                .collect();
            e.write_batch(&pairs)?;
            Ok(m as u64)
        })
    })?;
    // A final flush so every engine ends with its data in tables, then close.
    engine.flush()?;
    c.quiesce();
    engine.close()?;
    let (w_end, c_end) = proc_io();
    let run = EngineRun {
        engine: kind.name().to_string(),
        rep,
        total_user_bytes: c.total_user_bytes,
        total_disk_write_bytes: w_end - w_start,
        total_write_amp: (w_end - w_start) as f64 / c.total_user_bytes.max(1) as f64,
        cancelled_write_bytes: c_end - c_start,
        peak_rss_bytes: c
            .results
            .iter()
            .map(|r| r.peak_rss_bytes)
            .max()
            .unwrap_or(0),
        seconds: started.elapsed().as_secs_f64(),
        workloads: c.results,
    };
    let _ = std::fs::remove_dir_all(dir);
    let json = serde_json::to_string_pretty(&run)?;
    std::fs::write(result, json).with_context(|| format!("write {}", result.display()))
}

/// `--threads` readers do `reads` random gets in all while one writer overwrites random keys
/// until they are done.
fn read_while_writing(e: &dyn Engine, label: &str, cfg: &Config, seed: u64) -> Result<Timing> {
    let n = cfg.keys;
    let threads = cfg.threads.max(1);
    let per_reader = cfg.reads / threads as u64;
    let pb = progress(per_reader * threads as u64, label.to_string());
    let done = AtomicBool::new(false);
    let writes = AtomicU64::new(0);
    let start = Instant::now();
    let (hist, seconds) = std::thread::scope(|s| -> Result<(Histogram<u64>, f64)> {
        let writer = s.spawn(|| -> Result<()> {
            let mut rng = Rng(seed ^ 0xAAAA);
            let mut value = vec![0u8; cfg.value_size];
            let mut i = 0u64;
            while !done.load(Ordering::Relaxed) {
                fill_value(&mut value, i);
                e.put(&key_of(rng.below(n)), &value)?;
                i += 1;
            }
            writes.store(i, Ordering::Relaxed);
            Ok(())
        });
        let readers: Vec<_> = (0..threads)
            .map(|t| {
                let pb = pb.clone();
                s.spawn(move || -> Result<Histogram<u64>> {
                    let mut rng = Rng(seed ^ ((t as u64 + 1) * 0x1_0000_0001));
                    let mut hist = new_hist();
                    let mut t0 = Instant::now();
                    for j in 0..per_reader {
                        let i = rng.below(n);
                        ensure!(e.get(&key_of(i))?.is_some(), "key {i} missing");
                        let t1 = Instant::now();
                        let _ = hist.record(t1.duration_since(t0).as_nanos() as u64);
                        t0 = t1;
                        if j % 4096 == 0 {
                            pb.inc(4096.min(per_reader - j));
                        }
                    }
                    Ok(hist)
                })
            })
            .collect();
        let mut hist = new_hist();
        let mut first_err = None;
        for r in readers {
            match r.join() {
                Ok(Ok(h)) => {
                    let _ = hist.add(&h);
                }
                Ok(Err(e)) => first_err = first_err.or(Some(e)),
                Err(_) => first_err = first_err.or(Some(anyhow::anyhow!("a reader panicked"))),
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        match writer.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(_) => first_err = first_err.or(Some(anyhow::anyhow!("the writer panicked"))),
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok((hist, seconds)),
        }
    })?;
    pb.finish_and_clear();
    let w = writes.load(Ordering::Relaxed);
    Ok(Timing {
        seconds,
        ops: per_reader * threads as u64,
        hist,
        user_bytes: w * (16 + cfg.value_size as u64),
        writer_ops_per_sec: Some(w as f64 / seconds.max(1e-9)),
    })
}

/// UTC `YYYYMMDD-HHMMSS` of now (no date crate needed).
fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Version of a crate in the workspace's Cargo.lock (compiled in).
fn locked_version(name: &str) -> String {
    let lock = include_str!("../../../Cargo.lock");
    let needle = format!("name = \"{name}\"\nversion = \"");
    lock.find(&needle)
        .and_then(|at| {
            let rest = lock.get(at + needle.len()..)?;
            Some(rest.split('"').next()?.to_string())
        })
        .unwrap_or_else(|| "?".into())
}

/// The parent: runs `repeat` repetitions of every engine in child processes, then writes
/// results.json, results.csv, results.md and the charts into a new directory under `out`.
pub fn run(
    cfg: &Config,
    kinds: &[Kind],
    repeat: usize,
    base: &Path,
    out: &Path,
    command: &str,
) -> Result<PathBuf> {
    let dir = out.join(format!("dbbench-{}", utc_stamp()));
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let exe = std::env::current_exe().context("find the benchmark's own executable")?;
    eprintln!(
        "# db_bench suite: {} keys, 16-byte keys, {}-byte values, sync {}, {} reader thread(s), \
         engines {}, {repeat} repetition(s); results in {}",
        cfg.keys,
        cfg.value_size,
        cfg.sync.name(),
        cfg.threads,
        kinds
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", "),
        dir.display()
    );
    let started = Instant::now();
    let mut runs: Vec<EngineRun> = Vec::new();
    let total = repeat * kinds.len();
    for rep in 1..=repeat {
        for &kind in kinds {
            eprintln!(
                "\n[{}/{total}] {} repetition {rep} ({:.0}s so far)",
                runs.len() + 1,
                kind.name(),
                started.elapsed().as_secs_f64()
            );
            let result = dir.join(format!("raw-{}-{rep}.json", kind.name()));
            let mut c = Command::new(&exe);
            c.args(["--engine", kind.name(), "--rep", &rep.to_string()])
                .arg("--result-file")
                .arg(&result)
                .arg("--dir")
                .arg(base.join(kind.name()))
                .args(["--keys", &cfg.keys.to_string()])
                .args(["--value-size", &cfg.value_size.to_string()])
                .args(["--reads", &cfg.reads.to_string()])
                .args(["--seeks", &cfg.seeks.to_string()])
                .args(["--threads", &cfg.threads.to_string()])
                .args(["--quiesce-secs", &cfg.quiesce_secs.to_string()])
                .args(["--sync", cfg.sync.name()]);
            if !cfg.young_space_bound {
                c.arg("--no-young-space-bound");
            }
            for option in &cfg.riptide_options {
                c.args(["--riptide-option", option]);
            }
            let status = c
                .status()
                .with_context(|| format!("start child {:?}", exe.display()))?;
            if !status.success() {
                bail!("{} repetition {rep} failed ({status})", kind.name());
            }
            let text = std::fs::read_to_string(&result)
                .with_context(|| format!("read {}", result.display()))?;
            let run: EngineRun = serde_json::from_str(&text)
                .with_context(|| format!("parse {}", result.display()))?;
            let _ = std::fs::remove_file(&result);
            runs.push(run);
        }
    }
    let medians: Vec<EngineRun> = kinds.iter().map(|k| median_run(k.name(), &runs)).collect();
    let md = write_outputs(&dir, cfg, repeat, command, &runs, &medians)?;
    writeln!(std::io::stdout().lock(), "{md}")?;
    eprintln!(
        "\ndone in {:.0}s: {}",
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    Ok(dir)
}

/// The median over repetitions of every figure of `engine`.
fn median_run(engine: &str, runs: &[EngineRun]) -> EngineRun {
    let mine: Vec<&EngineRun> = runs.iter().filter(|r| r.engine == engine).collect();
    let med = |f: &dyn Fn(&EngineRun) -> f64| median(mine.iter().map(|r| f(r)).collect());
    let workloads = WORKLOADS
        .iter()
        .map(|&w| {
            let ws: Vec<&WorkloadResult> = mine
                .iter()
                .filter_map(|r| r.workloads.iter().find(|x| x.workload == w))
                .collect();
            let m = |f: &dyn Fn(&WorkloadResult) -> f64| median(ws.iter().map(|r| f(r)).collect());
            let mo = |f: &dyn Fn(&WorkloadResult) -> Option<f64>| {
                let v: Vec<f64> = ws.iter().filter_map(|r| f(r)).collect();
                (!v.is_empty()).then(|| median(v))
            };
            WorkloadResult {
                workload: w.to_string(),
                ops: m(&|r| r.ops as f64) as u64,
                seconds: m(&|r| r.seconds),
                ops_per_sec: m(&|r| r.ops_per_sec),
                p50_us: m(&|r| r.p50_us),
                p99_us: m(&|r| r.p99_us),
                p999_us: m(&|r| r.p999_us),
                max_us: m(&|r| r.max_us),
                user_bytes: m(&|r| r.user_bytes as f64) as u64,
                disk_write_bytes: m(&|r| r.disk_write_bytes as f64) as u64,
                write_amp: mo(&|r| r.write_amp),
                disk_bytes_after: m(&|r| r.disk_bytes_after as f64) as u64,
                peak_rss_bytes: m(&|r| r.peak_rss_bytes as f64) as u64,
                quiesce_seconds: m(&|r| r.quiesce_seconds),
                writer_ops_per_sec: mo(&|r| r.writer_ops_per_sec),
            }
        })
        .collect();
    EngineRun {
        engine: engine.to_string(),
        rep: 0,
        workloads,
        total_user_bytes: med(&|r| r.total_user_bytes as f64) as u64,
        total_disk_write_bytes: med(&|r| r.total_disk_write_bytes as f64) as u64,
        total_write_amp: med(&|r| r.total_write_amp),
        cancelled_write_bytes: med(&|r| r.cancelled_write_bytes as f64) as u64,
        peak_rss_bytes: med(&|r| r.peak_rss_bytes as f64) as u64,
        seconds: med(&|r| r.seconds),
    }
}

fn workload(run: &EngineRun, w: &str) -> Option<WorkloadResult> {
    run.workloads.iter().find(|x| x.workload == w).cloned()
}

/// A markdown table: one row per workload, one column per engine, then `riptide/peer`.
fn metric_table(
    md: &mut String,
    title: &str,
    medians: &[EngineRun],
    value: &dyn Fn(&WorkloadResult) -> Option<f64>,
    fmt: &dyn Fn(f64) -> String,
) {
    let rip = medians.iter().find(|r| r.engine == "riptide");
    let peers: Vec<&EngineRun> = medians.iter().filter(|r| r.engine != "riptide").collect();
    md.push_str(&format!("\n{title}\n\n| workload |"));
    for r in medians {
        md.push_str(&format!(" {} |", r.engine));
    }
    if rip.is_some() {
        for p in &peers {
            md.push_str(&format!(" riptide/{} |", p.engine));
        }
    }
    md.push_str("\n|---|");
    for _ in medians {
        md.push_str("---:|");
    }
    if rip.is_some() {
        for _ in &peers {
            md.push_str("---:|");
        }
    }
    md.push('\n');
    for w in WORKLOADS {
        let cells: Vec<Option<f64>> = medians
            .iter()
            .map(|r| workload(r, w).as_ref().and_then(value))
            .collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        md.push_str(&format!("| {w} |"));
        for c in &cells {
            md.push_str(&format!(" {} |", c.map(fmt).unwrap_or_else(|| "-".into())));
        }
        if let Some(rip) = rip {
            let mine = workload(rip, w).as_ref().and_then(value);
            for p in &peers {
                let theirs = workload(p, w).as_ref().and_then(value);
                md.push_str(&match (mine, theirs) {
                    (Some(a), Some(b)) if b > 0.0 => format!(" {:.2}x |", a / b),
                    _ => " - |".into(),
                });
            }
        }
        md.push('\n');
    }
}

/// Lowest and highest ops/s over the repetitions, per engine and workload.
fn spread_table(md: &mut String, runs: &[EngineRun], medians: &[EngineRun]) {
    md.push_str("\nThroughput spread over the repetitions, lowest / highest ops/s\n\n| workload |");
    for r in medians {
        md.push_str(&format!(" {} |", r.engine));
    }
    md.push_str("\n|---|");
    for _ in medians {
        md.push_str("---:|");
    }
    md.push('\n');
    for w in WORKLOADS {
        md.push_str(&format!("| {w} |"));
        for m in medians {
            let v: Vec<f64> = runs
                .iter()
                .filter(|r| r.engine == m.engine)
                .filter_map(|r| workload(r, w))
                .map(|x| x.ops_per_sec)
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            md.push_str(&if v.is_empty() {
                " - |".to_string()
            } else {
                format!(" {} / {} |", thousands(lo), thousands(hi))
            });
        }
        md.push('\n');
    }
}

/// Re-renders results.md, results.csv and the charts from a results.json written by [`run`]
/// (into the same directory), recomputing the medians from its raw runs.
pub fn render(json: &Path) -> Result<()> {
    let text = std::fs::read_to_string(json).with_context(|| format!("read {}", json.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parse {}", json.display()))?;
    let field = |name: &str| {
        v.get(name)
            .cloned()
            .with_context(|| format!("{}: no field {name:?}", json.display()))
    };
    let cfg: Config = serde_json::from_value(field("config")?)?;
    let repeat: usize = serde_json::from_value(field("repeat")?)?;
    let command: String = serde_json::from_value(field("command")?)?;
    let runs: Vec<EngineRun> = serde_json::from_value(field("runs")?)?;
    let mut engines: Vec<String> = Vec::new();
    for r in &runs {
        if !engines.contains(&r.engine) {
            engines.push(r.engine.clone());
        }
    }
    let medians: Vec<EngineRun> = engines.iter().map(|e| median_run(e, &runs)).collect();
    let dir = json.parent().unwrap_or(Path::new("."));
    let md = write_outputs(dir, &cfg, repeat, &command, &runs, &medians)?;
    writeln!(std::io::stdout().lock(), "{md}")?;
    Ok(())
}

/// `1234567` as `1,234,567`.
fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn mib(b: f64) -> String {
    format!("{:.1}", b / (1u64 << 20) as f64)
}

fn write_outputs(
    dir: &Path,
    cfg: &Config,
    repeat: usize,
    command: &str,
    runs: &[EngineRun],
    medians: &[EngineRun],
) -> Result<String> {
    // JSON: everything.
    let json = serde_json::json!({
        "config": cfg,
        "repeat": repeat,
        "command": command,
        "versions": {
            "riptide": env!("CARGO_PKG_VERSION"),
            "fjall": locked_version("fjall"),
            "rocksdb_crate": locked_version("rocksdb"),
            "librocksdb_sys": locked_version("librocksdb-sys"),
        },
        "runs": runs,
        "medians": medians,
    });
    let path = dir.join("results.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("write {}", path.display()))?;

    // CSV: one row per engine, repetition (or "median") and workload.
    let mut csv = String::from(
        "engine,rep,workload,ops,seconds,ops_per_sec,p50_us,p99_us,p999_us,max_us,user_bytes,\
         disk_write_bytes,write_amp,disk_bytes_after,peak_rss_bytes,writer_ops_per_sec\n",
    );
    for r in runs.iter().chain(medians) {
        let rep = if r.rep == 0 {
            "median".to_string()
        } else {
            r.rep.to_string()
        };
        for w in &r.workloads {
            let opt = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
            csv.push_str(&format!(
                "{},{rep},{},{},{:.3},{:.0},{:.2},{:.2},{:.2},{:.2},{},{},{},{},{},{}\n",
                r.engine,
                w.workload,
                w.ops,
                w.seconds,
                w.ops_per_sec,
                w.p50_us,
                w.p99_us,
                w.p999_us,
                w.max_us,
                w.user_bytes,
                w.disk_write_bytes,
                opt(w.write_amp),
                w.disk_bytes_after,
                w.peak_rss_bytes,
                opt(w.writer_ops_per_sec),
            ));
        }
    }
    let path = dir.join("results.csv");
    std::fs::write(&path, csv).with_context(|| format!("write {}", path.display()))?;

    // Markdown.
    let mut md = format!(
        "# db_bench suite\n\n`{command}`: {} keys, 16-byte keys, {}-byte values, sync {}, \
         readwhilewriting with {} reader(s) + 1 writer, {} seeks of {SEEK_NEXTS} entries, \
         median of {repeat} repetition(s). Riptide {}, fjall {}{}. Each engine in its own \
         process; 64 MiB block cache and 64 MiB write buffer for all, no compression.\n",
        cfg.keys,
        cfg.value_size,
        cfg.sync.name(),
        cfg.threads,
        cfg.seeks,
        env!("CARGO_PKG_VERSION"),
        locked_version("fjall"),
        if medians.iter().any(|r| r.engine == "rocksdb") {
            format!(
                ", RocksDB {} (rocksdb crate {})",
                locked_version("librocksdb-sys")
                    .split('+')
                    .nth(1)
                    .unwrap_or("?"),
                locked_version("rocksdb")
            )
        } else {
            String::new()
        }
    );
    if !cfg.young_space_bound {
        md.push_str("\nRiptide ran with `young_space_bound` off (`--no-young-space-bound`).\n");
    }
    for option in &cfg.riptide_options {
        md.push_str(&format!(
            "\nRiptide ran with `{option}` (`--riptide-option`).\n"
        ));
    }
    metric_table(
        &mut md,
        "Throughput, ops/s (higher is better; ratio > 1: Riptide faster)",
        medians,
        &|w| Some(w.ops_per_sec),
        &thousands,
    );
    if repeat > 1 {
        spread_table(&mut md, runs, medians);
    }
    let lat = |f: fn(&WorkloadResult) -> f64, title: &str, md: &mut String| {
        metric_table(md, title, medians, &|w| Some(f(w)), &|v| format!("{v:.1}"));
    };
    lat(
        |w| w.p50_us,
        "Latency p50, us (lower is better; ratio < 1: Riptide faster)",
        &mut md,
    );
    lat(|w| w.p99_us, "Latency p99, us (lower is better)", &mut md);
    lat(
        |w| w.p999_us,
        "Latency p99.9, us (lower is better)",
        &mut md,
    );
    metric_table(
        &mut md,
        "Write amplification: disk bytes written (/proc/self/io, until the engine is idle) / \
         user bytes (lower is better)",
        medians,
        &|w| w.write_amp,
        &|v| format!("{v:.2}"),
    );
    metric_table(
        &mut md,
        "Disk space after the workload, MiB (lower is better)",
        medians,
        &|w| Some(w.disk_bytes_after as f64),
        &|v| mib(v),
    );
    metric_table(
        &mut md,
        "Peak RSS during the workload, MiB (lower is better)",
        medians,
        &|w| Some(w.peak_rss_bytes as f64),
        &|v| mib(v),
    );
    md.push_str(
        "\nWhole run per engine\n\n| engine | write amp | cancelled writes MiB | peak RSS MiB | \
         readwhilewriting writer ops/s | run time s |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for r in medians {
        md.push_str(&format!(
            "| {} | {:.2} | {} | {} | {} | {:.0} |\n",
            r.engine,
            r.total_write_amp,
            mib(r.cancelled_write_bytes as f64),
            mib(r.peak_rss_bytes as f64),
            workload(r, "readwhilewriting")
                .and_then(|w| w.writer_ops_per_sec)
                .map(thousands)
                .unwrap_or_else(|| "-".into()),
            r.seconds
        ));
    }
    let path = dir.join("results.md");
    std::fs::write(&path, &md).with_context(|| format!("write {}", path.display()))?;
    // Charts.
    let groups = |f: &dyn Fn(&WorkloadResult) -> f64| -> Vec<(String, Vec<(String, f64)>)> {
        WORKLOADS
            .iter()
            .map(|&w| {
                (
                    w.to_string(),
                    medians
                        .iter()
                        .map(|r| (r.engine.clone(), workload(r, w).map_or(0.0, |x| f(&x))))
                        .collect(),
                )
            })
            .collect()
    };
    let sub = format!("{} keys, {}-byte values", cfg.keys, cfg.value_size);
    let png = dir.join("ops.png");
    chart::log_bars(
        &png,
        &format!("ops/s per workload ({sub}; higher is better)"),
        "ops/s (log scale)",
        &groups(&|w| w.ops_per_sec),
    )?;
    let png = dir.join("p99.png");
    chart::log_bars(
        &png,
        &format!("p99 latency per workload ({sub}; lower is better)"),
        "p99 latency, us (log scale)",
        &groups(&|w| w.p99_us),
    )?;
    md.push_str(&format!(
        "\nresults: {0}/results.md, results.json, results.csv, ops.png, p99.png\n",
        dir.display()
    ));
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload on every engine compiled in, on a tiny data set, then the outputs.
    #[test]
    fn tiny_run_on_every_engine_and_render() -> Result<()> {
        let tmp = tempfile::tempdir()?;
        let cfg = Config {
            keys: 2_000,
            value_size: 100,
            reads: 2_000,
            seeks: 50,
            threads: 2,
            sync: SyncMode::None,
            quiesce_secs: 0,
            young_space_bound: true,
            riptide_options: Vec::new(),
        };
        let mut runs = Vec::new();
        for kind in engines::available() {
            let result = tmp.path().join(format!("{}.json", kind.name()));
            child(kind, &cfg, &tmp.path().join(kind.name()), 1, &result)?;
            let run: EngineRun = serde_json::from_str(&std::fs::read_to_string(&result)?)?;
            assert_eq!(run.workloads.len(), WORKLOADS.len());
            for w in &run.workloads {
                assert!(w.ops > 0 && w.ops_per_sec > 0.0, "{}: {w:?}", kind.name());
            }
            runs.push(run);
        }
        let medians: Vec<EngineRun> = engines::available()
            .iter()
            .map(|k| median_run(k.name(), &runs))
            .collect();
        write_outputs(tmp.path(), &cfg, 1, "test", &runs, &medians)?;
        render(&tmp.path().join("results.json"))?;
        let md = std::fs::read_to_string(tmp.path().join("results.md"))?;
        assert!(md.contains("| readwhilewriting |") && md.contains("riptide/fjall"));
        assert!(tmp.path().join("ops.png").exists() && tmp.path().join("p99.png").exists());
        Ok(())
    }

    #[test]
    fn formatting_helpers() {
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(utc_stamp().len(), "20261122-224012".len());
        assert_ne!(locked_version("fjall"), "?");
    }
}
