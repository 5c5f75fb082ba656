//! [`OutputTables`]: writes a sorted stream of entries into one or more new table files.

use std::path::Path;
use std::sync::Arc;

use riptide_common::Result;
use riptide_common::key::user_key;
use riptide_sstable::{BlockCache, TableOptions, TableWriter};

use crate::file_meta::{FileMeta, table_file_path};
use crate::fsutil::sync_dir;
use crate::table_handle::TableHandle;

/// Writes entries in order to new tables, starting a new file (when asked to split) only
/// between two user keys. If it is dropped or fails before [`OutputTables::finish`], every
/// file it made is removed.
pub(crate) struct OutputTables<'a, F: FnMut() -> u64> {
    dir: &'a Path,
    opts: &'a TableOptions,
    cache: Option<Arc<BlockCache>>,
    alloc_number: F,
    /// Split once a file's estimated size reaches this.
    target_file_size: u64,
    current: Option<(u64, TableWriter)>,
    last_user_key: Vec<u8>,
    done: Vec<Arc<TableHandle>>,
    bytes_written: u64,
}

impl<'a, F: FnMut() -> u64> OutputTables<'a, F> {
    /// An empty output; files are created on the first entry.
    pub(crate) fn new(
        dir: &'a Path,
        opts: &'a TableOptions,
        cache: Option<Arc<BlockCache>>,
        alloc_number: F,
        target_file_size: u64,
    ) -> Self {
        OutputTables {
            dir,
            opts,
            cache,
            alloc_number,
            target_file_size,
            current: None,
            last_user_key: Vec::new(),
            done: Vec::new(),
            bytes_written: 0,
        }
    }

    /// Adds the next entry.
    pub(crate) fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let uk = user_key(ikey);
        if let Some((_, w)) = &self.current
            && w.estimated_file_size() >= self.target_file_size
            && uk != self.last_user_key.as_slice()
        {
            self.finish_current()?;
        }
        let w = match &mut self.current {
            Some((_, w)) => w,
            None => {
                let number = (self.alloc_number)();
                let w = TableWriter::create(&table_file_path(self.dir, number), self.opts.clone())?;
                &mut self.current.insert((number, w)).1
            }
        };
        w.add(ikey, value)?;
        self.last_user_key.clear();
        self.last_user_key.extend_from_slice(uk);
        Ok(())
    }

    /// Finishes the open file, if any, and opens it as a table.
    fn finish_current(&mut self) -> Result<()> {
        let Some((number, w)) = self.current.take() else {
            return Ok(());
        };
        let props = w.finish()?;
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
        self.bytes_written += meta.file_size;
        let path = table_file_path(self.dir, number);
        // Until `finish` succeeds the file is ours to delete on failure.
        let handle = match riptide_sstable::Table::open(&path, self.cache.clone()) {
            Ok(t) => TableHandle::new(meta, t, path),
            Err(e) => {
                crate::fsutil::remove_quietly(&path);
                return Err(e);
            }
        };
        handle.mark_obsolete();
        self.done.push(Arc::new(handle));
        Ok(())
    }

    /// Finishes the last file, fsyncs the directory and returns the new tables (in key order)
    /// and the bytes written.
    pub(crate) fn finish(mut self) -> Result<(Vec<Arc<TableHandle>>, u64)> {
        self.finish_current()?;
        if !self.done.is_empty() {
            sync_dir(self.dir)?;
        }
        let done = std::mem::take(&mut self.done);
        for h in &done {
            h.unmark_obsolete();
        }
        Ok((done, self.bytes_written))
    }
}

impl<F: FnMut() -> u64> Drop for OutputTables<'_, F> {
    fn drop(&mut self) {
        if let Some((_, w)) = self.current.take()
            && let Err(e) = w.abandon()
        {
            log::warn!("could not remove unfinished table: {e}");
        }
        // `done` handles are still marked obsolete: dropping them removes their files.
    }
}
