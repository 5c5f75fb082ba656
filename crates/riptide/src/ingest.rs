//! Ingesting sorted new keys as table files ([`crate::Db::ingest_writer`]): the path of
//! loads that would otherwise go through the WAL, the memtable and every level's
//! compaction (an in-place index build, a bulk load), like RocksDB's
//! `IngestExternalFile` and MyRocks' bulk load.
//!
//! The writer reserves one sequence number when it is created, [`SEQNO_GAP`] above the
//! last one published, and writes every entry as a put at that number, into table files
//! of the target file size. Writes meanwhile keep numbering below it, and snapshots taken
//! meanwhile are below it too, so none of them ever sees the ingest, before or after it
//! finishes (unless another ingest finishes first and publishes its own, later number:
//! snapshots taken after that see this one's keys once it installs). [`IngestWriter::finish`] then, under the version-set lock (so no compaction
//! is picked in between):
//!
//! 1. refuses the ingest if any memtable or table of the column family holds a key of the
//!    ingested range `[first, last]`: the new keys must not hide older versions of
//!    themselves, nor sit below newer ones. Tables are checked by one seek each, only those
//!    whose range overlaps; memtables by a seek and a walk over the range;
//! 2. chooses the deepest level whose files do not overlap the range and that no running
//!    compaction writes in that range; L0 if there is none. Levels above and below may
//!    hold files whose ranges span the new one, but (by 1) no key inside it;
//! 3. adds the files to that level and raises the manifest's last sequence number to the
//!    ingest's, in one version edit, then publishes that number (under the write lock, so
//!    the next write numbers above it). A crash before the edit leaves files no manifest
//!    names, which the next open deletes; after it, the keys are durable without any WAL
//!    record.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use riptide_common::key::{MAX_SEQNO, encode_internal_key, parse_internal_key, seek_key};
use riptide_common::{Error, InternalIterator, Result, SeqNo, ValueKind};
use riptide_compaction::{TableHandle, VersionEdit, table_file_path};
use riptide_sstable::{TableOptions, TableWriter};

use crate::background::refresh_pending_compaction_bytes;
use crate::cf::{CfData, ColumnFamily};
use crate::db::DbInner;
use crate::stats::Counters;

/// How far above the last published sequence number an ingest reserves its own: the
/// writes the database may take while one ingest is open before snapshots can see it
/// early (2^34, 4.7 hours at a million writes a second). Each ingest uses this much of the
/// 2^56 sequence numbers, enough for millions of ingests.
pub const SEQNO_GAP: SeqNo = 1 << 34;

/// What an ingest added: see [`IngestWriter::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// The deepest level a range's files went to (0 only when, for every range, every
    /// deeper level overlaps it).
    pub level: usize,
    /// Table files added.
    pub files: u64,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Entries written.
    pub entries: u64,
    /// The sequence number every entry carries.
    pub seqno: SeqNo,
}

/// One range of an ingest: its first and last keys and how many of the ingest's files
/// (consecutive, after those of the ranges before it) hold it.
#[derive(Debug, Clone)]
struct KeyRange {
    first: Vec<u8>,
    last: Vec<u8>,
    files: usize,
}

/// Writes strictly ascending new keys of one column family as table files, then adds them
/// to the deepest level they fit: see the module documentation. Dropping it without
/// [`IngestWriter::finish`] (or a failed finish) removes every file it wrote.
pub struct IngestWriter {
    db: Arc<DbInner>,
    cf: Arc<CfData>,
    cf_name: String,
    seqno: SeqNo,
    dir: PathBuf,
    table_opts: TableOptions,
    target_file_size: u64,
    current: Option<(u64, TableWriter)>,
    /// Finished files, marked obsolete (deleted on drop) until the ingest installs them.
    done: Vec<Arc<TableHandle>>,
    /// The closed ranges ([`IngestWriter::new_range`]), in key order.
    ranges: Vec<KeyRange>,
    /// The first key of the open range, if it has one.
    range_first: Option<Vec<u8>>,
    /// The last key added (of any range).
    last_key: Vec<u8>,
    ikey: Vec<u8>,
    entries: u64,
}

impl std::fmt::Debug for IngestWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IngestWriter")
            .field("cf", &self.cf_name)
            .field("seqno", &self.seqno)
            .field("files", &self.done.len())
            .field("entries", &self.entries)
            .finish_non_exhaustive()
    }
}

impl IngestWriter {
    /// A writer for `cf` (see [`crate::Db::ingest_writer`]).
    pub(crate) fn new(db: &Arc<DbInner>, cf: &ColumnFamily) -> Result<IngestWriter> {
        crate::db::check_live(cf)?;
        db.check_writable()?;
        let seqno = db.last_seqno.load(Ordering::Acquire) + SEQNO_GAP;
        if seqno > MAX_SEQNO {
            return Err(Error::invalid_argument(format!(
                "ingest: sequence numbers are exhausted (last {})",
                seqno - SEQNO_GAP
            )));
        }
        Ok(IngestWriter {
            db: Arc::clone(db),
            cf: Arc::clone(&cf.data),
            cf_name: cf.name().to_string(),
            seqno,
            dir: db.path.clone(),
            table_opts: db.options().table_options(),
            target_file_size: db.options().target_file_size,
            current: None,
            done: Vec::new(),
            ranges: Vec::new(),
            range_first: None,
            last_key: Vec::new(),
            ikey: Vec::new(),
            entries: 0,
        })
    }

    /// Adds `key` with `value`. Keys must be strictly ascending (`InvalidArgument`
    /// otherwise, naming both keys); a new file starts once one reaches the target file
    /// size.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if self.entries > 0 && key <= self.last_key.as_slice() {
            return Err(Error::invalid_argument(format!(
                "ingest into column family {:?}: key {:02x?} does not follow {:02x?} \
                 (keys must be strictly ascending)",
                self.cf_name, key, self.last_key
            )));
        }
        crate::db::check_entry_size(key, value)?;
        if let Some((_, w)) = &self.current
            && w.estimated_file_size() >= self.target_file_size
        {
            self.finish_file()?;
        }
        if self.current.is_none() {
            let number = self.db.versions.lock().new_file_number();
            let writer = TableWriter::create_in(
                self.db.options().file_system.clone(),
                &table_file_path(&self.dir, number),
                self.table_opts.clone(),
            )?;
            self.current = Some((number, writer));
        }
        self.ikey.clear();
        encode_internal_key(&mut self.ikey, key, self.seqno, ValueKind::Put);
        if let Some((_, w)) = &mut self.current {
            w.add(&self.ikey, value)?;
        }
        if self.range_first.is_none() {
            self.range_first = Some(key.to_vec());
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
        Ok(())
    }

    /// Closes the range of keys added since the last call (or since the writer began): the
    /// keys added next start a new range with files of its own. Each range is checked and
    /// placed on its own (see [`IngestWriter::finish`]), so an ingest of several separate
    /// stretches of keys (the indexes of one table, say) is not refused, nor kept out of
    /// the deepest level, by other keys that lie between them. Without a key since the
    /// last call it does nothing.
    pub fn new_range(&mut self) -> Result<()> {
        let Some(first) = self.range_first.take() else {
            return Ok(());
        };
        self.finish_file()?;
        let before: usize = self.ranges.iter().map(|r| r.files).sum();
        self.ranges.push(KeyRange {
            first,
            last: self.last_key.clone(),
            files: self.done.len() - before,
        });
        Ok(())
    }

    /// Finishes the open file and opens it as a table (still marked obsolete).
    fn finish_file(&mut self) -> Result<()> {
        let Some((number, w)) = self.current.take() else {
            return Ok(());
        };
        let props = w.finish()?;
        let handle = TableHandle::open_new(
            self.db.options().file_system.clone(),
            &self.dir,
            number,
            props,
            Some(Arc::clone(&self.db.cache)),
        )?;
        self.done.push(Arc::new(handle));
        Ok(())
    }

    /// Finishes the files and adds them to the column family (see the module
    /// documentation), each range ([`IngestWriter::new_range`]) checked and placed on its
    /// own. `Busy` if a range holds a key already (nothing is added, the files are
    /// removed); an ingest of no entries adds nothing.
    pub fn finish(mut self) -> Result<Ingested> {
        self.new_range()?;
        if self.ranges.is_empty() {
            return Ok(Ingested {
                level: 0,
                files: 0,
                bytes: 0,
                entries: 0,
                seqno: self.seqno,
            });
        }
        riptide_compaction::fsutil::sync_dir(&*self.db.options().file_system, &self.dir)?;
        let db = Arc::clone(&self.db);
        // Held to the end (in the database's lock order, before the version set): no write
        // group numbers a batch until the ingest's number is published, so every later
        // write is newer than the ingest. Writers wait for the checks below (a seek per
        // overlapping table) and the manifest write.
        let write_guard = db.write_lock.lock();
        let mut vs = db.versions.lock();
        if self.cf.is_dropped() {
            return Err(Error::not_found(format!(
                "ingest: column family {:?} was dropped",
                self.cf_name
            )));
        }
        // Another ingest that finished meanwhile published a later number (or, in theory,
        // 2^34 writes were numbered): snapshots taken since then see this ingest's keys once
        // it is installed. Correctness does not depend on it: the ranges hold no key.
        let published = db.last_seqno.load(Ordering::Acquire).max(self.seqno);
        let view = self.cf.view();
        let current = vs.current();
        let levels = current.levels(self.cf.id);
        let mut edits: Vec<VersionEdit> = Vec::with_capacity(self.done.len() + 1);
        let mut files = self.done.iter();
        let mut deepest_used = 0;
        for range in &self.ranges {
            let (first, last) = (range.first.as_slice(), range.last.as_slice());
            for mem in std::iter::once(&view.mem).chain(&view.imms) {
                if let Some(key) = key_in(&mut mem.iter(), first, last)? {
                    return Err(self.overlap_error(range, "an unflushed write", &key));
                }
            }
            for level_files in levels {
                for f in level_files
                    .iter()
                    .filter(|f| f.meta.overlaps_user_range(first, last))
                {
                    if let Some(key) = key_in(&mut f.iter(), first, last)? {
                        let place = format!("table {}", f.number());
                        return Err(self.overlap_error(range, &place, &key));
                    }
                }
            }
            let level = (1..levels.len())
                .rev()
                .find(|&l| {
                    !levels.get(l).is_some_and(|fs| {
                        fs.iter().any(|f| f.meta.overlaps_user_range(first, last))
                    }) && !db.registry.output_overlaps(self.cf.id, l, first, last)
                })
                .unwrap_or(0);
            deepest_used = deepest_used.max(level);
            for t in files.by_ref().take(range.files) {
                edits.push(VersionEdit::AddFile {
                    cf: self.cf.id,
                    level,
                    meta: t.meta.clone(),
                });
            }
        }
        edits.push(VersionEdit::SetLastSeqno(published));
        riptide_common::kill_point::kill_point("ingest.before_install");
        let version = vs.apply_with_tables(edits, &self.done)?;
        db.install_version(&version);
        db.last_seqno.store(published, Ordering::Release);
        refresh_pending_compaction_bytes(&db, &version);
        drop(vs);
        drop(write_guard);
        let done = std::mem::take(&mut self.done);
        for t in &done {
            t.unmark_obsolete();
        }
        let bytes = done.iter().map(|t| t.meta.file_size).sum();
        Counters::add(&db.counters.ingested_files, done.len() as u64);
        Counters::add(&db.counters.ingested_bytes, bytes);
        db.schedule_background();
        Ok(Ingested {
            level: deepest_used,
            files: done.len() as u64,
            bytes,
            entries: self.entries,
            seqno: self.seqno,
        })
    }

    fn overlap_error(&self, range: &KeyRange, place: &str, key: &[u8]) -> Error {
        Error::busy(format!(
            "ingest into column family {:?}: {place} holds key {key:02x?} inside the ingested \
             range {:02x?}..={:02x?}; the range must hold no key when the ingest finishes",
            self.cf_name, range.first, range.last
        ))
    }
}

impl Drop for IngestWriter {
    fn drop(&mut self) {
        if let Some((_, w)) = self.current.take()
            && let Err(e) = w.abandon()
        {
            log::warn!("ingest: could not remove an unfinished table: {e}");
        }
        // `done` handles still marked obsolete delete their files as they drop.
    }
}

/// Whether no memtable and no table of `cf` holds an entry (any version of any kind) with
/// a user key in `[start, end)`: see [`crate::Db::range_is_vacant`].
pub(crate) fn range_is_vacant(cf: &CfData, start: &[u8], end: &[u8]) -> Result<bool> {
    if start >= end {
        return Ok(true);
    }
    let view = cf.view();
    let first_at_or_after = |it: &mut dyn InternalIterator| -> Result<bool> {
        it.seek(&seek_key(start, MAX_SEQNO))?;
        Ok(it.valid() && parse_internal_key(it.key())?.user_key < end)
    };
    for mem in std::iter::once(&view.mem).chain(&view.imms) {
        if first_at_or_after(&mut mem.iter())? {
            return Ok(false);
        }
    }
    for files in view.version.levels(cf.id) {
        for f in files {
            let meta = &f.meta;
            if meta.smallest_user_key() >= end || meta.largest_user_key() < start {
                continue;
            }
            if first_at_or_after(&mut f.iter())? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The first user key at or after `first` that `it` (a memtable's or a table's iterator)
/// holds, if it is at most `last`.
fn key_in(it: &mut dyn InternalIterator, first: &[u8], last: &[u8]) -> Result<Option<Vec<u8>>> {
    it.seek(&seek_key(first, MAX_SEQNO))?;
    if it.valid() {
        let ikey = parse_internal_key(it.key())?;
        if ikey.user_key <= last {
            return Ok(Some(ikey.user_key.to_vec()));
        }
    }
    Ok(None)
}
