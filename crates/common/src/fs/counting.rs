//! [`CountingFs`]: a file system that counts what the files it opens for reading are asked,
//! so a test or a benchmark can tell how many reads (and how many bytes) an operation costs,
//! not only how many blocks.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    CreateMode, DirEntry, FileLock, FileSystem, FsRef, Metadata, RandomAccessFile, WritableFile,
};

/// What the files opened through a [`CountingFs`] were asked, since it was made.
#[derive(Debug, Default)]
struct ReadCounts {
    reads: AtomicU64,
    bytes: AtomicU64,
    largest: AtomicU64,
    advised_random: AtomicU64,
}

/// Another file system (usually [`super::RealFs`]) that counts the reads of the files it
/// opens for reading: how many `read_exact_at` calls, how many bytes, the largest one, and
/// how many random-access advices. Every other call goes through unchanged.
#[derive(Debug)]
pub struct CountingFs {
    inner: FsRef,
    counts: Arc<ReadCounts>,
}

impl CountingFs {
    /// Counts the reads of files opened through `inner`.
    pub fn new(inner: FsRef) -> Self {
        CountingFs {
            inner,
            counts: Arc::default(),
        }
    }

    /// Reads so far.
    pub fn reads(&self) -> u64 {
        self.counts.reads.load(Ordering::Relaxed)
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.counts.bytes.load(Ordering::Relaxed)
    }

    /// The largest read since the start or the last [`CountingFs::forget_largest`].
    pub fn largest(&self) -> u64 {
        self.counts.largest.load(Ordering::Relaxed)
    }

    /// Starts [`CountingFs::largest`] over.
    pub fn forget_largest(&self) {
        self.counts.largest.store(0, Ordering::Relaxed);
    }

    /// Random-access advices given so far ([`RandomAccessFile::advise_random`]).
    pub fn advised_random(&self) -> u64 {
        self.counts.advised_random.load(Ordering::Relaxed)
    }
}

/// A file opened through a [`CountingFs`].
#[derive(Debug)]
struct CountingFile {
    inner: Box<dyn RandomAccessFile>,
    counts: Arc<ReadCounts>,
}

impl RandomAccessFile for CountingFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let len = buf.len() as u64;
        self.counts.reads.fetch_add(1, Ordering::Relaxed);
        self.counts.bytes.fetch_add(len, Ordering::Relaxed);
        self.counts.largest.fetch_max(len, Ordering::Relaxed);
        self.inner.read_exact_at(buf, offset)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn advise_random(&self) -> io::Result<()> {
        self.counts.advised_random.fetch_add(1, Ordering::Relaxed);
        self.inner.advise_random()
    }
}

impl FileSystem for CountingFs {
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>> {
        self.inner.create(path, mode)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(CountingFile {
            inner: self.inner.open_read(path)?,
            counts: Arc::clone(&self.counts),
        }))
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.inner.truncate(path, len)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        self.inner.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.hard_link(from, to)
    }
    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.create_dir(dir)
    }
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.remove_dir(dir)
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.metadata(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.inner.lock_file(path)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::fs::real;

    #[test]
    fn counts_the_reads_of_the_files_it_opens() {
        let path = std::env::temp_dir().join(format!("riptide-counting-fs-{}", std::process::id()));
        std::fs::write(&path, vec![7u8; 100]).unwrap();
        let fs = CountingFs::new(real());
        let f = fs.open_read(&path).unwrap();
        let mut buf = [0u8; 30];
        f.read_exact_at(&mut buf, 0).unwrap();
        f.read_exact_at(&mut buf[..10], 50).unwrap();
        f.advise_random().unwrap();
        assert_eq!((fs.reads(), fs.bytes(), fs.largest()), (2, 40, 30));
        assert_eq!(fs.advised_random(), 1);
        fs.forget_largest();
        assert_eq!(fs.largest(), 0);
        // A read that fails is counted too (it was asked).
        assert!(f.read_exact_at(&mut buf, 90).is_err());
        assert_eq!(fs.reads(), 3);
        std::fs::remove_file(&path).unwrap();
    }
}
