//! [`TableHandle`]: an open table file shared by versions and iterators, deleted from disk
//! once it is obsolete and no longer used.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use riptide_common::{Error, InternalIterator, Result};
use riptide_sstable::{BlockCache, Table, TableIterator};

use crate::file_meta::{FileMeta, table_file_path};

/// A live table file: its manifest record and the open table.
///
/// Versions and iterators hold `Arc<TableHandle>`s. When a version edit removes the file, the
/// version set marks the handle obsolete; the file is deleted when the last `Arc` drops, so a
/// reader still using an old version never loses its file.
pub struct TableHandle {
    /// What the manifest records about the file.
    pub meta: FileMeta,
    /// The open table.
    pub table: Arc<Table>,
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
    /// Wraps an open table described by `meta` whose file is `path`.
    pub fn new(meta: FileMeta, table: Arc<Table>, path: PathBuf) -> Self {
        TableHandle {
            meta,
            table,
            path,
            obsolete: AtomicBool::new(false),
        }
    }

    /// Opens table `meta.number` in `dir`. A missing file, or one whose size differs from
    /// `meta.file_size`, is `Corruption`; so is a damaged table. Errors name the file.
    pub fn open(dir: &Path, meta: FileMeta, cache: Option<Arc<BlockCache>>) -> Result<Self> {
        let path = table_file_path(dir, meta.number);
        match std::fs::metadata(&path) {
            Ok(m) if m.len() != meta.file_size => {
                return Err(Error::corruption(format!(
                    "table {} is {} bytes but the manifest records {}",
                    path.display(),
                    m.len(),
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
        let table = Table::open(&path, cache)?;
        Ok(Self::new(meta, table, path))
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
    pub(crate) fn unmark_obsolete(&self) {
        self.obsolete.store(false, Ordering::Release);
    }

    /// True once [`Self::mark_obsolete`] was called.
    pub fn is_obsolete(&self) -> bool {
        self.obsolete.load(Ordering::Acquire)
    }

    /// An iterator over the table that keeps this handle (and so the file) alive.
    pub fn iter(self: &Arc<Self>) -> HandleIterator {
        HandleIterator {
            inner: self.table.iter(),
            _handle: Arc::clone(self),
        }
    }
}

impl Drop for TableHandle {
    fn drop(&mut self) {
        if !self.is_obsolete() {
            return;
        }
        match std::fs::remove_file(&self.path) {
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
    inner: TableIterator,
    _handle: Arc<TableHandle>,
}

impl std::fmt::Debug for HandleIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandleIterator")
            .field("table", &self._handle.meta.number)
            .finish()
    }
}

impl InternalIterator for HandleIterator {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.inner.seek_to_first()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.inner.seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.inner.seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.inner.seek_for_prev(target)
    }
    fn next(&mut self) -> Result<()> {
        self.inner.next()
    }
    fn prev(&mut self) -> Result<()> {
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
}
