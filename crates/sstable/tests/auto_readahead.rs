//! Tables are opened with random-access advice, so the kernel reads no more than a lookup
//! asks for; a user's iterator then reads ahead by itself once it reads consecutive blocks
//! from the file (RocksDB's auto read-ahead), and what it reads enters the block cache.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_common::fs::{CountingFs, real};
use riptide_sstable::{
    AUTO_READAHEAD_AFTER, AUTO_READAHEAD_INITIAL, AUTO_READAHEAD_MAX, BlockCache, CacheId,
    Compression, SPAN_READAHEAD_MAX, Table, TableOptions, TableReadOptions,
};

/// A table of many 1 KiB blocks, opened through `fs` with its own block cache (index and
/// filter pinned, so only data blocks are read after the open).
fn table(dir: &Path, fs: &CountingFs, entries: &common::Entries) -> (Arc<Table>, Arc<BlockCache>) {
    let path = dir.join("t.sst");
    common::write_table(
        &path,
        entries,
        TableOptions {
            block_size: 1024,
            compression: Compression::None,
            ..TableOptions::default()
        },
    );
    let cache = Arc::new(BlockCache::new(64 << 20));
    let opts = TableReadOptions {
        cache_index_and_filter: false,
    };
    let t = Table::open_in(
        fs,
        &path,
        Some(Arc::clone(&cache)),
        &opts,
        CacheId::unique(),
    )
    .unwrap();
    // The open reads the index and the filter whole; only what comes after counts.
    fs.forget_largest();
    (t, cache)
}

#[test]
fn tables_are_opened_with_random_access_advice() {
    let dir = tempfile::tempdir().unwrap();
    let fs = CountingFs::new(real());
    let (_t, _) = table(dir.path(), &fs, &common::simple_entries(100, 10));
    assert_eq!(fs.advised_random(), 1);
}

#[test]
fn a_long_forward_scan_reads_ahead_in_growing_windows_and_fills_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let fs = CountingFs::new(real());
    let entries = common::simple_entries(12_000, 50);
    let (t, cache) = table(dir.path(), &fs, &entries);
    let blocks = t.properties().data_blocks;
    assert!(blocks > 600, "{blocks} blocks");
    let (reads0, bytes0) = (fs.reads(), fs.bytes());

    let mut it = t.iter();
    let mut seen = Vec::new();
    it.seek_to_first().unwrap();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    assert_eq!(seen, entries);

    let reads = fs.reads() - reads0;
    // One block at a time until AUTO_READAHEAD_AFTER blocks in a row came from the file,
    // then windows of 8, 16, ... 256 KiB: a handful of reads, not one per block.
    let data = t.properties().data_size;
    let doubling = (AUTO_READAHEAD_MAX / AUTO_READAHEAD_INITIAL).ilog2() as u64 + 1;
    let most = u64::from(AUTO_READAHEAD_AFTER) + doubling + data / AUTO_READAHEAD_MAX as u64 + 1;
    assert!(
        reads <= most,
        "{reads} reads for {blocks} blocks ({data} bytes); at most {most} expected"
    );
    assert_eq!(
        fs.largest(),
        AUTO_READAHEAD_MAX as u64,
        "the window grows to the maximum"
    );
    // Nothing beyond the data blocks is read, and nothing twice but the part of a block
    // that a window ends in the middle of (the next window starts at that block).
    let bytes = fs.bytes() - bytes0;
    assert!(
        bytes <= data + reads * 1100,
        "{bytes} bytes read for {data}"
    );
    // Every block the scan used is in the cache: a second scan reads nothing.
    assert_eq!(cache.stats().data.inserts, blocks);
    let before = fs.reads();
    let mut again = t.iter();
    again.seek_to_first().unwrap();
    let mut n = 0;
    while again.valid() {
        n += 1;
        again.next().unwrap();
    }
    assert_eq!(n, entries.len());
    assert_eq!(fs.reads(), before);
}

#[test]
fn seeks_to_scattered_keys_read_only_their_own_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let fs = CountingFs::new(real());
    let entries = common::simple_entries(6000, 50);
    let (t, _cache) = table(dir.path(), &fs, &entries);
    let (reads0, bytes0) = (fs.reads(), fs.bytes());
    // One iterator, many seeks far apart, each landing in a block of its own and reading
    // the entry there (a positioning read): one block per seek, no window.
    let mut it = t.iter();
    let mut seeks = 0;
    for i in (0..entries.len() - 10).step_by(211) {
        it.seek(&entries[i].0).unwrap();
        assert_eq!(it.key(), &entries[i].0[..]);
        seeks += 1;
    }
    let reads = fs.reads() - reads0;
    let bytes = fs.bytes() - bytes0;
    assert_eq!(reads, seeks, "{reads} reads for {seeks} seeks");
    assert!(
        fs.largest() < AUTO_READAHEAD_INITIAL as u64,
        "a window was read: {}",
        fs.largest()
    );
    assert!(bytes <= reads * 1200, "{bytes} bytes in {reads} reads");
}

#[test]
fn a_backward_scan_reads_block_by_block_and_returns_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let fs = CountingFs::new(real());
    let entries = common::simple_entries(3000, 50);
    let (t, _cache) = table(dir.path(), &fs, &entries);
    let blocks = t.properties().data_blocks;
    let reads0 = fs.reads();
    let mut it = t.iter();
    let mut back = Vec::new();
    it.seek_to_last().unwrap();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev().unwrap();
    }
    back.reverse();
    assert_eq!(back, entries);
    assert_eq!(fs.reads() - reads0, blocks);
}

#[test]
fn a_seek_with_a_readahead_limit_reads_the_blocks_up_to_it_in_one_read() {
    use riptide_common::key::user_key;
    let dir = tempfile::tempdir().unwrap();
    let fs = CountingFs::new(real());
    let entries = common::simple_entries(6000, 50);
    let (t, _cache) = table(dir.path(), &fs, &entries);
    let per_block = entries.len() as u64 / t.properties().data_blocks;
    assert!(per_block >= 5, "{per_block} entries per block");

    // A range of 60 entries (several blocks) from a seek: one read for all of it, of no
    // more than its blocks.
    let mut it = t.iter();
    let (from, to) = (1000, 1060);
    it.set_readahead_limit(Some(user_key(&entries[to].0)));
    let (reads0, bytes0) = (fs.reads(), fs.bytes());
    it.seek(&entries[from].0).unwrap();
    for e in &entries[from..to] {
        assert_eq!(it.key(), &e.0[..]);
        it.next().unwrap();
    }
    assert_eq!(fs.reads() - reads0, 1, "one read for the range");
    let blocks = (to - from) as u64 / per_block + 2;
    assert!(
        fs.bytes() - bytes0 <= blocks * 1100,
        "{} bytes read for about {blocks} blocks",
        fs.bytes() - bytes0
    );

    // A limit far away (a scan that may stop long before it) reads at most
    // SPAN_READAHEAD_MAX at once; a scan that goes on reads ahead in growing windows.
    fs.forget_largest();
    it.set_readahead_limit(Some(user_key(&entries[entries.len() - 1].0)));
    it.seek(&entries[3000].0).unwrap();
    assert_eq!(it.key(), &entries[3000].0[..]);
    assert!(
        fs.largest() <= SPAN_READAHEAD_MAX as u64 && fs.largest() > SPAN_READAHEAD_MAX as u64 / 2,
        "{} bytes",
        fs.largest()
    );

    // A backward seek reads its own block alone, whatever the limit.
    let reads0 = fs.reads();
    fs.forget_largest();
    it.set_readahead_limit(Some(user_key(&entries[5900].0)));
    it.seek_for_prev(&entries[5500].0).unwrap();
    assert_eq!(it.key(), &entries[5500].0[..]);
    assert_eq!(fs.reads() - reads0, 1);
    assert!(fs.largest() < 1200, "{} bytes", fs.largest());

    // A limit just after the key the seek lands on: its block alone (or with the next one
    // when that key ends its block).
    let reads0 = fs.reads();
    fs.forget_largest();
    it.set_readahead_limit(Some(user_key(&entries[4001].0)));
    it.seek(&entries[4000].0).unwrap();
    assert_eq!(it.key(), &entries[4000].0[..]);
    assert_eq!(fs.reads() - reads0, 1);
    assert!(fs.largest() < 2400, "{} bytes", fs.largest());
}
