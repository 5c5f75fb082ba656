//! The file-system seam: every file operation of the engine goes through a [`FileSystem`].
//!
//! [`RealFs`] is the production implementation over `std::fs` (positional reads with
//! `pread`, appends with `O_APPEND` and one `write()` per call, `fdatasync`/`fsync`, `fsync`
//! of directories, `flock` for the directory lock). With the `fault-injection` cargo feature,
//! [`FaultFs`] is an in-memory file system for tests that can fail any call and simulate a
//! crash that loses everything not yet fsynced.
//!
//! The traits speak `std::io::Result`, so callers keep adding their own context (what was
//! done, to which file, at which offset) with [`crate::IoResultExt::at`]. A method that
//! does not find its file returns an error of kind [`std::io::ErrorKind::NotFound`]; one
//! whose target exists where it must not, [`std::io::ErrorKind::AlreadyExists`]; a lock held
//! elsewhere, [`std::io::ErrorKind::WouldBlock`].

use std::ffi::OsString;
use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

mod counting;
#[cfg(feature = "fault-injection")]
mod fault;
pub use counting::CountingFs;
#[cfg(feature = "fault-injection")]
pub use fault::{Fault, FaultFs, FaultRule, FsOp};

/// A file open for appending (a WAL segment, a table being written, a manifest).
///
/// Methods take `&self` so that one thread may sync while another appends (the WAL does).
pub trait WritableFile: Send + Sync + Debug {
    /// Appends all of `data` at the end of the file. On error some prefix of `data` may have
    /// been written (a short write).
    fn append(&self, data: &[u8]) -> io::Result<()>;
    /// Writes all of `data` at `offset`, over whatever the file holds there (it grows if it
    /// ends before `offset + data.len()`), without moving where [`WritableFile::append`]
    /// writes next. For a writer that keeps its own offset, such as a WAL segment written
    /// into space reserved ahead of its records. On error some prefix of `data` may have
    /// been written.
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()>;
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Makes the file's data and metadata durable (`fsync`).
    fn sync_all(&self) -> io::Result<()>;
    /// Asks the operating system to start writing `len` bytes from `offset` to the device,
    /// without waiting and without any promise of durability (a sync still decides that).
    /// A large file written without this reaches the device in one burst at its sync, and
    /// reads queue behind the burst. Default: nothing.
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
}

/// A file open for positional reads (a table, a WAL segment during replay).
pub trait RandomAccessFile: Send + Sync + Debug {
    /// Fills `buf` with the bytes at `offset`; an error of kind `UnexpectedEof` if the file
    /// ends first. Reads nothing else and allocates nothing.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// True when the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Tells the operating system that reads of this file come at random places, so that a
    /// read fetches only the pages it asks for (`posix_fadvise(POSIX_FADV_RANDOM)`, what
    /// RocksDB's `advise_random_on_open` does for its tables). Without it, Linux reads ahead
    /// up to 128 KiB around a miss whose neighbours are cached, which evicts useful pages and
    /// costs device reads nobody asked for. Sequential readers then read ahead themselves.
    /// Advice only: a file system without it is fine. Default: nothing.
    fn advise_random(&self) -> io::Result<()> {
        Ok(())
    }
}

/// A held lock on a file, released when dropped.
pub trait FileLock: Send + Sync + Debug {}

/// How [`FileSystem::create`] treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    /// The file must not exist (`O_CREAT | O_EXCL`): an `AlreadyExists` error if it does.
    New,
    /// An existing file is emptied first (`O_CREAT | O_TRUNC`).
    Truncate,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The file name (not the path).
    pub name: OsString,
    /// True for a regular file.
    pub is_file: bool,
}

/// What [`FileSystem::metadata`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata {
    /// Length in bytes (0 for a directory).
    pub len: u64,
    /// True for a directory.
    pub is_dir: bool,
}

/// Every file operation the engine performs. Implementations must be `Send + Sync`: the
/// engine calls them from its writer, flush and compaction threads at once.
pub trait FileSystem: Send + Sync + Debug {
    /// Creates `path` for appending, per `mode`.
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>>;
    /// Opens the existing file `path` for positional reads.
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>>;
    /// Cuts (or extends with zeros) the existing file `path` to `len` bytes and fsyncs it.
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;
    /// Renames `from` to `to`, replacing `to` if it exists. Durable once the directory is
    /// synced.
    ///
    /// `from` may also be a directory; then `to` must not exist, or be an empty directory.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file `path`. Durable once the directory is synced.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// The entries of directory `dir`, in no particular order.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>>;
    /// Creates directory `dir` and its missing parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Length and kind of `path`; a `NotFound` error if it does not exist.
    fn metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// Makes the creations, renames and removals of files in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Creates `path` if missing and takes an exclusive lock on it (a `WouldBlock` error
    /// if another holder has it), held until the returned guard drops.
    fn lock_file(&self, path: &Path) -> io::Result<Box<dyn FileLock>>;

    /// Makes `to` a second name of the existing file `from` (a hard link): no byte is
    /// copied, and removing either name leaves the other. `to` must not exist
    /// (`AlreadyExists`). Durable once `to`'s directory is synced. A file system that cannot
    /// link says so with an error of kind `Unsupported`, and Linux's `EXDEV` (the names are
    /// on different file systems) is kind `CrossesDevices`: callers that can copy instead
    /// check for both. Default: `Unsupported`.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "this file system does not make hard links ({} -> {})",
                from.display(),
                to.display()
            ),
        ))
    }

    /// Creates the directory `dir`, whose parent must exist (`NotFound` otherwise), and
    /// fails with `AlreadyExists` if anything is at `dir` already: unlike
    /// [`FileSystem::create_dir_all`], a caller that succeeds knows the directory is its own.
    /// Durable once the parent is synced. Default: [`FileSystem::create_dir_all`] after a
    /// check that `dir` does not exist (not atomic: override it).
    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        if self.exists(dir)? {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists", dir.display()),
            ));
        }
        self.create_dir_all(dir)
    }

    /// Removes the empty directory `dir` (an error if it holds anything). Durable once the
    /// parent is synced. Default: `Unsupported`.
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "this file system does not remove directories ({})",
                dir.display()
            ),
        ))
    }

    /// True when `path` exists.
    fn exists(&self, path: &Path) -> io::Result<bool> {
        match self.metadata(path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The whole content of `path`.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let f = self.open_read(path)?;
        let len = usize::try_from(f.len()?)
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "file too large"))?;
        let mut buf = vec![0u8; len];
        f.read_exact_at(&mut buf, 0)?;
        Ok(buf)
    }
}

/// A shared file system, as the engine holds it.
pub type FsRef = Arc<dyn FileSystem>;

/// The process-wide [`RealFs`], shared.
pub fn real() -> FsRef {
    static REAL: OnceLock<FsRef> = OnceLock::new();
    Arc::clone(REAL.get_or_init(|| Arc::new(RealFs)))
}

/// A [`WritableFile`] as an `std::io::Write` (every `write` is one [`WritableFile::append`]),
/// for wrapping in a `BufWriter`. With a writeback interval it also starts the device write
/// of every further `writeback_every` bytes as they are appended
/// ([`WritableFile::start_writeback`], RocksDB's `bytes_per_sync`).
#[derive(Debug)]
pub struct AppendWriter {
    file: Box<dyn WritableFile>,
    /// 0: never start writeback early.
    writeback_every: u64,
    written: u64,
    writeback_started: u64,
}

impl AppendWriter {
    /// Appends to `file`; `writeback_every` > 0 starts writeback every that many bytes.
    pub fn new(file: Box<dyn WritableFile>, writeback_every: u64) -> Self {
        AppendWriter {
            file,
            writeback_every,
            written: 0,
            writeback_started: 0,
        }
    }

    /// The file written to.
    pub fn file(&self) -> &dyn WritableFile {
        &*self.file
    }

    fn appended(&mut self, len: usize) -> io::Result<()> {
        self.written += len as u64;
        let pending = self.written - self.writeback_started;
        if self.writeback_every > 0 && pending >= self.writeback_every {
            self.file.start_writeback(self.writeback_started, pending)?;
            self.writeback_started = self.written;
        }
        Ok(())
    }
}

impl Write for AppendWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.append(buf)?;
        self.appended(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sequential reads of a [`RandomAccessFile`] from a position, as an `std::io::Read` (for
/// wrapping in a `BufReader`): each `read` is one positional read of at most what is left.
#[derive(Debug)]
pub struct ReadAtCursor {
    file: Box<dyn RandomAccessFile>,
    pos: u64,
    len: u64,
}

impl ReadAtCursor {
    /// Reads `file` (of `len` bytes) from `pos` on.
    pub fn new(file: Box<dyn RandomAccessFile>, pos: u64, len: u64) -> Self {
        ReadAtCursor { file, pos, len }
    }
}

impl io::Read for ReadAtCursor {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let n = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
        let Some(dst) = buf.get_mut(..n) else {
            return Ok(0);
        };
        if n == 0 {
            return Ok(0);
        }
        self.file.read_exact_at(dst, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The operating system's file system (`std::fs`), the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

/// A [`RealFs`] file open for writing. Appends go to the handle's offset, which only they
/// move, so they stay at the end of the file as long as this handle is its only writer.
#[derive(Debug)]
struct RealWritable(File);

impl WritableFile for RealWritable {
    #[inline]
    fn append(&self, data: &[u8]) -> io::Result<()> {
        (&self.0).write_all(data)
    }

    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(data, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    #[cfg(target_os = "linux")]
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (
            libc::off64_t::try_from(offset),
            libc::off64_t::try_from(len),
        ) else {
            return Ok(());
        };
        // SAFETY: sync_file_range only reads its integer arguments; the descriptor is owned
        // by `self.0` and open for the duration of the call.
        let rc = unsafe {
            libc::sync_file_range(self.0.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // A file system without it: the final sync writes everything, as before.
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => Ok(()),
            // EIO, ENOSPC...: the write failed.
            _ => Err(e),
        }
    }
}

/// A [`RealFs`] file open for reading (`pread`).
#[derive(Debug)]
struct RealRandomAccess(File);

impl RandomAccessFile for RealRandomAccess {
    #[inline]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    #[cfg(target_os = "linux")]
    fn advise_random(&self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is owned by
        // `self.0` and open for the duration of the call.
        let rc = unsafe { libc::posix_fadvise(self.0.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        match rc {
            0 => Ok(()),
            // Not a file system that takes advice (a pipe, some FUSE file systems): reads
            // work as before.
            libc::EINVAL | libc::ESPIPE | libc::ENOSYS | libc::EOPNOTSUPP => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// A [`RealFs`] lock: the open file holding the `flock`.
#[derive(Debug)]
struct RealLock(File);

impl FileLock for RealLock {}

impl Drop for RealLock {
    /// Unlocks before closing. Closing alone frees an `flock` only once every descriptor of
    /// the open file is closed, and a child process the program forks at that moment holds
    /// a copy until it execs: a close then a reopen in the same process could find the
    /// directory still locked (seen as a flaky `txn_two_phase` test beside a test that
    /// spawns a process).
    fn drop(&mut self) {
        // An error here leaves only the close to free the lock, as before.
        let _ = self.0.unlock();
    }
}

impl FileSystem for RealFs {
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>> {
        let mut o = OpenOptions::new();
        match mode {
            // Not `O_APPEND`: Linux's `pwrite` on an `O_APPEND` file writes at the end, not
            // at the offset, and `write_at` must work. A fresh file's offset is its end, and
            // only this handle's appends move it.
            CreateMode::New => o.write(true).create_new(true),
            CreateMode::Truncate => o.write(true).create(true).truncate(true),
        };
        Ok(Box::new(RealWritable(o.open(path)?)))
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(RealRandomAccess(File::open(path)?)))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let f = OpenOptions::new().write(true).open(path)?;
        f.set_len(len)?;
        f.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            out.push(DirEntry {
                is_file: entry.file_type()?.is_file(),
                name: entry.file_name(),
            });
        }
        Ok(out)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }

    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir(dir)
    }

    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::remove_dir(dir)
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        let m = std::fs::metadata(path)?;
        Ok(Metadata {
            len: m.len(),
            is_dir: m.is_dir(),
        })
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn lock_file(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(RealLock(file))),
            Err(std::fs::TryLockError::WouldBlock) => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "the lock is held by another open file",
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn real_fs_round_trip() {
        let fs = RealFs;
        let tmp = std::env::temp_dir().join(format!("riptide-fs-test-{}", std::process::id()));
        fs.create_dir_all(&tmp).unwrap();
        let p = tmp.join("a");
        let w = fs.create(&p, CreateMode::New).unwrap();
        w.append(b"hello ").unwrap();
        w.append(b"world").unwrap();
        w.sync_data().unwrap();
        // write_at overwrites in place and grows the file, and appends still go after what
        // they wrote last (the handle's offset), not to the grown end.
        w.write_at(b"W", 6).unwrap();
        w.write_at(b"!!", 11).unwrap();
        assert_eq!(fs.read_all(&p).unwrap(), b"hello World!!");
        w.append(b"?").unwrap();
        assert_eq!(fs.read_all(&p).unwrap(), b"hello World?!");
        fs.truncate(&p, 11).unwrap();
        assert_eq!(
            fs.create(&p, CreateMode::New).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        let r = fs.open_read(&p).unwrap();
        assert_eq!(r.len().unwrap(), 11);
        let mut buf = [0u8; 5];
        r.read_exact_at(&mut buf, 6).unwrap();
        assert_eq!(&buf, b"World");
        assert_eq!(
            r.read_exact_at(&mut buf, 8).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        fs.truncate(&p, 5).unwrap();
        assert_eq!(fs.read_all(&p).unwrap(), b"hello");
        let q = tmp.join("b");
        fs.rename(&p, &q).unwrap();
        fs.sync_dir(&tmp).unwrap();
        assert!(!fs.exists(&p).unwrap());
        assert_eq!(fs.metadata(&q).unwrap().len, 5);
        let names: Vec<_> = fs
            .list_dir(&tmp)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, vec![OsString::from("b")]);
        let lock = fs.lock_file(&tmp.join("LOCK")).unwrap();
        assert_eq!(
            fs.lock_file(&tmp.join("LOCK")).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        drop(lock);
        drop(fs.lock_file(&tmp.join("LOCK")).unwrap());
        let w = fs.create(&q, CreateMode::Truncate).unwrap();
        w.append(b"x").unwrap();
        assert_eq!(fs.read_all(&q).unwrap(), b"x");
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn real_fs_links_and_directories() {
        let fs = RealFs;
        let tmp = std::env::temp_dir().join(format!("riptide-fs-links-{}", std::process::id()));
        fs.create_dir_all(&tmp).unwrap();
        let a = tmp.join("a");
        fs.create(&a, CreateMode::New)
            .unwrap()
            .append(b"shared")
            .unwrap();
        let sub = tmp.join("sub");
        fs.create_dir(&sub).unwrap();
        assert_eq!(
            fs.create_dir(&sub).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        fs.hard_link(&a, &sub.join("b")).unwrap();
        assert_eq!(
            fs.hard_link(&a, &sub.join("b")).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        fs.remove_file(&a).unwrap();
        assert_eq!(fs.read_all(&sub.join("b")).unwrap(), b"shared");
        let moved = tmp.join("moved");
        fs.rename(&sub, &moved).unwrap();
        assert_eq!(fs.read_all(&moved.join("b")).unwrap(), b"shared");
        assert!(fs.remove_dir(&moved).is_err(), "not empty");
        fs.remove_file(&moved.join("b")).unwrap();
        fs.remove_dir(&moved).unwrap();
        assert!(!fs.exists(&moved).unwrap());
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    /// Records appends and writeback requests.
    #[derive(Debug, Default)]
    struct Recorder {
        appended: std::sync::Mutex<u64>,
        writebacks: std::sync::Mutex<Vec<(u64, u64)>>,
    }

    impl WritableFile for Arc<Recorder> {
        fn append(&self, data: &[u8]) -> io::Result<()> {
            *self.appended.lock().unwrap() += data.len() as u64;
            Ok(())
        }
        fn write_at(&self, _data: &[u8], _offset: u64) -> io::Result<()> {
            unreachable!("the writeback test only appends")
        }
        fn sync_data(&self) -> io::Result<()> {
            Ok(())
        }
        fn sync_all(&self) -> io::Result<()> {
            Ok(())
        }
        fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
            self.writebacks.lock().unwrap().push((offset, len));
            Ok(())
        }
    }

    #[test]
    fn an_append_writer_starts_writeback_of_each_full_interval_in_order() {
        let rec = Arc::new(Recorder::default());
        let mut w = AppendWriter::new(Box::new(Arc::clone(&rec)), 100);
        for _ in 0..7 {
            w.write_all(&[0u8; 40]).unwrap();
        }
        // 280 bytes: writeback after 120 (0..120) and 240 (120..240); 40 pending.
        assert_eq!(*rec.writebacks.lock().unwrap(), vec![(0, 120), (120, 120)]);
        assert_eq!(*rec.appended.lock().unwrap(), 280);
        let mut never = AppendWriter::new(Box::new(Arc::clone(&rec)), 0);
        never.write_all(&[0u8; 1000]).unwrap();
        assert_eq!(rec.writebacks.lock().unwrap().len(), 2);
    }

    #[test]
    fn the_real_file_system_starts_writeback_of_a_written_range() {
        let tmp = std::env::temp_dir().join(format!("riptide-writeback-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let path = tmp.join("f");
        let f = RealFs.create(&path, CreateMode::New).unwrap();
        f.append(&[7u8; 8192]).unwrap();
        f.start_writeback(0, 8192).unwrap();
        f.sync_all().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 8192]);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
