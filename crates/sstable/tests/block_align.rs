//! `TableOptions::block_align`: every data block of an uncompressed table starts at a
//! multiple of the block size and fits it with its trailer, so a point lookup that misses
//! the block cache reads one page; the table reads back like a packed one.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_common::fs::{CountingFs, real};
use riptide_common::key::{MAX_SEQNO, user_key};
use riptide_sstable::format::{ALIGNED_FORMAT_VERSION, FORMAT_VERSION};
use riptide_sstable::{CacheId, Compression, Table, TableOptions, TableReadOptions, TableWriter};

fn aligned(block_size: usize) -> TableOptions {
    TableOptions {
        block_size,
        compression: Compression::None,
        block_align: true,
        ..TableOptions::default()
    }
}

/// Entries of uneven sizes (20 to 700 bytes), so blocks end at every kind of offset.
fn uneven_entries(n: usize) -> common::Entries {
    let mut e = common::simple_entries(n, 0);
    for (i, (_, v)) in e.iter_mut().enumerate() {
        *v = vec![b'a' + (i % 26) as u8; 20 + (i * 97) % 681];
    }
    e
}

#[test]
fn every_data_block_starts_at_a_multiple_of_the_block_size_and_fits_it() {
    let dir = tempfile::tempdir().unwrap();
    let entries = uneven_entries(5_000);
    let path = dir.path().join("t.sst");
    let props = common::write_table(&path, &entries, aligned(4096));
    assert_eq!(props.block_align, 4096);
    assert_eq!(props.format_version, ALIGNED_FORMAT_VERSION);
    let t = Table::open(&path, None).unwrap();
    assert_eq!(t.properties().block_align, 4096);
    assert_eq!(t.properties().format_version, ALIGNED_FORMAT_VERSION);
    // The data area is whole pages but for the last block (no padding after it).
    let blocks = t.properties().data_blocks;
    assert!(blocks > 100, "{blocks} blocks");
    assert!(t.properties().data_size > (blocks - 1) * 4096);
    assert!(t.properties().data_size <= blocks * 4096);
    let mut offsets = Vec::new();
    for (k, _) in &entries {
        let at = t.approximate_offset_of(user_key(k)).unwrap();
        assert_eq!(at % 4096, 0, "block at {at}");
        offsets.push(at);
    }
    offsets.dedup();
    assert_eq!(offsets.len() as u64, blocks);
    // Consecutive blocks are one page apart: none overflows its page.
    for w in offsets.windows(2) {
        assert_eq!(w[1] - w[0], 4096, "blocks at {} and {}", w[0], w[1]);
    }
    assert_eq!(common::read_everything(&t).unwrap(), entries);
    for (i, (k, v)) in entries.iter().enumerate().step_by(7) {
        let got = t.get(user_key(k), MAX_SEQNO).unwrap().unwrap();
        assert_eq!(&got.value, v);
        assert!(
            t.get(&common::absent_key(&entries, i), MAX_SEQNO)
                .unwrap()
                .is_none()
        );
    }
}

#[test]
fn a_lookup_that_misses_the_cache_reads_one_page_at_most() {
    let dir = tempfile::tempdir().unwrap();
    let entries = uneven_entries(3_000);
    let path = dir.path().join("t.sst");
    common::write_table(&path, &entries, aligned(4096));
    let fs = CountingFs::new(real());
    let t = Table::open_in(
        &fs,
        &path,
        None,
        &TableReadOptions::default(),
        CacheId::unique(),
    )
    .unwrap();
    // The open reads the index and the filter whole; only the lookups count from here.
    fs.forget_largest();
    let reads0 = fs.reads();
    let mut lookups = 0;
    for (k, v) in entries.iter().step_by(11) {
        let got = t.get(user_key(k), MAX_SEQNO).unwrap().unwrap();
        assert_eq!(&got.value, v);
        lookups += 1;
    }
    // One read per lookup, of one block that fits its page with its trailer (at an offset
    // that is a multiple of 4096: see the test above).
    assert_eq!(fs.reads() - reads0, lookups);
    assert!(fs.largest() <= 4096, "largest read {}", fs.largest());
}

#[test]
fn alignment_applies_to_uncompressed_tables_only() {
    let dir = tempfile::tempdir().unwrap();
    let entries = uneven_entries(2_000);
    let path = dir.path().join("z.sst");
    let props = common::write_table(
        &path,
        &entries,
        TableOptions {
            compression: Compression::Zstd { level: 1 },
            ..aligned(4096)
        },
    );
    assert_eq!(props.block_align, 0);
    assert_eq!(props.format_version, FORMAT_VERSION);
    let t = Table::open(&path, None).unwrap();
    assert_eq!(common::read_everything(&t).unwrap(), entries);
}

#[test]
fn block_sizes_that_cannot_be_aligned_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for size in [256, 4000, 3 << 20] {
        let e = TableWriter::create(&dir.path().join(format!("{size}.sst")), aligned(size))
            .unwrap_err();
        assert_eq!(e.kind(), riptide_common::ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("block_align"), "{e}");
    }
    // Without alignment any size goes.
    TableWriter::create(
        &dir.path().join("packed.sst"),
        TableOptions {
            block_align: false,
            ..aligned(4000)
        },
    )
    .unwrap();
}

#[test]
fn an_entry_larger_than_a_block_gets_a_block_of_whole_pages() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = uneven_entries(200);
    entries[100].1 = vec![b'x'; 10_000];
    let path = dir.path().join("big.sst");
    common::write_table(&path, &entries, aligned(4096));
    let t = Table::open(&path, None).unwrap();
    let big = t.approximate_offset_of(user_key(&entries[100].0)).unwrap();
    let after = t.approximate_offset_of(user_key(&entries[101].0)).unwrap();
    assert_eq!(big % 4096, 0);
    assert_eq!(after % 4096, 0);
    assert!(after - big >= 3 * 4096, "{big} .. {after}");
    assert_eq!(common::read_everything(&t).unwrap(), entries);
}

#[test]
fn a_scan_of_an_aligned_table_still_reads_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(20_000, 100);
    let path = dir.path().join("scan.sst");
    common::write_table(&path, &entries, aligned(1024));
    let fs = CountingFs::new(real());
    let cache = Arc::new(riptide_sstable::BlockCache::new(64 << 20));
    let t = Table::open_in(
        &fs,
        &path,
        Some(cache),
        &TableReadOptions {
            cache_index_and_filter: false,
        },
        CacheId::unique(),
    )
    .unwrap();
    let blocks = t.properties().data_blocks;
    let reads0 = fs.reads();
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, entries.len());
    // The padding between blocks does not stop the read-ahead: far fewer reads than blocks.
    let reads = fs.reads() - reads0;
    assert!(reads * 10 < blocks, "{reads} reads for {blocks} blocks");
}

#[test]
fn approximate_entries_count_the_padding_as_part_of_each_block() {
    let dir = tempfile::tempdir().unwrap();
    let entries = uneven_entries(5_000);
    let path = dir.path().join("est.sst");
    common::write_table(&path, &entries, aligned(4096));
    let t = Table::open(&path, None).unwrap();
    let lo = user_key(&entries[1_000].0).to_vec();
    let hi = user_key(&entries[3_000].0).to_vec();
    let est = t.approximate_entries(&lo, Some(&hi)).unwrap();
    let ratio = est.about as f64 / 2_000.0;
    assert!((0.7..1.4).contains(&ratio), "{} for 2000", est.about);
}
