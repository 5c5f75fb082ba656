//! Read amplification: a point read of an existing key touches about one data block, whatever
//! the number of tables and levels (bloom filters keep the other tables from costing one),
//! and a read of a missing key touches almost none. Counted by `Statistics::get_data_blocks`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use riptide::{Db, Options};

fn key(i: u64) -> Vec<u8> {
    // Spread keys so every table overlaps every other (the worst case for L0).
    format!("k{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes()
}

#[test]
fn gets_touch_about_one_block() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .write_buffer_size(256 << 10)
        .target_file_size(256 << 10)
        .l0_compaction_trigger(4);
    let db = Db::open(dir.path(), opts).unwrap();
    let n = 40_000u64;
    for i in 0..n {
        db.put(&key(i), &[b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    let stats = db.statistics();
    let tables: usize = stats.levels.iter().map(|l| l.files).sum();
    assert!(tables >= 8, "want many tables, got {tables}");

    let before = db.statistics();
    for i in (0..n).step_by(7) {
        assert!(db.get(&key(i)).unwrap().is_some());
    }
    let after = db.statistics();
    let gets = after.gets - before.gets;
    let blocks = after.get_data_blocks - before.get_data_blocks;
    let per_get = blocks as f64 / gets as f64;
    assert!(
        (1.0..1.25).contains(&per_get),
        "{per_get:.3} data blocks per get of an existing key over {tables} tables"
    );

    let before = db.statistics();
    for i in n..n + 5_000 {
        assert!(db.get(&key(i)).unwrap().is_none());
    }
    let after = db.statistics();
    let per_miss =
        (after.get_data_blocks - before.get_data_blocks) as f64 / (after.gets - before.gets) as f64;
    assert!(
        per_miss < 0.2,
        "{per_miss:.3} data blocks per get of a missing key over {tables} tables"
    );
    assert!(after.data_blocks_per_get() > 0.0);
    assert!(format!("{after}").contains("data blocks per get"));
}
