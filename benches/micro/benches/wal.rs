//! WAL micro-benchmarks: single-threaded appends and group commit.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use riptide_wal::{GroupCommit, RecoveryMode, SyncMode, Wal, WalOptions};

const PAYLOAD: [u8; 100] = [0x5a; 100];

fn open(dir: &std::path::Path, sync_mode: SyncMode) -> Wal {
    open_with(dir, sync_mode, riptide_wal::DEFAULT_PREALLOCATE_BYTES)
}

fn open_with(dir: &std::path::Path, sync_mode: SyncMode, preallocate_bytes: u64) -> Wal {
    let opts = WalOptions {
        sync_mode,
        recovery_mode: RecoveryMode::TolerateCorruptedTail,
        preallocate_bytes,
    };
    match Wal::open(dir, opts, 1, |_, _| Ok(())) {
        Ok((wal, _)) => wal,
        Err(e) => panic!("open WAL in {}: {e}", dir.display()),
    }
}

fn append(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let wal = open(tmp.path(), SyncMode::None);
    let mut g = c.benchmark_group("wal");
    g.throughput(Throughput::Bytes(PAYLOAD.len() as u64));
    g.bench_function("append_100B_sync_none", |b| {
        b.iter(|| wal.append(black_box(&PAYLOAD)).expect("append"));
    });
    g.finish();
    wal.close().expect("close");
}

/// One 100-byte record and its fdatasync per iteration (a durable commit alone), written
/// over zeros reserved ahead of the records (the default) and appended to a growing file
/// (`preallocate_bytes` 0): the second sync also commits the file system's journal.
fn append_synced(c: &mut Criterion) {
    let mut g = c.benchmark_group("wal");
    g.throughput(Throughput::Bytes(PAYLOAD.len() as u64));
    for (name, preallocate) in [
        (
            "append_100B_sync_full_reserved",
            riptide_wal::DEFAULT_PREALLOCATE_BYTES,
        ),
        ("append_100B_sync_full_appended", 0),
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let wal = open_with(tmp.path(), SyncMode::Full, preallocate);
        g.bench_function(name, |b| {
            b.iter(|| wal.append(black_box(&PAYLOAD)).expect("append"));
        });
        wal.close().expect("close");
    }
    g.finish();
}

/// 4 threads submit 100-byte payloads; the leader appends its group as one record.
fn group_commit(c: &mut Criterion) {
    const THREADS: u64 = 4;
    let tmp = tempfile::tempdir().expect("tempdir");
    let wal = Arc::new(open(tmp.path(), SyncMode::None));
    let gc: Arc<GroupCommit<Vec<u8>>> =
        Arc::new(GroupCommit::with_limits(1000, 1 << 20, |p| p.len()));
    let mut g = c.benchmark_group("wal");
    g.throughput(Throughput::Elements(1));
    g.bench_function("group_commit_4_threads_100B", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(THREADS);
            let start = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..THREADS {
                    let (wal, gc) = (Arc::clone(&wal), Arc::clone(&gc));
                    s.spawn(move || {
                        let mut buf = Vec::with_capacity(64 << 10);
                        for _ in 0..per_thread {
                            gc.submit(PAYLOAD.to_vec(), |group| {
                                buf.clear();
                                for p in group.iter() {
                                    buf.extend_from_slice(p);
                                }
                                wal.append(&buf)
                            })
                            .expect("submit");
                        }
                    });
                }
            });
            // Report time per submission, whatever the rounding of iters.
            let elapsed = start.elapsed();
            let done = per_thread * THREADS;
            Duration::from_secs_f64(elapsed.as_secs_f64() * iters as f64 / done as f64)
        });
    });
    g.finish();
    let (groups, items) = gc.stats();
    if groups > 0 {
        eprintln!(
            "group commit: {items} items in {groups} groups ({:.1} per group)",
            items as f64 / groups as f64
        );
    }
    wal.close().expect("close");
}

criterion_group!(benches, append, append_synced, group_commit);
criterion_main!(benches);
