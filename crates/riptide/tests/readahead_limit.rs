//! A database iterator told where its scan ends (`DbIterator::set_readahead_limit`) reads a
//! range of several blocks of a table in one file read; without the hint it reads the block
//! it lands in alone and the rest with a second read. Counted with a file system that counts
//! the reads of table files.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use riptide::fs::{
    CreateMode, DirEntry, FileLock, FileSystem, Metadata, RandomAccessFile, RealFs, WritableFile,
};
use riptide::{Db, Options, ReadOptions, SyncMode};

/// The real file system, counting reads of the table files it opens.
#[derive(Debug, Default)]
struct CountingFs(Arc<AtomicU64>);

#[derive(Debug)]
struct CountingFile(Box<dyn RandomAccessFile>, Arc<AtomicU64>);

impl RandomAccessFile for CountingFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.1.fetch_add(1, Ordering::Relaxed);
        self.0.read_exact_at(buf, offset)
    }
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn advise_random(&self) -> io::Result<()> {
        self.0.advise_random()
    }
}

impl FileSystem for CountingFs {
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>> {
        RealFs.create(path, mode)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let file = RealFs.open_read(path)?;
        if path.extension().is_some_and(|e| e == "sst") {
            Ok(Box::new(CountingFile(file, Arc::clone(&self.0))))
        } else {
            Ok(file)
        }
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

fn key(i: u64) -> Vec<u8> {
    format!("k{i:08}").into_bytes()
}

/// Table-file reads of one range scan of `[from, to)` at a fresh database iterator (on a
/// reopened database, after a first seek elsewhere has loaded the table's index and
/// filter), with or without the range's end as the read-ahead limit.
fn reads_of_one_range(dir: &Path, from: u64, to: u64, hint: bool) -> u64 {
    let fs = Arc::new(CountingFs::default());
    let db = Db::open(dir, Options::default().file_system(fs.clone())).unwrap();
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek(&key(10)).unwrap();
    assert!(it.valid());
    let before = fs.0.load(Ordering::Relaxed);
    if hint {
        it.set_readahead_limit(Some(&key(to)));
    }
    it.seek(&key(from)).unwrap();
    for i in from..to {
        assert_eq!(it.key(), key(i).as_slice());
        it.next().unwrap();
    }
    fs.0.load(Ordering::Relaxed) - before
}

#[test]
fn a_range_scan_told_its_end_reads_its_blocks_at_once() {
    let dir = tempfile::tempdir().unwrap();
    {
        let opts = Options::default()
            .sync_mode(SyncMode::None)
            .target_file_size(64 << 20);
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..20_000u64 {
            db.put(&key(i), &[b'v'; 100]).unwrap();
        }
        db.flush().unwrap();
        db.compact_range(&db.default_cf(), None).unwrap();
        let files: usize = db.statistics().levels.iter().map(|l| l.files).sum();
        assert!(files <= 2, "{:?}", db.statistics().levels);
    }
    // 100 rows of ~120 bytes: about three 4 KiB blocks, inside the first of the (at most
    // two, 1 MiB each) tables.
    let (from, to) = (2_000, 2_100);
    let plain = reads_of_one_range(dir.path(), from, to, false);
    let told = reads_of_one_range(dir.path(), from, to, true);
    assert_eq!(
        plain, 2,
        "the landing block alone, then a read-ahead window"
    );
    assert_eq!(told, 1, "the whole range in one read");
}
