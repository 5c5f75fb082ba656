//! How a table reads its file: one system call per block for point reads and short ranges,
//! and a growing read-ahead once an ordinary iterator walks many blocks forward in a row.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use riptide_common::InternalIterator;
use riptide_common::fs::{
    CreateMode, DirEntry, FileLock, FileSystem, Metadata, RandomAccessFile, RealFs, WritableFile,
};
use riptide_common::key::{MAX_SEQNO, seek_key};
use riptide_sstable::{BlockCache, CacheId, Compression, Table, TableOptions, TableReadOptions};

/// Counts the reads of the files it opens.
#[derive(Debug, Default)]
struct CountingFs {
    reads: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

#[derive(Debug)]
struct CountingFile {
    inner: Box<dyn RandomAccessFile>,
    reads: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl RandomAccessFile for CountingFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.inner.read_exact_at(buf, offset)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
}

impl FileSystem for CountingFs {
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>> {
        RealFs.create(path, mode)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(CountingFile {
            inner: RealFs.open_read(path)?,
            reads: Arc::clone(&self.reads),
            bytes: Arc::clone(&self.bytes),
        }))
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        RealFs.truncate(path, len)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        RealFs.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        RealFs.create_dir_all(dir)
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        RealFs.metadata(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        RealFs.lock_file(path)
    }
}

const N: usize = 20_000;

/// A table of `N` entries in 1 KiB blocks, opened through a [`CountingFs`] with a block
/// cache; the counts start after the open.
fn table(dir: &Path) -> (Arc<Table>, CountingFs) {
    let path = dir.join("t.sst");
    let opts = TableOptions {
        block_size: 1024,
        compression: Compression::None,
        ..TableOptions::default()
    };
    common::write_table(&path, &common::simple_entries(N, 60), opts);
    let fs = CountingFs::default();
    let cache = Arc::new(BlockCache::new(64 << 20));
    let t = Table::open_in(
        &fs,
        &path,
        Some(cache),
        &TableReadOptions::default(),
        CacheId::unique(),
    )
    .unwrap();
    // Load the index (and filter) so that only data block reads are counted below.
    let mut it = t.iter();
    it.seek(&seek_key(b"key", MAX_SEQNO)).unwrap();
    fs.reads.store(0, Ordering::Relaxed);
    fs.bytes.store(0, Ordering::Relaxed);
    (t, fs)
}

#[test]
fn a_long_forward_scan_reads_ahead_in_growing_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fs) = table(dir.path());
    let blocks = t.properties().data_blocks;
    assert!(blocks > 1000, "{blocks} blocks");
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    let mut seen = 0;
    while it.valid() {
        assert_eq!(
            &it.key()[..11],
            format!("key{seen:08}").as_bytes(),
            "entry {seen}"
        );
        seen += 1;
        it.next().unwrap();
    }
    assert_eq!(seen, N);
    let reads = fs.reads.load(Ordering::Relaxed);
    // Two blocks one at a time, then windows of 16, 32, ... 256 KiB: about a read per 256
    // blocks once the window is full.
    assert!(
        reads < blocks / 50,
        "{reads} reads for a scan of {blocks} blocks"
    );
    assert_eq!(t.stats().blocks_read, blocks, "each block read once");
    let file_bytes = std::fs::metadata(dir.path().join("t.sst")).unwrap().len();
    assert!(
        fs.bytes.load(Ordering::Relaxed) <= file_bytes,
        "read no more than the data blocks"
    );

    // The blocks read ahead went into the cache: a second scan reads nothing.
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    while it.valid() {
        it.next().unwrap();
    }
    assert_eq!(fs.reads.load(Ordering::Relaxed), reads);
}

#[test]
fn point_reads_and_short_ranges_read_only_their_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fs) = table(dir.path());
    let per_block = N as u64 / t.properties().data_blocks;
    // Seeks far apart, each followed by a short range within about two blocks.
    let mut expected_bytes = 0;
    for (n, i) in (500..N).step_by(997).enumerate() {
        let before = fs.reads.load(Ordering::Relaxed);
        let mut it = t.iter();
        it.seek(&seek_key(format!("key{i:08}").as_bytes(), MAX_SEQNO))
            .unwrap();
        assert_eq!(&it.key()[..11], format!("key{i:08}").as_bytes());
        for _ in 0..per_block {
            assert!(it.valid());
            it.next().unwrap();
        }
        let reads = fs.reads.load(Ordering::Relaxed) - before;
        assert!(
            (1..=2).contains(&reads),
            "seek {n} to entry {i} and {per_block} entries read {reads} blocks"
        );
        expected_bytes += reads * 1100;
    }
    assert!(
        fs.bytes.load(Ordering::Relaxed) <= expected_bytes,
        "short ranges read one block per read"
    );
}
