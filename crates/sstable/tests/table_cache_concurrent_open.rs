//! Four threads asking a table cache for the same file at once get the same `Arc`, and the
//! file is opened once.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::{Arc, Barrier};

use riptide_common::key::user_key;
use riptide_sstable::{BlockCache, TableCache, TableOptions, TableReadOptions};

#[test]
fn same_file_opened_once() {
    let dir = tempfile::tempdir().unwrap();
    let entries = Arc::new(common::simple_entries(2000, 40));
    let path = dir.path().join("000007.sst");
    common::write_table(&path, &entries, TableOptions::default());
    let block_cache = Arc::new(BlockCache::new(1 << 20));
    for round in 0..50 {
        let tc = Arc::new(TableCache::new(
            4,
            Some(block_cache.clone()),
            TableReadOptions::default(),
        ));
        let barrier = Arc::new(Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (tc, barrier, path, entries) =
                    (tc.clone(), barrier.clone(), path.clone(), entries.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let t = tc.get_or_open(7, &path).unwrap();
                    let (k, v) = &entries[i * 401];
                    assert_eq!(
                        &t.get(user_key(k), u64::MAX >> 8).unwrap().unwrap().value,
                        v
                    );
                    t
                })
            })
            .collect();
        let tables: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for t in &tables {
            assert!(Arc::ptr_eq(t, &tables[0]), "round {round}");
        }
        let s = tc.stats();
        assert_eq!(s.opens, 1, "round {round}: {s:?}");
        assert_eq!(s.hits, 3, "round {round}: {s:?}");
        assert_eq!(s.live_tables, 1, "round {round}: {s:?}");
    }
}
