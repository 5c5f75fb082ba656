//! With `compression = zstd`, every table the engine writes is compressed: flushes,
//! compactions and ingests. Compressible rows take a fraction of their size on disk in
//! each, and read back whole.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use riptide::{Compression, Db, Options};

fn table_bytes(db: &Db) -> u64 {
    db.statistics().levels.iter().map(|l| l.bytes).sum()
}

fn value(i: u32) -> Vec<u8> {
    format!("{i:08}-{}", "compressible text repeated ".repeat(8)).into_bytes()
}

#[test]
fn flushes_and_compactions_write_compressed_tables() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .compression(Compression::Zstd { level: 1 })
        .young_space_bound(false);
    let db = Db::open(dir.path(), opts).unwrap();
    let n = 5_000u32;
    let raw: u64 = (0..n).map(|i| 9 + value(i).len() as u64).sum();
    for round in 0..2 {
        for i in 0..n {
            db.put(format!("k{i:08}").as_bytes(), &value(i + round))
                .unwrap();
        }
        db.flush().unwrap();
    }
    let flushed = table_bytes(&db);
    assert!(
        flushed < raw,
        "flushed {flushed} bytes for {raw} raw per copy"
    );
    db.compact_range(&db.default_cf(), None).unwrap();
    let compacted = table_bytes(&db);
    assert!(
        compacted * 3 < raw,
        "a compaction wrote {compacted} bytes for {raw} bytes of rows"
    );
    for i in (0..n).step_by(37) {
        assert_eq!(
            db.get(format!("k{i:08}").as_bytes()).unwrap(),
            Some(value(i + 1))
        );
    }
}
