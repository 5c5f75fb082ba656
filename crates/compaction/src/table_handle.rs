//! [`TableHandle`]: an open table file shared by versions and iterators, deleted from disk
//! once it is obsolete and no longer used.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use riptide_common::fs::{FileSystem, FsRef};
use riptide_common::{Error, InternalIterator, Result};
use riptide_sstable::{BlockCache, CacheId, Table, TableCache, TableIterator, TableReadOptions};

use crate::file_meta::{FileMeta, table_file_path};

/// Where a handle's open table comes from.
enum Source {
    /// Kept open for the handle's whole life.
    Pinned(Arc<Table>),
    /// Opened on demand through a [`TableCache`], which bounds how many files are open.
    /// `opened` is the table the cache opened for this handle: while the cache (or anyone)
    /// still holds it, [`TableHandle::table`] takes it from here, an atomic increment instead
    /// of the cache's shard lock, hash lookup and LRU update (about 1% of the server's CPU in
    /// TPC-C, where each point read asks for every table it probes). Once the table is gone
    /// (evicted beyond `max_open_files`, no reader left) the handle asks the cache again,
    /// which reopens it; reads through this path do not refresh the cache's LRU order, so
    /// with more files than `max_open_files` the cache evicts by opening order and such a
    /// handle stays on the cache's path.
    Cached {
        cache: Arc<TableCache>,
        opened: Weak<Table>,
    },
}

/// A live table file: its manifest record and a way to its open table.
///
/// Versions and iterators hold `Arc<TableHandle>`s. When a version edit removes the file, the
/// version set marks the handle obsolete; the file is deleted when the last `Arc` drops, so a
/// reader still using an old version never loses its file.
pub struct TableHandle {
    /// What the manifest records about the file.
    pub meta: FileMeta,
    /// The file system the file lives on (it is deleted there).
    fs: FsRef,
    source: Source,
    has_range_tombstones: bool,
    path: PathBuf,
    obsolete: AtomicBool,
}

impl std::fmt::Debug for TableHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableHandle")
            .field("number", &self.meta.number)
            .field("path", &self.path)
            .field("obsolete", &self.is_obsolete())
            .finish()
    }
}

impl TableHandle {
    /// Wraps an open table described by `meta` whose file is `path` on `fs`; it stays open
    /// as long as the handle lives.
    pub fn new(fs: FsRef, meta: FileMeta, table: Arc<Table>, path: PathBuf) -> Self {
        TableHandle {
            meta,
            fs,
            has_range_tombstones: table.has_range_tombstones(),
            source: Source::Pinned(table),
            path,
            obsolete: AtomicBool::new(false),
        }
    }

    /// Opens table `number` in `dir` that a writer just finished with `props`, as a handle
    /// marked obsolete: its file is deleted when the handle drops, unless
    /// [`Self::unmark_obsolete`] keeps it (once a version edit names it). If it cannot be
    /// opened, the file is removed and the error returned.
    pub fn open_new(
        fs: FsRef,
        dir: &Path,
        number: u64,
        props: riptide_sstable::TableProperties,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Self> {
        let meta = FileMeta {
            number,
            file_size: props.file_size,
            smallest: props.smallest_key,
            largest: props.largest_key,
            min_seqno: props.min_seqno,
            max_seqno: props.max_seqno,
            entries: props.entries,
            tombstones: props.tombstones,
        };
        let path = table_file_path(dir, number);
        let opened = Table::open_in(
            &*fs,
            &path,
            cache,
            &TableReadOptions::default(),
            CacheId::unique(),
        );
        let handle = match opened {
            Ok(t) => TableHandle::new(fs, meta, t, path),
            Err(e) => {
                crate::fsutil::remove_quietly(&*fs, &path);
                return Err(e);
            }
        };
        handle.mark_obsolete();
        Ok(handle)
    }

    /// Opens table `meta.number` in `dir`, kept open for the handle's life. A missing file, or
    /// one whose size differs from `meta.file_size`, is `Corruption`; so is a damaged table.
    /// Errors name the file.
    pub fn open(dir: &Path, meta: FileMeta, cache: Option<Arc<BlockCache>>) -> Result<Self> {
        Self::open_in(riptide_common::fs::real(), dir, meta, cache)
    }

    /// [`Self::open`] on the file system `fs`.
    pub fn open_in(
        fs: FsRef,
        dir: &Path,
        meta: FileMeta,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Self> {
        let path = Self::checked_path(&*fs, dir, &meta)?;
        let table = Table::open_in(
            &*fs,
            &path,
            cache,
            &TableReadOptions::default(),
            CacheId::unique(),
        )?;
        Ok(Self::new(fs, meta, table, path))
    }

    /// Like [`Self::open`], but the table is opened through `tables`, which keeps at most its
    /// `max_open_files` tables open and reopens evicted ones on demand ([`Self::table`]).
    /// The file is opened (and checked) once here, on the table cache's file system.
    pub fn open_cached(dir: &Path, meta: FileMeta, tables: &Arc<TableCache>) -> Result<Self> {
        let fs = Arc::clone(tables.file_system());
        let path = Self::checked_path(&*fs, dir, &meta)?;
        let table = tables.get_or_open(meta.number, &path)?;
        Ok(TableHandle {
            meta,
            fs,
            has_range_tombstones: table.has_range_tombstones(),
            source: Source::Cached {
                cache: Arc::clone(tables),
                opened: Arc::downgrade(&table),
            },
            path,
            obsolete: AtomicBool::new(false),
        })
    }

    /// True when the source is a table cache.
    pub fn is_cached(&self) -> bool {
        matches!(self.source, Source::Cached { .. })
    }

    /// The open table: the pinned one, or the table cache's (opening the file again if the
    /// cache had evicted it; errors name the file).
    pub fn table(&self) -> Result<Arc<Table>> {
        match &self.source {
            Source::Pinned(t) => Ok(Arc::clone(t)),
            Source::Cached { cache, opened } => match opened.upgrade() {
                Some(t) => Ok(t),
                None => cache.get_or_open(self.meta.number, &self.path),
            },
        }
    }

    /// True when the table holds range tombstones (known without opening it).
    pub fn has_range_tombstones(&self) -> bool {
        self.has_range_tombstones
    }

    /// The path of table `meta.number` in `dir`, after checking the file exists with the
    /// size the manifest records.
    fn checked_path(fs: &dyn FileSystem, dir: &Path, meta: &FileMeta) -> Result<PathBuf> {
        let path = table_file_path(dir, meta.number);
        match fs.metadata(&path) {
            Ok(m) if m.len != meta.file_size => {
                return Err(Error::corruption(format!(
                    "table {} is {} bytes but the manifest records {}",
                    path.display(),
                    m.len,
                    meta.file_size
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::corruption(format!(
                    "table {} named by the manifest is missing",
                    path.display()
                )));
            }
            Err(e) => return Err(Error::io_at("stat table", &path, e)),
        }
        Ok(path)
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.meta.number
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Marks the file for deletion when the last reference drops.
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::Release);
    }

    /// Withdraws [`Self::mark_obsolete`] (used when a new file's output is kept after all).
    pub fn unmark_obsolete(&self) {
        self.obsolete.store(false, Ordering::Release);
    }

    /// True once [`Self::mark_obsolete`] was called.
    pub fn is_obsolete(&self) -> bool {
        self.obsolete.load(Ordering::Acquire)
    }

    /// An iterator over the table that keeps this handle (and so the file) alive. If the
    /// table cannot be opened (a cached table whose file went bad), the error comes from the
    /// iterator's first positioning call.
    pub fn iter(self: &Arc<Self>) -> HandleIterator {
        HandleIterator {
            inner: self.table().map(|t| t.iter()),
            _handle: Arc::clone(self),
        }
    }

    /// [`Self::iter`] for one forward pass by compaction: blocks missing from the block cache
    /// are read `readahead` bytes at a time and not cached (see `Table::scan_iter`).
    pub fn scan_iter(self: &Arc<Self>, readahead: usize) -> HandleIterator {
        HandleIterator {
            inner: self.table().map(|t| t.scan_iter(readahead)),
            _handle: Arc::clone(self),
        }
    }
}

impl Drop for TableHandle {
    fn drop(&mut self) {
        if !self.is_obsolete() {
            return;
        }
        if let Source::Cached { cache, .. } = &self.source {
            cache.evict(self.meta.number);
        }
        match self.fs.remove_file(&self.path) {
            Ok(()) => log::debug!("deleted obsolete table {}", self.path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => log::error!(
                "could not delete obsolete table {}: {e}",
                self.path.display()
            ),
        }
    }
}

/// A [`TableIterator`] that holds its [`TableHandle`], so the file outlives the iterator.
pub struct HandleIterator {
    /// The table's iterator, or why the table could not be opened.
    inner: Result<TableIterator>,
    _handle: Arc<TableHandle>,
}

impl std::fmt::Debug for HandleIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandleIterator")
            .field("table", &self._handle.meta.number)
            .finish()
    }
}

impl HandleIterator {
    /// The table iterator, or the error that kept the table from opening.
    fn inner(&mut self) -> Result<&mut TableIterator> {
        self.inner.as_mut().map_err(|e| e.clone())
    }
}

impl InternalIterator for HandleIterator {
    fn valid(&self) -> bool {
        self.inner.as_ref().is_ok_and(|i| i.valid())
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.inner()?.seek_to_first()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.inner()?.seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.inner()?.seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.inner()?.seek_for_prev(target)
    }
    fn next(&mut self) -> Result<()> {
        self.inner()?.next()
    }
    fn prev(&mut self) -> Result<()> {
        self.inner()?.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.as_ref().map_or(&[], |i| i.key())
    }
    fn value(&self) -> &[u8] {
        self.inner.as_ref().map_or(&[], |i| i.value())
    }
    fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        if let Ok(i) = self.inner.as_mut() {
            i.set_readahead_limit(limit);
        }
    }
}
