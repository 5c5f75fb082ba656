//! A table cache of 3 files over 10 tables keeps at most 3 tables (and file descriptors) open,
//! and every lookup through it still finds its key.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::key::user_key;
use riptide_sstable::{BlockCache, TableCache, TableOptions, TableReadOptions};

#[test]
fn at_most_three_open() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(500, 20);
    let paths: Vec<_> = (0..10u64)
        .map(|n| {
            let p = dir.path().join(format!("{n:06}.sst"));
            common::write_table(&p, &entries, TableOptions::default());
            p
        })
        .collect();
    assert_eq!(common::open_fds_under(dir.path()), 0);
    let tc = TableCache::new(
        3,
        Some(Arc::new(BlockCache::new(1 << 20))),
        TableReadOptions::default(),
    );
    assert_eq!(tc.max_open_files(), 3);
    for round in 0..5 {
        for i in 0..paths.len() {
            // Visit tables in a different order each round (3 and 7 are prime to 10).
            let n = (i * [1, 3, 7, 9, 1][round]) % paths.len();
            let path = &paths[n];
            let t = tc.get_or_open(n as u64, path).unwrap();
            for (k, v) in entries.iter().step_by(61) {
                let got = t.get(user_key(k), u64::MAX >> 8).unwrap().unwrap();
                assert_eq!(&got.value, v);
            }
            drop(t);
            let s = tc.stats();
            assert!(s.open_tables <= 3, "round {round} table {n}: {s:?}");
            assert!(s.live_tables <= 3, "round {round} table {n}: {s:?}");
            let fds = common::open_fds_under(dir.path());
            assert!(fds <= 3, "round {round} table {n}: {fds} open files, {s:?}");
            assert_eq!(fds as u64, s.live_tables, "{s:?}");
        }
    }
    let s = tc.stats();
    assert!(s.opens > 10, "{s:?}");
    assert!(s.evictions >= s.opens - 3, "{s:?}");
    assert_eq!(s.misses, s.opens);
    assert_eq!(s.hits + s.misses, 50);
    // Holding tables keeps them open beyond the bound, and only them.
    let held: Vec<_> = paths
        .iter()
        .enumerate()
        .map(|(n, p)| tc.get_or_open(n as u64, p).unwrap())
        .collect();
    assert_eq!(common::open_fds_under(dir.path()), 10);
    assert!(tc.stats().open_tables <= 3);
    drop(held);
    assert!(common::open_fds_under(dir.path()) <= 3);
    tc.clear();
    assert_eq!(common::open_fds_under(dir.path()), 0);
    assert_eq!(tc.stats().live_tables, 0);
}
