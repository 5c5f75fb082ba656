//! `Db::approximate_entries_cf`: memtable entries counted up to the limit (estimated from
//! the skiplist beyond it), table entries estimated from the index blocks, both together
//! after a flush and new writes, and the bounds respected.
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
    // In the memtable: exact up to the limit, so the lower bound is the estimate.
    let all = db
        .approximate_entries_cf(&cf, &key(100), Some(&key(300)), 10_000)
        .unwrap();
    assert_eq!((all.at_least, all.about), (200, 200));
    let est = |lo: &[u8], hi: Option<&[u8]>, limit| {
        let e = db.approximate_entries_cf(&cf, lo, hi, limit).unwrap();
        assert!(e.at_least <= e.about, "{e:?}");
        e.about
    };
    assert_eq!(est(&key(100), Some(&key(300)), 10_000), 200);
    // Past the limit the count stops and the rest is estimated from the skiplist: the
    // lower bound is the count, the estimate near the 200 entries (not the limit).
    let past = db
        .approximate_entries_cf(&cf, &key(100), Some(&key(300)), 50)
        .unwrap();
    assert_eq!(past.at_least, 50);
    assert!((100..400).contains(&past.about), "{past:?}");
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
    // A range the tables alone put at the limit is not walked in the memtable: the 1000
    // versions there are not added. Below the limit they are.
    let big = est(&key(0), Some(&key(4000)), 100);
    assert!(big < 4_500, "estimate {big} counted the memtable");
    near(big, 4000);
    near(est(&key(0), Some(&key(4000)), 100_000), 5000);
}

/// Many tables per level (the estimate binary-searches each sorted level for the tables in
/// the range and adds up every one of them) plus an L0 table over them: ranges within one
/// table, across several, across a gap between tables and past the end all come out near
/// the number of versions they hold.
#[test]
fn every_table_of_every_level_in_the_range_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .write_buffer_size(64 << 10)
        .target_file_size(32 << 10)
        .max_bytes_for_level_base(256 << 10)
        .level_size_ratio(4.0)
        .l0_compaction_trigger(2);
    let db = Db::open(dir.path(), opts).unwrap();
    let cf = db.default_cf();
    let value = [9u8; 40];
    // Even keys only, so that ranges of odd keys fall between entries.
    let mut order: Vec<u32> = (0..20_000).map(|i| i * 2).collect();
    // A fixed shuffle (every 7919th key modulo the count): tables of several levels overlap.
    let n = order.len();
    order = (0..n).map(|i| order[(i * 7919) % n]).collect();
    for i in &order {
        db.put(&key(*i), &value).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(&cf, None).unwrap();
    // Newer versions of keys 10000..12000 in an L0 table over the levels.
    for i in (10_000..12_000).step_by(2) {
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    let levels = db.statistics().levels;
    let deepest = levels.iter().rev().find(|l| l.files > 0).unwrap();
    assert!(
        deepest.files >= 8,
        "the test needs many tables in one level: {levels:?}"
    );

    let est = |lo: u32, hi: Option<u32>| {
        let hi = hi.map(key);
        let e = db
            .approximate_entries_cf(&cf, &key(lo), hi.as_deref(), 10)
            .unwrap();
        assert!(e.at_least <= e.about, "{e:?}");
        e.about
    };
    // Versions in [lo, hi): one per even key, two for 10000..12000.
    let versions = |lo: u32, hi: u32| {
        (lo..hi)
            .filter(|i| i % 2 == 0 && *i < 40_000)
            .map(|i| if (10_000..12_000).contains(&i) { 2 } else { 1 })
            .sum::<u64>()
    };
    let near = |lo: u32, hi: Option<u32>| {
        let got = est(lo, hi);
        let want = versions(lo, hi.unwrap_or(40_000));
        assert!(
            got.abs_diff(want) <= want / 5 + 200,
            "[{lo}, {hi:?}): estimate {got}, expected about {want}"
        );
    };
    near(0, None);
    near(0, Some(20_000));
    near(5_001, Some(35_001));
    near(9_000, Some(13_000));
    near(39_000, None);
    near(20_000, Some(24_000));
    assert_eq!(est(40_001, None), 0);

    // A range of one key holds one or two versions: where the key ends a data block in some
    // table, the estimate puts the range at that whole block, but its lower bound is 0 for
    // every such range.
    let mut crossing = 0;
    for lo in (0..40_000).step_by(2) {
        let e = db
            .approximate_entries_cf(&cf, &key(lo), Some(&key(lo + 1)), 10)
            .unwrap();
        assert_eq!(e.at_least, 0, "[{lo}, {}): {e:?}", lo + 1);
        crossing += u32::from(e.about > 0);
    }
    assert!(crossing > 20, "{crossing} ranges crossed a block boundary");
}
