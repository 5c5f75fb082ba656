//! [`OutputTables`]: writes a sorted stream of entries into one or more new table files.
//!
//! Range tombstones are given up front. The output files partition the key range `[lower,
//! upper)` of the flush or (sub)compaction: file `i` owns `[first key of file i, first key of
//! file i+1)` (the first file from `lower`, the last up to `upper`), and receives the pieces of
//! the tombstones inside it. A tombstone spanning several files is split at their boundaries,
//! so no two files of a level overlap, and every covered key sits in the file holding the
//! tombstone piece covering it. If no point entry is written at all, the tombstones still get
//! a file.
//!
//! Key ranges kept out ([`KeptRange`]: output-level files a compaction leaves in place) are
//! gaps in that partition: a file ends at a kept range's smallest key and the next one owns
//! keys from just above its largest, so no output file reaches into one.

use std::path::Path;
use std::sync::Arc;

use riptide_common::fs::FsRef;
use riptide_common::key::user_key;
use riptide_common::range_del::RangeTombstone;
use riptide_common::{Error, ErrorKind, Result};
use riptide_sstable::{BlockCache, TableOptions, TableWriter};

use crate::file_meta::table_file_path;
use crate::fsutil::sync_dir;
use crate::table_handle::TableHandle;
use crate::untouched::KeptRange;

/// Writes entries in order to new tables, starting a new file (when asked to split) only
/// between two user keys. If it is dropped or fails before [`OutputTables::finish`], every
/// file it made is removed.
pub(crate) struct OutputTables<'a, F: FnMut() -> u64> {
    fs: FsRef,
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
    /// Tombstones not yet handed to a file, sorted by start key, reversed (next on top).
    pending_tombstones: Vec<RangeTombstone>,
    /// Tombstones started before the current file's upper bound that may reach past it.
    active_tombstones: Vec<RangeTombstone>,
    /// Lower bound of the current (or next) file's key range.
    file_lower: Option<Vec<u8>>,
    /// Upper bound of the whole output.
    upper: Option<Vec<u8>>,
    /// Key ranges no file may reach into, ascending; the ones before `next_kept` are passed.
    kept: Vec<KeptRange>,
    next_kept: usize,
}

impl<'a, F: FnMut() -> u64> OutputTables<'a, F> {
    /// An empty output for every user key; files are created on the first entry. See
    /// [`with_range_tombstones`](Self::with_range_tombstones).
    pub(crate) fn new(
        fs: FsRef,
        dir: &'a Path,
        opts: &'a TableOptions,
        cache: Option<Arc<BlockCache>>,
        alloc_number: F,
        target_file_size: u64,
    ) -> Self {
        OutputTables {
            pending_tombstones: Vec::new(),
            active_tombstones: Vec::new(),
            file_lower: None,
            upper: None,
            fs,
            dir,
            opts,
            cache,
            alloc_number,
            target_file_size,
            current: None,
            last_user_key: Vec::new(),
            done: Vec::new(),
            bytes_written: 0,
            kept: Vec::new(),
            next_kept: 0,
        }
    }

    /// Adds the next entry.
    pub(crate) fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let uk = user_key(ikey);
        self.pass_kept_ranges_below(Some(uk))?;
        if let Some((_, w)) = &self.current
            && w.estimated_file_size() >= self.target_file_size
            && uk != self.last_user_key.as_slice()
        {
            self.finish_current(Some(uk))?;
            self.file_lower = Some(uk.to_vec());
        }
        self.writer()?.add(ikey, value)?;
        self.last_user_key.clear();
        self.last_user_key.extend_from_slice(uk);
        Ok(())
    }

    /// Restricts the output to the user keys `[lower, upper)` (`None`: open) and gives it the
    /// range tombstones (any order, may overlap) to write: clipped to `[lower, upper)`, each
    /// piece goes to the file owning it; with no point entry at all they still get a file
    /// at [`finish`](Self::finish). Call before the first [`add`](Self::add).
    pub(crate) fn with_range_tombstones(
        mut self,
        tombstones: &[RangeTombstone],
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        let mut pending: Vec<RangeTombstone> = tombstones
            .iter()
            .filter_map(|t| t.clip(lower.as_deref(), upper.as_deref()))
            .collect();
        pending.sort_by(|a, b| b.start.cmp(&a.start));
        self.pending_tombstones = pending;
        self.file_lower = lower;
        self.upper = upper;
        self
    }

    /// Keeps the output out of `kept` (ascending, disjoint): see the module documentation.
    /// Call after [`with_range_tombstones`](Self::with_range_tombstones), before the first
    /// [`add`](Self::add). Ranges outside the output's `[lower, upper)` are ignored.
    pub(crate) fn keeping_out(mut self, kept: &[KeptRange]) -> Self {
        let (lower, upper) = (self.file_lower.as_deref(), self.upper.as_deref());
        self.kept = kept
            .iter()
            .filter(|r| {
                lower.is_none_or(|l| r.ends_after(l))
                    && upper.is_none_or(|u| r.smallest.as_slice() < u)
            })
            .cloned()
            .collect();
        self.next_kept = 0;
        self
    }

    /// Ends the open file before each kept range below `user_key` (every one left for
    /// `None`, at the end), so that no file spans one. A key inside a kept range is an error:
    /// the compaction set aside a file it should have merged.
    fn pass_kept_ranges_below(&mut self, user_key: Option<&[u8]>) -> Result<()> {
        while let Some(range) = self.kept.get(self.next_kept)
            && user_key.is_none_or(|k| range.smallest.as_slice() <= k)
        {
            if let Some(k) = user_key
                && range.contains(k)
            {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!(
                        "compaction output key {k:02x?} falls in the range of a table kept in \
                         place, [{:02x?}, {:02x?}{} (a bug; please report it)",
                        range.smallest,
                        range.largest,
                        if range.largest_is_exclusive { ")" } else { "]" }
                    ),
                ));
            }
            let (smallest, end) = (range.smallest.clone(), range.end());
            self.next_kept += 1;
            if self.current.is_none() && self.has_tombstone_pieces_below(Some(&smallest)) {
                // Tombstones only, before the kept range: they get a file of their own.
                self.writer()?;
            }
            self.finish_current(Some(&smallest))?;
            self.file_lower = Some(end);
        }
        Ok(())
    }

    /// True when some tombstone not yet written has a piece in `[file_lower, upper)`.
    fn has_tombstone_pieces_below(&self, upper: Option<&[u8]>) -> bool {
        let lower = self.file_lower.as_deref();
        self.pending_tombstones
            .iter()
            .chain(&self.active_tombstones)
            .any(|t| t.clip(lower, upper).is_some())
    }

    /// The open file's writer, creating the file if none is open.
    fn writer(&mut self) -> Result<&mut TableWriter> {
        if self.current.is_none() {
            let number = (self.alloc_number)();
            let w = TableWriter::create_in(
                self.fs.clone(),
                &table_file_path(self.dir, number),
                self.opts.clone(),
            )?;
            self.current = Some((number, w));
        }
        match &mut self.current {
            Some((_, w)) => Ok(w),
            None => Err(riptide_common::Error::new(
                riptide_common::ErrorKind::Internal,
                "output table vanished while opening it (a bug; please report it)",
            )),
        }
    }

    /// The pieces of the remaining tombstones inside `[file_lower, file_upper)`; tombstones
    /// reaching past `file_upper` stay for the next file.
    fn take_tombstones(&mut self, file_upper: Option<&[u8]>) -> Vec<RangeTombstone> {
        while let Some(t) = self.pending_tombstones.last()
            && file_upper.is_none_or(|u| t.start.as_slice() < u)
        {
            if let Some(t) = self.pending_tombstones.pop() {
                self.active_tombstones.push(t);
            }
        }
        let lower = self.file_lower.as_deref();
        let pieces = self
            .active_tombstones
            .iter()
            .filter_map(|t| t.clip(lower, file_upper))
            .collect();
        match file_upper {
            Some(u) => self.active_tombstones.retain(|t| t.end.as_slice() > u),
            None => self.active_tombstones.clear(),
        }
        pieces
    }

    /// Finishes the open file, if any, with the tombstone pieces below `file_upper` (the
    /// next file's first user key, or the output's upper bound), and opens it as a table.
    fn finish_current(&mut self, file_upper: Option<&[u8]>) -> Result<()> {
        if self.current.is_none() {
            return Ok(());
        }
        let pieces = self.take_tombstones(file_upper);
        let Some((number, mut w)) = self.current.take() else {
            return Ok(());
        };
        for t in &pieces {
            if let Err(e) = w.add_range_tombstone(&t.start, &t.end, t.seqno) {
                if let Err(a) = w.abandon() {
                    log::warn!("could not remove unfinished table: {a}");
                }
                return Err(e);
            }
        }
        let props = w.finish()?;
        self.bytes_written += props.file_size;
        // Until `finish` succeeds the file is ours to delete on failure.
        let handle =
            TableHandle::open_new(self.fs.clone(), self.dir, number, props, self.cache.clone())?;
        self.done.push(Arc::new(handle));
        Ok(())
    }

    /// Finishes the last file, fsyncs the directory and returns the new tables (in key order)
    /// and the bytes written.
    pub(crate) fn finish(mut self) -> Result<(Vec<Arc<TableHandle>>, u64)> {
        self.pass_kept_ranges_below(None)?;
        let upper = self.upper.take();
        if self.current.is_none() && self.has_tombstone_pieces_below(upper.as_deref()) {
            // Tombstones only (since the last file): they get a file of their own.
            self.writer()?;
        }
        self.finish_current(upper.as_deref())?;
        if !self.done.is_empty() {
            sync_dir(&*self.fs, self.dir)?;
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
