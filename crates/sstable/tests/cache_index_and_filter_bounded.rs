//! With the index and filter charged to the block cache, a 32 KiB cache over a table of
//! several hundred KiB never exceeds its capacity, while gets and full scans (both directions)
//! return exactly what a table with a pinned index and filter and no cache returns. Index and
//! filter hits and misses are counted per kind, and the table pins far less memory.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_common::key::user_key;
use riptide_sstable::{BlockCache, Compression, Table, TableOptions, TableReadOptions};

const CAPACITY: u64 = 32 << 10;

fn assert_bounded(cache: &BlockCache, when: &str) {
    let s = cache.stats();
    assert!(s.usage_bytes <= CAPACITY, "{when}: {s:?}");
}

#[test]
fn small_cache_bounds_index_filter_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(4000, 100);
    let path = dir.path().join("t.sst");
    let props = common::write_table(
        &path,
        &entries,
        TableOptions {
            block_size: 1024,
            compression: Compression::None,
            ..TableOptions::default()
        },
    );
    assert!(props.data_size > 12 * CAPACITY, "{props:?}");
    assert!(props.index_size > 8 << 10, "{props:?}");
    assert!(props.filter_size > 4 << 10, "{props:?}");

    let cache = Arc::new(BlockCache::new(CAPACITY));
    let cached = Table::open_with_options(
        &path,
        Some(cache.clone()),
        &TableReadOptions {
            cache_index_and_filter: true,
        },
    )
    .unwrap();
    let pinned = Table::open_with_options(
        &path,
        None,
        &TableReadOptions {
            cache_index_and_filter: false,
        },
    )
    .unwrap();
    assert!(cached.index_and_filter_cached());
    assert!(!pinned.index_and_filter_cached());
    // Open read nothing but the footer and properties.
    assert_eq!(cached.stats().index_reads, 0);
    assert_eq!(cached.stats().filter_reads, 0);
    assert_eq!(cache.stats().entries, 0);
    // The cached table pins its properties only; the pinned one its index and filter too.
    assert!(cached.memory_usage() < 1024, "{}", cached.memory_usage());
    assert!(
        pinned.memory_usage() as u64 > props.index_size + props.filter_size - 64,
        "{} vs {props:?}",
        pinned.memory_usage()
    );

    for round in 0..2 {
        for (i, (k, _)) in entries.iter().enumerate() {
            let uk = user_key(k);
            assert_eq!(
                cached.get(uk, u64::MAX >> 8).unwrap(),
                pinned.get(uk, u64::MAX >> 8).unwrap(),
                "round {round} key {i}"
            );
            let absent = common::absent_key(&entries, i);
            assert_eq!(
                cached.get(&absent, u64::MAX >> 8).unwrap(),
                None,
                "round {round} absent {i}"
            );
            assert_eq!(
                cached.may_contain(&absent),
                pinned.may_contain(&absent),
                "round {round} absent {i}"
            );
            assert_bounded(&cache, &format!("round {round} key {i}"));
        }
        // Snapshots below the only version see nothing.
        let uk = user_key(&entries[100].0);
        assert_eq!(cached.get(uk, 0).unwrap(), None);

        let scanned = common::read_everything(&cached).unwrap();
        assert_eq!(scanned, entries, "round {round}");
        assert_bounded(&cache, &format!("round {round} scan"));

        // Seeks and a backward scan through an iterator that holds its index block.
        let mut it = cached.iter();
        for (i, (k, _)) in entries.iter().enumerate().step_by(37) {
            it.seek(k).unwrap();
            assert_eq!(it.key(), k.as_slice(), "seek {i}");
            assert_bounded(&cache, "seek");
        }
        it.seek_to_last().unwrap();
        let mut back = Vec::new();
        while it.valid() {
            back.push(it.key().to_vec());
            it.prev().unwrap();
            if back.len() % 101 == 0 {
                assert_bounded(&cache, "backward scan");
            }
        }
        back.reverse();
        assert_eq!(back.len(), entries.len());
        assert!(back.iter().zip(&entries).all(|(a, (b, _))| a == b));
    }

    let s = cache.stats();
    assert!(s.usage_bytes <= CAPACITY, "{s:?}");
    assert!(s.index.hits > 0, "{s:?}");
    assert!(s.filter.hits > 0, "{s:?}");
    assert!(s.index.misses >= 1 && s.filter.misses >= 1, "{s:?}");
    assert!(s.data.misses > props.data_blocks, "{s:?}");
    assert_eq!(s.hits, s.data.hits + s.index.hits + s.filter.hits);
    assert_eq!(s.misses, s.data.misses + s.index.misses + s.filter.misses);
    let t = cached.stats();
    eprintln!("cache: {s:?}\ntable: {t:?}");
    assert_eq!(t.index_reads, s.index.misses, "{t:?} {s:?}");
    assert_eq!(t.filter_reads, s.filter.misses, "{t:?} {s:?}");
    assert!(t.filter_skips > 0);
    // The pinned table read its index and filter once, at open.
    assert_eq!(pinned.stats().index_reads, 1);
    assert_eq!(pinned.stats().filter_reads, 1);
}
