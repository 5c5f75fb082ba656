//! `Db::approximate_entries_cf`: memtable entries counted up to the limit, table entries
//! estimated from the index blocks, both together after a flush and new writes, and the
//! bounds respected.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use riptide::{Db, Options};

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

#[test]
fn memtables_are_counted_and_tables_estimated() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let cf = db.default_cf();
    let value = [7u8; 40];
    for i in 0..4000 {
        db.put(&key(i), &value).unwrap();
    }
    // In the memtable: exact up to the limit.
    let est = |lo: &[u8], hi: Option<&[u8]>, limit| {
        db.approximate_entries_cf(&cf, lo, hi, limit).unwrap()
    };
    assert_eq!(est(&key(100), Some(&key(300)), 10_000), 200);
    assert_eq!(est(&key(100), Some(&key(300)), 50), 50);
    assert_eq!(est(&key(3900), None, 10_000), 100);
    assert_eq!(est(&key(300), Some(&key(100)), 10_000), 0);

    // In a table: from its index block, to within a few blocks.
    db.flush().unwrap();
    let near = |got: u64, want: u64| {
        assert!(
            got.abs_diff(want) <= want / 5 + 150,
            "estimate {got}, expected about {want}"
        );
    };
    near(est(&key(0), Some(&key(2000)), 10), 2000);
    near(est(&key(1000), None, 10), 3000);
    assert_eq!(est(b"z", None, 10), 0);

    // Both: 1000 new versions in the memtable over the table.
    for i in 1000..2000 {
        db.put(&key(i), &value).unwrap();
    }
    near(est(&key(1000), Some(&key(2000)), 10_000), 2000);
}
