//! `Table::approximate_entries` (what range estimates for query planning ask): from the
//! index block and the one data block where the range starts, the entries of a key range to
//! within about a data block, also where entries of different sizes share the table; 0 for a
//! range within one block or outside the table.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_sstable::{BlockCache, Compression, TableOptions};

/// The estimate alone (`about`), checked against its lower bound on the way.
trait About {
    fn approximate_entries_about(
        &self,
        lo: &[u8],
        hi: Option<&[u8]>,
    ) -> riptide_common::Result<u64>;
}

impl About for riptide_sstable::Table {
    fn approximate_entries_about(
        &self,
        lo: &[u8],
        hi: Option<&[u8]>,
    ) -> riptide_common::Result<u64> {
        let e = self.approximate_entries(lo, hi)?;
        assert!(e.at_least <= e.about, "{lo:?}..{hi:?}: {e:?}");
        Ok(e.about)
    }
}

/// Uncompressed 1 KiB data blocks: many blocks in a small table, so block boundaries are
/// where the tests can see them.
fn small_blocks() -> TableOptions {
    TableOptions {
        block_size: 1024,
        compression: Compression::None,
        ..TableOptions::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

#[test]
fn ranges_are_estimated_to_a_block_from_the_index_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(BlockCache::new(64 << 20));
    let opts = small_blocks();
    let n = 10_000;
    let t = common::build(
        dir.path(),
        "t.sst",
        &common::simple_entries(n, 50),
        opts,
        Some(cache.clone()),
    );
    let blocks = t.properties().data_blocks;
    assert!(blocks > 100, "{blocks} blocks");
    // Entries per block, the estimate's resolution.
    let per_block = (n as u64).div_ceil(blocks);
    let close = |got: u64, want: u64| {
        assert!(
            got.abs_diff(want) <= 2 * per_block,
            "estimate {got}, expected about {want} (a block holds {per_block})"
        );
    };

    close(t.approximate_entries_about(b"", None).unwrap(), n as u64);
    close(
        t.approximate_entries_about(&key(0), Some(&key(5000)))
            .unwrap(),
        5000,
    );
    close(
        t.approximate_entries_about(&key(2500), Some(&key(7500)))
            .unwrap(),
        5000,
    );
    close(t.approximate_entries_about(&key(9000), None).unwrap(), 1000);
    // A range inside one block, an empty range, and ranges outside the table.
    assert_eq!(
        t.approximate_entries_about(&key(10), Some(&key(11)))
            .unwrap(),
        0
    );
    assert_eq!(
        t.approximate_entries_about(&key(100), Some(&key(100)))
            .unwrap(),
        0
    );
    assert_eq!(t.approximate_entries_about(b"zzz", None).unwrap(), 0);
    assert_eq!(t.approximate_entries_about(b"", Some(b"a")).unwrap(), 0);
    // At most one data block per estimate.
    assert!(t.stats().blocks_read <= 4, "{:?}", t.stats());

    // The lower bound leaves out the range's first block: within two blocks of the estimate.
    let e = t.approximate_entries(&key(2500), Some(&key(7500))).unwrap();
    assert!(
        e.at_least <= e.about && e.about - e.at_least <= 2 * per_block,
        "{e:?}"
    );
}

/// A range of one key is put at a whole block when its key ends a data block (the next key
/// starts the next one), at 0 otherwise; its lower bound is 0 every time, so a caller can
/// tell a small range from a large one.
#[test]
fn a_range_across_a_block_boundary_is_surely_small() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small_blocks();
    let n = 5_000;
    let t = common::build(
        dir.path(),
        "t.sst",
        &common::simple_entries(n, 50),
        opts,
        None,
    );
    let blocks = t.properties().data_blocks;
    let mut across = 0;
    for k in 0..n - 1 {
        let e = t.approximate_entries(&key(k), Some(&key(k + 1))).unwrap();
        assert_eq!(e.at_least, 0, "[{k}, {}): {e:?}", k + 1);
        if e.about > 0 {
            across += 1;
        }
    }
    // Every block boundary but the last one's is crossed by one such range.
    assert!(
        across + 1 >= blocks && across <= blocks,
        "{across} of {blocks} blocks"
    );
}

/// Small entries (a secondary index's) then large ones (rows) in one table: each range is
/// estimated at its own density, not the table's average, and a second estimate reads no
/// block.
#[test]
fn ranges_of_small_and_large_entries_keep_their_density() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small_blocks();
    let mut entries = Vec::new();
    for i in 0..3000u64 {
        let k = format!("a{i:06}");
        entries.push((
            riptide_common::key::internal_key(k.as_bytes(), i + 1, riptide_common::ValueKind::Put),
            Vec::new(),
        ));
    }
    for i in 0..3000u64 {
        let k = format!("b{i:06}");
        entries.push((
            riptide_common::key::internal_key(k.as_bytes(), i + 1, riptide_common::ValueKind::Put),
            vec![9u8; 200],
        ));
    }
    let t = common::build(dir.path(), "t.sst", &entries, opts, None);
    let ranges = [(&b"a"[..], &b"b"[..]), (b"b", b"c")];
    let first: Vec<u64> = ranges
        .iter()
        .map(|(lo, hi)| t.approximate_entries_about(lo, Some(hi)).unwrap())
        .collect();
    for ((lo, hi), got) in ranges.iter().zip(&first) {
        assert!(got.abs_diff(3000) <= 300, "{lo:?}..{hi:?}: {got}");
    }
    // Asked again (the optimizer asks about the same ranges over and over), the sampled
    // blocks' entry counts are remembered: the same answers, and no data block is read (this
    // table has no block cache, so each block it uses is a read).
    let reads = t.stats().blocks_read;
    let again: Vec<u64> = ranges
        .iter()
        .map(|(lo, hi)| t.approximate_entries_about(lo, Some(hi)).unwrap())
        .collect();
    assert_eq!(again, first);
    assert_eq!(t.stats().blocks_read, reads, "{:?}", t.stats());
}
