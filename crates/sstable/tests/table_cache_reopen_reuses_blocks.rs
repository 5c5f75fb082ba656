//! Blocks (data, index and filter) cached before a table cache evicts a table are hit after
//! the table is reopened: the table cache keys blocks by its own id and the file number.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::key::user_key;
use riptide_sstable::{BlockCache, TableCache, TableOptions, TableReadOptions};

#[test]
fn reopened_table_hits_its_cached_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(3000, 50);
    let a = dir.path().join("000001.sst");
    let b = dir.path().join("000002.sst");
    common::write_table(&a, &entries, TableOptions::default());
    common::write_table(&b, &entries, TableOptions::default());
    let cache = Arc::new(BlockCache::new(16 << 20));
    let tc = TableCache::new(1, Some(cache.clone()), TableReadOptions::default());

    let t = tc.get_or_open(1, &a).unwrap();
    let first_id = t.id();
    assert_eq!(first_id, tc.cache_id(1));
    assert_eq!(common::read_everything(&t).unwrap(), entries);
    for (k, _) in &entries {
        t.get(user_key(k), u64::MAX >> 8).unwrap().unwrap();
    }
    let blocks = t.properties().data_blocks;
    let before = cache.stats();
    assert_eq!(before.data.inserts, blocks);
    assert_eq!((before.index.inserts, before.filter.inserts), (1, 1));
    drop(t);

    // Opening file 2 evicts file 1 (bound 1): its descriptor closes.
    let t2 = tc.get_or_open(2, &b).unwrap();
    assert_ne!(t2.id(), first_id);
    drop(t2);
    let s = tc.stats();
    assert_eq!((s.evictions, s.live_tables), (1, 1), "{s:?}");
    assert_eq!(common::open_fds_under(dir.path()), 1);
    let mid = cache.stats();

    // Reopened: a new table with the same id, served from the cached blocks.
    let t = tc.get_or_open(1, &a).unwrap();
    assert_eq!(tc.stats().opens, 3);
    assert_eq!(t.id(), first_id);
    assert_eq!(common::read_everything(&t).unwrap(), entries);
    for (k, v) in &entries {
        assert_eq!(
            &t.get(user_key(k), u64::MAX >> 8).unwrap().unwrap().value,
            v
        );
    }
    let after = cache.stats();
    assert_eq!(after.data.misses, mid.data.misses, "{after:?}");
    assert_eq!(after.index.misses, mid.index.misses, "{after:?}");
    assert_eq!(after.filter.misses, mid.filter.misses, "{after:?}");
    assert!(after.data.hits >= mid.data.hits + blocks + entries.len() as u64);
    assert!(after.index.hits > mid.index.hits);
    assert!(after.filter.hits >= mid.filter.hits + entries.len() as u64);
    let ts = t.stats();
    assert_eq!(
        (ts.blocks_read, ts.index_reads, ts.filter_reads),
        (0, 0, 0),
        "{ts:?}"
    );
}
