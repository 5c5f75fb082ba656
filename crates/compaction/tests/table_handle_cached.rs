//! A handle opened through a table cache takes its open table without asking the cache while
//! the table is open, and asks the cache (which reopens the file) once the cache has dropped
//! it; `max_open_files` still bounds the open files.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::Arc;

use riptide_compaction::TableHandle;
use riptide_sstable::{TableCache, TableReadOptions};
use util::{put, write_table};

#[test]
fn cached_handle_skips_the_cache_while_the_table_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let metas: Vec<_> = (1..=2)
        .map(|n| {
            let key = format!("k{n}");
            write_table(dir.path(), n, &[put(&key, n, "v")])
                .meta
                .clone()
        })
        .collect();
    // One open file at most: opening the second table drops the first.
    let tables = Arc::new(TableCache::new(1, None, TableReadOptions::default()));
    let first = TableHandle::open_cached(dir.path(), metas[0].clone(), &tables).unwrap();
    let before = tables.stats();

    // Open: the handle's own reference, no cache lookup.
    let t = first.table().unwrap();
    assert!(Arc::ptr_eq(&t, &tables.get(1).unwrap()));
    let after = tables.stats();
    // `tables.get` above counts no hit or miss either: only `get_or_open` does.
    assert_eq!((after.hits, after.misses), (before.hits, before.misses));
    assert_eq!(t.get(b"k1", 10).unwrap().unwrap().value, b"v");
    drop(t);

    // The second table evicts the first; nothing else holds it, so it is closed.
    let second = TableHandle::open_cached(dir.path(), metas[1].clone(), &tables).unwrap();
    assert!(tables.get(1).is_none());
    assert_eq!(tables.stats().live_tables, 1);

    // The first handle now goes through the cache, which reopens its file.
    let misses = tables.stats().misses;
    let t = first.table().unwrap();
    assert_eq!(tables.stats().misses, misses + 1);
    assert_eq!(t.get(b"k1", 10).unwrap().unwrap().value, b"v");
    assert!(tables.stats().open_tables <= 1);
    drop(t);
    assert_eq!(
        second
            .table()
            .unwrap()
            .get(b"k2", 10)
            .unwrap()
            .unwrap()
            .value,
        b"v"
    );
    assert!(tables.stats().live_tables <= 2);
}
