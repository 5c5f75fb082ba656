//! `Table::scan_iter` (compaction's reads): the same entries as `iter` in both directions,
//! cached blocks used but nothing inserted into the block cache, many blocks per read, and
//! damage reported with the file and the block offset.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_sstable::{BlockCache, Compression, TableOptions};

fn opts() -> TableOptions {
    TableOptions {
        block_size: 1024,
        compression: Compression::None,
        ..TableOptions::default()
    }
}

fn scan_all(it: &mut impl InternalIterator) -> common::Entries {
    let mut out = Vec::new();
    it.seek_to_first().unwrap();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

#[test]
fn scan_reads_what_iter_reads_and_leaves_the_cache_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(BlockCache::new(64 << 20));
    let entries = common::simple_entries(3000, 50);
    let t = common::build(dir.path(), "t.sst", &entries, opts(), Some(cache.clone()));
    let blocks = t.properties().data_blocks;
    assert!(blocks > 100, "{blocks} blocks");

    // A window far smaller than the table, but several blocks wide.
    let mut scan = t.scan_iter(8 << 10);
    assert_eq!(scan_all(&mut scan), entries);
    let s = cache.stats();
    assert_eq!(s.data.inserts, 0, "a scan must not fill the cache");
    assert_eq!(t.stats().blocks_read, blocks);

    // Backwards too (each step back before the window reads again; still correct).
    let mut back = Vec::new();
    scan.seek_to_last().unwrap();
    while scan.valid() {
        back.push((scan.key().to_vec(), scan.value().to_vec()));
        scan.prev().unwrap();
    }
    back.reverse();
    assert_eq!(back, entries);

    // Seeks land where `iter`'s do.
    let mut plain = t.iter();
    for i in (0..entries.len()).step_by(97) {
        let target = &entries[i].0;
        scan.seek(target).unwrap();
        plain.seek(target).unwrap();
        assert!(scan.valid() && plain.valid());
        assert_eq!(scan.key(), plain.key());
        assert_eq!(scan.value(), plain.value());
    }
    assert!(
        cache.stats().data.inserts > 0,
        "the plain iterator fills the cache"
    );

    // Blocks already cached (by the plain iterator) are taken from the cache: a scan after a
    // full plain read reads no data block from the file.
    let _ = common::read_everything(&t).unwrap();
    let before = t.stats().blocks_read;
    let mut again = t.scan_iter(8 << 10);
    assert_eq!(scan_all(&mut again), entries);
    assert_eq!(t.stats().blocks_read, before);
}

#[test]
fn a_damaged_block_read_ahead_is_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(2000, 50);
    let t = common::build(dir.path(), "t.sst", &entries, opts(), None);
    let data_size = t.properties().data_size;
    let path = t.path().to_path_buf();
    drop(t);
    // Flip a byte in the middle of the data blocks: the scan must stop with Corruption there.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = (data_size / 2) as usize;
    bytes[at] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let t = riptide_sstable::Table::open(&path, None).unwrap();
    let mut it = t.scan_iter(64 << 10);
    let mut err = None;
    let mut read = 0;
    match it.seek_to_first() {
        Err(e) => err = Some(e),
        Ok(()) => {
            while it.valid() {
                read += 1;
                if let Err(e) = it.next() {
                    err = Some(e);
                    break;
                }
            }
        }
    }
    let e = err.expect("the flipped byte must be detected");
    common::assert_corruption(&e, "scan over a flipped byte");
    let msg = e.to_string();
    assert!(msg.contains("t.sst"), "{msg}");
    assert!(msg.contains("offset"), "{msg}");
    assert!(read < entries.len(), "read {read} entries past the damage");
}
