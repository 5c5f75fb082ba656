//! Back-pressure: writes slow down (and are counted) as L0 fills, never lose data, and the
//! memtable budget bounds memory across column families.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use riptide::{Db, Options, SyncMode};

#[test]
fn writes_slow_down_as_l0_fills_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(8 * 1024)
        .l0_compaction_trigger(40)
        // L0 must fill: no young-database merging of these tiny tables.
        .young_space_bound(false)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(100)
        .max_immutable_memtables(4)
        // Slow enough for the flushes of these tiny memtables (three fsyncs each) to keep
        // up, so the slowdown alone absorbs the pressure.
        .delayed_write_rate(256 * 1024);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..2000u32 {
        db.put(&i.to_be_bytes(), &[i as u8; 100]).unwrap();
    }
    let s = db.statistics();
    assert!(s.levels[0].files >= 2, "L0 never filled: {s}");
    assert!(s.write_slowdowns > 0, "no slowdown was recorded: {s}");
    assert!(s.write_slowdown_micros > 0);
    assert_eq!(s.write_stops, 0, "a stop is a last resort: {s}");
    for i in 0..2000u32 {
        assert_eq!(db.get(&i.to_be_bytes()).unwrap(), Some(vec![i as u8; 100]));
    }
    db.close().unwrap();
}

#[test]
fn writes_stop_at_the_l0_stop_trigger_until_compaction_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(8 * 1024)
        .l0_compaction_trigger(3)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(3);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..4000u32 {
        db.put(&i.to_be_bytes(), &[i as u8; 100]).unwrap();
    }
    let s = db.statistics();
    assert!(
        s.write_slowdowns + s.write_stops > 0,
        "no back-pressure recorded: {s}"
    );
    assert!(s.levels[0].files <= 3, "L0 passed its stop trigger: {s}");
    for i in (0..4000u32).step_by(7) {
        assert_eq!(db.get(&i.to_be_bytes()).unwrap(), Some(vec![i as u8; 100]));
    }
    db.close().unwrap();
}

#[test]
fn memtables_of_all_column_families_stay_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 256 * 1024;
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(1 << 20)
        .db_write_buffer_size(budget);
    let db = Db::open(dir.path(), opts).unwrap();
    let cfs: Vec<_> = (0..4)
        .map(|i| db.create_cf(&format!("cf{i}")).unwrap())
        .collect();
    let mut peak = 0;
    for i in 0..20_000u32 {
        let cf = &cfs[(i % 4) as usize];
        db.put_cf(cf, &i.to_be_bytes(), &[1u8; 100]).unwrap();
        peak = peak.max(db.statistics().memtable_bytes);
    }
    // Each column family alone (1 MiB buffers) would hold everything; the shared budget
    // forces flushes. Allow one write (and its skiplist node) beyond it.
    let bound = budget as u64 + 4096;
    assert!(
        peak <= bound,
        "memtables reached {peak} bytes, budget {budget}"
    );
    assert!(db.statistics().flushes > 0);
    db.close().unwrap();
}
