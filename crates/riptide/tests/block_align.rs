//! `block_align`: while a database is open with it, flushes and compactions write tables
//! whose data blocks start at multiples of the block size (format version 3); a database
//! holding both kinds reads back whole, before and after a reopen. It is fixed while open,
//! and a block size that cannot be aligned is refused at open, not at the first flush.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use riptide::{Db, ErrorKind, Options};
use riptide_sstable::Table;
use riptide_sstable::format::{ALIGNED_FORMAT_VERSION, FORMAT_VERSION};

/// The (format version, alignment) of every table file in `dir`, sorted.
fn table_formats(dir: &Path) -> Vec<(u32, u64)> {
    let mut out: Vec<(u32, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "sst").then_some(p)
        })
        .map(|p| {
            let t = Table::open(&p, None).unwrap();
            (t.properties().format_version, t.properties().block_align)
        })
        .collect();
    out.sort_unstable();
    out
}

fn fill(db: &Db, round: u32) {
    for i in 0..4_000u32 {
        let v = format!("{round}-{i}-{}", "x".repeat((i % 300) as usize));
        db.put(format!("k{i:06}").as_bytes(), v.as_bytes()).unwrap();
    }
}

fn check(db: &Db, round: u32) {
    for i in (0..4_000u32).step_by(13) {
        let v = format!("{round}-{i}-{}", "x".repeat((i % 300) as usize));
        assert_eq!(
            db.get(format!("k{i:06}").as_bytes()).unwrap().as_deref(),
            Some(v.as_bytes())
        );
    }
}

/// Options that leave the tables as the flushes write them: no early L0 merge of a young
/// database (`young_space_bound`), which would merge the first two tables behind the test's
/// back (and whose output, listed while being written, is an empty file).
fn flushes_only() -> Options {
    Options::default().young_space_bound(false)
}

#[test]
fn tables_written_after_the_switch_are_aligned_and_everything_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), flushes_only()).unwrap();
    fill(&db, 0);
    db.flush().unwrap();
    assert!(
        table_formats(dir.path())
            .iter()
            .all(|&f| f == (FORMAT_VERSION, 0))
    );

    let e = db.set_option("block_align", "ON").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    drop(db);
    let db = Db::open(dir.path(), flushes_only().block_align(true)).unwrap();
    check(&db, 0);
    fill(&db, 1);
    db.flush().unwrap();
    let formats = table_formats(dir.path());
    assert!(formats.contains(&(FORMAT_VERSION, 0)), "{formats:?}");
    assert!(
        formats.contains(&(ALIGNED_FORMAT_VERSION, 4096)),
        "{formats:?}"
    );
    check(&db, 1);

    // A compaction merges both kinds into aligned tables.
    let cf = db.default_cf();
    db.compact_range(&cf, None).unwrap();
    let formats = table_formats(dir.path());
    assert!(!formats.is_empty());
    assert!(
        formats.iter().all(|&f| f == (ALIGNED_FORMAT_VERSION, 4096)),
        "{formats:?}"
    );
    check(&db, 1);
    drop(db);

    // Read back by a database open without the option.
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check(&db, 1);
}

#[test]
fn a_block_size_that_cannot_be_aligned_is_refused_where_it_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let e = Db::open(
        dir.path(),
        Options::default().block_size(3000).block_align(true),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("block_align"), "{e}");

    // Without alignment any block size goes.
    let db = Db::open(dir.path(), Options::default().block_size(3000)).unwrap();
    fill(&db, 2);
    db.flush().unwrap();
    check(&db, 2);
}
