//! `TableCache::evict` drops a table from the cache; whoever holds its `Arc` keeps using it,
//! and its file descriptor closes when the last `Arc` drops. The next lookup reopens it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_common::key::user_key;
use riptide_sstable::{BlockCache, TableCache, TableOptions, TableReadOptions};

#[test]
fn evict_keeps_holders_working() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(300, 30);
    let a = dir.path().join("000001.sst");
    let b = dir.path().join("000002.sst");
    common::write_table(&a, &entries, TableOptions::default());
    common::write_table(&b, &entries, TableOptions::default());
    let tc = TableCache::new(
        10,
        Some(Arc::new(BlockCache::new(1 << 20))),
        TableReadOptions::default(),
    );
    let ta = tc.get_or_open(1, &a).unwrap();
    let _tb = tc.get_or_open(2, &b).unwrap();
    assert!(Arc::ptr_eq(&ta, &tc.get(1).unwrap()));
    let mut it = ta.iter();
    it.seek_to_first().unwrap();
    assert_eq!(common::open_fds_under(dir.path()), 2);

    assert!(tc.evict(1));
    assert!(!tc.evict(1));
    assert!(tc.get(1).is_none());
    let s = tc.stats();
    assert_eq!(
        (s.removals, s.open_tables, s.live_tables),
        (1, 1, 2),
        "{s:?}"
    );

    // The evicted table still works for its holders (even with its file gone).
    std::fs::remove_file(&a).unwrap();
    for (k, v) in entries.iter().step_by(17) {
        assert_eq!(
            &ta.get(user_key(k), u64::MAX >> 8).unwrap().unwrap().value,
            v
        );
    }
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, entries.len());
    assert_eq!(common::open_fds_under(dir.path()), 2);
    drop(it);
    drop(ta);
    assert_eq!(common::open_fds_under(dir.path()), 1);
    assert_eq!(tc.stats().live_tables, 1);

    // A deleted file is not reopened from memory: the next lookup opens the path again.
    assert_eq!(
        tc.get_or_open(1, &a).unwrap_err().kind(),
        riptide_common::ErrorKind::Io
    );
    common::write_table(&a, &entries, TableOptions::default());
    let again = tc.get_or_open(1, &a).unwrap();
    assert_eq!(again.properties().entries, entries.len() as u64);
    let s = tc.stats();
    assert_eq!(s.opens, 3, "{s:?}");
    assert_eq!(s.misses, 4, "{s:?}");
    assert_eq!(s.open_tables, 2, "{s:?}");
}
