//! The block cache counts hits, misses and inserts, never exceeds its byte bound, and keeps
//! tables (even of the same file opened twice) apart.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_sstable::cache::BLOCK_CHARGE_OVERHEAD;
use riptide_sstable::{BlockCache, Compression, Table, TableOptions};

fn opts() -> TableOptions {
    TableOptions {
        block_size: 1024,
        compression: Compression::None,
        ..TableOptions::default()
    }
}

#[test]
fn hits_misses_and_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(BlockCache::new(64 << 20));
    let entries = common::simple_entries(1000, 50);
    let t = common::build(dir.path(), "t.sst", &entries, opts(), Some(cache.clone()));
    let blocks = t.properties().data_blocks;
    assert!(blocks > 20);
    assert_eq!(cache.stats().inserts, 0);

    let read = common::read_everything(&t).unwrap();
    assert_eq!(read.len(), 1000);
    let s = cache.stats();
    assert_eq!(s.data.misses, blocks);
    assert_eq!(s.data.inserts, blocks);
    // The index block is in the cache too (one miss, then the iterator keeps it).
    assert_eq!(s.index.misses, 1);
    assert_eq!(s.index.inserts, 1);
    assert_eq!(s.misses, blocks + 1);
    assert_eq!(t.stats().blocks_read, blocks);
    assert!(s.usage_bytes >= blocks * (1 + BLOCK_CHARGE_OVERHEAD));
    assert!(s.usage_bytes <= s.capacity_bytes);
    assert_eq!(s.entries, blocks + 1);

    // Everything is cached now: gets only hit.
    for (k, _) in &entries {
        let uk = riptide_common::key::user_key(k);
        assert!(t.get(uk, u64::MAX >> 8).unwrap().is_some());
    }
    let s2 = cache.stats();
    assert_eq!(s2.data.misses, s.data.misses);
    assert_eq!(s2.data.inserts, s.data.inserts);
    assert_eq!(s2.index.misses, s.index.misses);
    assert!(s2.data.hits >= 1000);
    assert!(s2.index.hits >= 1000);
    // The filter was read once, at the first get.
    assert_eq!(s2.filter.misses, 1);
    assert!(s2.filter.hits >= 999);
    assert_eq!(t.stats().blocks_read, blocks);

    // The same file opened again gets a new id: its blocks are its own.
    let t2 = Table::open(t.path(), Some(cache.clone())).unwrap();
    assert_ne!(t.id(), t2.id());
    let mut it = t2.iter();
    it.seek_to_first().unwrap();
    let s3 = cache.stats();
    assert_eq!(s3.data.misses, s2.data.misses + 1);
    assert_eq!(s3.index.misses, s2.index.misses + 1);
}

#[test]
fn byte_bound_is_respected() {
    let dir = tempfile::tempdir().unwrap();
    let capacity = 32 << 10;
    let cache = Arc::new(BlockCache::new(capacity));
    let entries = common::simple_entries(5000, 50);
    let t = common::build(dir.path(), "t.sst", &entries, opts(), Some(cache.clone()));
    assert!(t.properties().data_size > 8 * capacity);
    for round in 0..3 {
        for (i, (k, v)) in entries.iter().enumerate() {
            let uk = riptide_common::key::user_key(k);
            assert_eq!(&t.get(uk, u64::MAX >> 8).unwrap().unwrap().value, v);
            if i % 97 == 0 {
                let s = cache.stats();
                assert!(s.usage_bytes <= capacity, "round {round}: {s:?}");
            }
        }
    }
    let s = cache.stats();
    assert!(s.usage_bytes <= capacity, "{s:?}");
    assert!(s.usage_bytes > 0, "{s:?}");
    assert!(s.misses > t.properties().data_blocks, "{s:?}");
    assert!(s.hits > 0);
    // Iterators hold their block even once it is evicted.
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    let first = it.key().to_vec();
    cache.clear();
    assert_eq!(it.key(), first);
    it.next().unwrap();
    assert!(it.valid());
}

#[test]
fn concurrent_readers_share_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(BlockCache::new(256 << 10));
    let entries = Arc::new(common::simple_entries(3000, 40));
    let t = common::build(
        dir.path(),
        "t.sst",
        &entries,
        TableOptions::default(),
        Some(cache),
    );
    let handles: Vec<_> = (0..4)
        .map(|n| {
            let t = t.clone();
            let entries = entries.clone();
            std::thread::spawn(move || {
                for (k, v) in entries.iter().skip(n).step_by(3) {
                    let uk = riptide_common::key::user_key(k);
                    assert_eq!(&t.get(uk, u64::MAX >> 8).unwrap().unwrap().value, v);
                }
                assert_eq!(common::read_everything(&t).unwrap().len(), entries.len());
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn capacity_changes_while_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(BlockCache::new(4 << 20));
    let entries = common::simple_entries(5000, 50);
    let t = common::build(dir.path(), "t.sst", &entries, opts(), Some(cache.clone()));
    assert_eq!(common::read_everything(&t).unwrap().len(), 5000);
    let full = cache.stats();
    assert!(full.usage_bytes > 64 << 10, "{full:?}");

    // Shrunk: entries are evicted down to the new bound at once.
    cache.set_capacity(32 << 10);
    let small = cache.stats();
    assert_eq!(small.capacity_bytes, 32 << 10);
    assert!(small.usage_bytes <= 32 << 10, "{small:?}");
    assert!(small.entries < full.entries);
    // Reads still work and stay within it.
    assert_eq!(common::read_everything(&t).unwrap().len(), 5000);
    assert!(cache.stats().usage_bytes <= 32 << 10);

    // Grown again: the whole table fits once more, and a second pass only hits.
    cache.set_capacity(4 << 20);
    assert_eq!(common::read_everything(&t).unwrap().len(), 5000);
    let misses = cache.stats().data.misses;
    assert_eq!(common::read_everything(&t).unwrap().len(), 5000);
    assert_eq!(cache.stats().data.misses, misses);
    assert_eq!(cache.stats().capacity_bytes, 4 << 20);
}
