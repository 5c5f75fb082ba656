//! Memtable micro-benchmarks: inserts of random 16-byte keys with 100-byte values (one and two
//! threads), of ascending keys (one thread; two threads each appending its own range, as
//! auto-increment loads of two tables), point lookups and a full scan of a 100k-entry memtable.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide_common::{InternalIterator, ValueKind};
use riptide_memtable::Memtable;

/// Entries per insert batch and in the lookup memtable.
const N: usize = 100_000;
const VALUE: [u8; 100] = [0x5a; 100];

fn random_keys(n: usize, seed: u64) -> Vec<[u8; 16]> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut k = [0u8; 16];
            rng.fill(&mut k);
            k
        })
        .collect()
}

/// Inserts `keys` into `m`, the i-th with seqno i.
fn insert_all(m: &Memtable, keys: &[[u8; 16]]) {
    for (s, k) in keys.iter().enumerate() {
        m.insert(k, s as u64, ValueKind::Put, &VALUE);
    }
}

fn filled(keys: &[[u8; 16]]) -> Memtable {
    let m = Memtable::new(0);
    insert_all(&m, keys);
    m
}

/// Times inserting every key of `keys` into a fresh memtable (made outside the timing).
fn bench_fill(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    keys: &[[u8; 16]],
) {
    g.bench_function(name, |b| {
        b.iter_batched(
            || Memtable::new(0),
            |m| {
                insert_all(&m, keys);
                m
            },
            BatchSize::PerIteration,
        );
    });
}

fn insert(c: &mut Criterion) {
    let keys = random_keys(N, 1);
    let mut g = c.benchmark_group("memtable_insert");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    bench_fill(&mut g, "1_thread_100k", &keys);
    let ascending = ascending_keys(N);
    bench_fill(&mut g, "1_thread_100k_ascending", &ascending);
    let halves: Vec<Arc<Vec<[u8; 16]>>> =
        keys.chunks(N / 2).map(|c| Arc::new(c.to_vec())).collect();
    g.bench_function("2_threads_100k", |b| {
        b.iter_custom(|iters| two_threads(&halves, iters));
    });
    let ranges: Vec<Arc<Vec<[u8; 16]>>> = ascending
        .chunks(N / 2)
        .map(|c| Arc::new(c.to_vec()))
        .collect();
    g.bench_function("2_threads_100k_ascending", |b| {
        b.iter_custom(|iters| two_threads(&ranges, iters));
    });
    g.finish();
}

/// `n` keys in ascending order (a big-endian counter in the last 8 bytes).
fn ascending_keys(n: usize) -> Vec<[u8; 16]> {
    (0..n as u64)
        .map(|i| {
            let mut k = [0u8; 16];
            k[8..].copy_from_slice(&i.to_be_bytes());
            k
        })
        .collect()
}

/// Time for two threads, each inserting its half of the keys into one fresh memtable.
fn two_threads(halves: &[Arc<Vec<[u8; 16]>>], iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let m = Arc::new(Memtable::new(0));
        let start = Instant::now();
        let threads: Vec<_> = halves
            .iter()
            .enumerate()
            .map(|(t, half)| {
                let (m, half) = (Arc::clone(&m), Arc::clone(half));
                std::thread::spawn(move || {
                    for (i, k) in half.iter().enumerate() {
                        m.insert(k, (i * 2 + t) as u64, ValueKind::Put, &VALUE);
                    }
                })
            })
            .collect();
        for t in threads {
            let _ = t.join();
        }
        total += start.elapsed();
        drop(m);
    }
    total
}

fn get(c: &mut Criterion) {
    let keys = random_keys(N, 2);
    let m = filled(&keys);
    let mut g = c.benchmark_group("memtable_get");
    g.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    g.bench_function("existing_100k", |b| {
        b.iter(|| {
            i = (i + 7919) % N;
            black_box(m.get_with(&keys[i], u64::MAX, |s, _, v| s + v.len() as u64))
        });
    });
    g.bench_function("existing_100k_copy_value", |b| {
        b.iter(|| {
            i = (i + 7919) % N;
            black_box(m.get(&keys[i], u64::MAX))
        });
    });
    let misses = random_keys(1024, 3);
    g.bench_function("missing_100k", |b| {
        b.iter(|| {
            i = (i + 1) % misses.len();
            black_box(m.get_with(&misses[i], u64::MAX, |s, _, _| s))
        });
    });
    g.finish();

    let m = Arc::new(m);
    let mut g = c.benchmark_group("memtable_scan");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    g.bench_function("forward_100k", |b| {
        b.iter(|| {
            let mut it = m.iter();
            let _ = it.seek_to_first();
            let mut n = 0usize;
            while it.valid() {
                n += it.value().len();
                let _ = it.next();
            }
            black_box(n)
        });
    });
    g.finish();
}

criterion_group!(benches, insert, get);
criterion_main!(benches);
