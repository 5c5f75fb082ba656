//! SSTable micro-benchmarks: block encode, block decode + seek, bloom probes, and point
//! lookups on a 100k-entry table with a warm block cache.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use riptide_common::ValueKind;
use riptide_common::key::{internal_key, seek_key};
use riptide_sstable::block::{Block, BlockBuilder};
use riptide_sstable::filter::{BloomFilter, BloomFilterBuilder};
use riptide_sstable::{BlockCache, Table, TableOptions, TableReadOptions, TableWriter};

fn user_key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(b"userkey_");
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

/// Entries of one ~4 KiB block: 16-byte user keys, 100-byte values.
fn block_entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut size = 0;
    let mut i = 0u64;
    while size < 4096 - 130 {
        let k = internal_key(&user_key(i * 7), 1000 + i, ValueKind::Put);
        let v = vec![b'v'; 100];
        size += k.len() + v.len() + 3;
        out.push((k, v));
        i += 1;
    }
    out
}

fn bench_block(c: &mut Criterion) {
    let entries = block_entries();
    let mut g = c.benchmark_group("sstable_block");
    g.throughput(Throughput::Elements(entries.len() as u64));
    let mut builder = BlockBuilder::new(16);
    g.bench_function("encode_4k", |b| {
        b.iter(|| {
            builder.reset();
            for (k, v) in &entries {
                builder.add(k, v);
            }
            black_box(builder.finish().len())
        })
    });
    builder.reset();
    for (k, v) in &entries {
        builder.add(k, v);
    }
    let bytes = builder.finish().to_vec();
    let targets: Vec<Vec<u8>> = (0..entries.len() as u64)
        .map(|i| seek_key(&user_key(i * 7), u64::MAX >> 8))
        .collect();
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode_and_seek_4k", |b| {
        let mut n = 0usize;
        b.iter(|| {
            let block = Block::new(bytes.clone()).unwrap();
            let mut it = block.iter();
            it.seek(&targets[n % targets.len()]).unwrap();
            n += 1;
            black_box(it.value().len())
        })
    });
    let block = Block::new(bytes.clone()).unwrap();
    g.bench_function("seek_in_decoded_4k", |b| {
        let mut n = 0usize;
        b.iter(|| {
            let mut it = block.iter();
            it.seek(&targets[n % targets.len()]).unwrap();
            n += 1;
            black_box(it.value().len())
        })
    });
    g.finish();
}

fn bench_bloom(c: &mut Criterion) {
    let n = 100_000u64;
    let mut b = BloomFilterBuilder::new(10);
    for i in 0..n {
        b.add_key(&user_key(i * 2));
    }
    let f = BloomFilter::new(b.finish()).unwrap();
    let mut g = c.benchmark_group("sstable_bloom");
    g.throughput(Throughput::Elements(1));
    g.bench_function("probe_hit", |bch| {
        let mut i = 0u64;
        bch.iter(|| {
            i = (i + 1) % n;
            black_box(f.may_contain(&user_key(i * 2)))
        })
    });
    g.bench_function("probe_miss", |bch| {
        let mut i = 0u64;
        bch.iter(|| {
            i = (i + 1) % n;
            black_box(f.may_contain(&user_key(i * 2 + 1)))
        })
    });
    g.finish();
}

fn bench_table_get(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.sst");
    let n = 100_000u64;
    let mut w = TableWriter::create(&path, TableOptions::default()).unwrap();
    let value = vec![b'v'; 100];
    for i in 0..n {
        w.add(&internal_key(&user_key(i), i + 1, ValueKind::Put), &value)
            .unwrap();
    }
    w.finish().unwrap();
    let mut g = c.benchmark_group("sstable_table");
    g.throughput(Throughput::Elements(1));
    // Index and filter in the block cache (the default), then pinned in the table.
    for (suffix, cache_index_and_filter) in [("", true), ("_pinned", false)] {
        let cache = Arc::new(BlockCache::new(256 << 20));
        let opts = TableReadOptions {
            cache_index_and_filter,
        };
        let table = Table::open_with_options(&path, Some(cache.clone()), &opts).unwrap();
        for i in 0..n {
            table.get(&user_key(i), u64::MAX >> 8).unwrap().unwrap();
        }
        // Every data block is now cached: the measured gets never touch the file.
        assert_eq!(cache.stats().data.inserts, table.properties().data_blocks);
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        g.bench_function(format!("get_hit_warm_cache_100k{suffix}"), |b| {
            b.iter(|| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let v = table.get(&user_key(rng % n), u64::MAX >> 8).unwrap();
                black_box(v.map(|v| v.value.len()))
            })
        });
        g.bench_function(format!("get_miss_warm_cache_100k{suffix}"), |b| {
            b.iter(|| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let v = table.get(&user_key(n + rng % n), u64::MAX >> 8).unwrap();
                black_box(v.is_some())
            })
        });
        if cache_index_and_filter {
            let s = cache.stats();
            assert_eq!(s.index.misses, 1, "{s:?}");
            assert_eq!(s.filter.misses, 1, "{s:?}");
        }
    }
    g.finish();
}

criterion_group!(benches, bench_block, bench_bloom, bench_table_get);
criterion_main!(benches);
