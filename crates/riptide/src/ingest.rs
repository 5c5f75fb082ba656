//! Ingesting sorted new keys as table files ([`crate::Db::ingest_writer`]): the path of
//! loads that would otherwise go through the WAL, the memtable and every level's
//! compaction (an in-place index build, a bulk load), like RocksDB's
//! `IngestExternalFile` and MyRocks' bulk load.
//!
//! The writer reserves one sequence number when it is created, [`SEQNO_GAP`] above the
//! last one published, and writes every entry as a put at that number, into table files
//! of the target file size. Writes meanwhile keep numbering below it, and snapshots taken
//! meanwhile are below it too, so none of them ever sees the ingest, before or after it
//! finishes. [`IngestWriter::finish`] then, under the version-set lock (so no compaction
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
use riptide_compaction::{FileMeta, TableHandle, VersionEdit, table_file_path};
use riptide_memtable::Memtable;
use riptide_sstable::{TableOptions, TableWriter};

use crate::background::refresh_pending_compaction_bytes;
use crate::cf::{CfData, ColumnFamily};
use crate::db::DbInner;
use crate::stats::Counters;

/// How far above the last published sequence number an ingest reserves its own: the
/// writes the database may take while one ingest is open (2^34, 4.7 hours at a million
/// writes a second; past it the ingest is refused with `Busy`). Each ingest uses this much
/// of the 2^56 sequence numbers, enough for millions of ingests.
pub const SEQNO_GAP: SeqNo = 1 << 34;

/// What an ingest added: see [`IngestWriter::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// The level the files went to (0 only when every deeper level overlaps).
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
    first_key: Option<Vec<u8>>,
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
            table_opts: db.options.table_options(),
            target_file_size: db.options.target_file_size,
            current: None,
            done: Vec::new(),
            first_key: None,
            last_key: Vec::new(),
            ikey: Vec::new(),
            entries: 0,
        })
    }

    /// The sequence number every ingested entry carries.
    pub fn seqno(&self) -> SeqNo {
        self.seqno
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Adds `key` with `value`. Keys must be strictly ascending (`InvalidArgument`
    /// otherwise, naming both keys); a new file starts once one reaches the target file
    /// size.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if self.first_key.is_some() && key <= self.last_key.as_slice() {
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
                self.db.options.file_system.clone(),
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
        if self.first_key.is_none() {
            self.first_key = Some(key.to_vec());
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
        Ok(())
    }

    /// Finishes the open file and opens it as a table (still marked obsolete).
    fn finish_file(&mut self) -> Result<()> {
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
        let path = table_file_path(&self.dir, number);
        let fs = &self.db.options.file_system;
        let table = match riptide_sstable::Table::open_in(
            &**fs,
            &path,
            Some(Arc::clone(&self.db.cache)),
            &riptide_sstable::TableReadOptions::default(),
            riptide_sstable::CacheId::unique(),
        ) {
            Ok(t) => t,
            Err(e) => {
                riptide_compaction::fsutil::remove_quietly(&**fs, &path);
                return Err(e);
            }
        };
        let handle = TableHandle::new(fs.clone(), meta, table, path);
        handle.mark_obsolete();
        self.done.push(Arc::new(handle));
        Ok(())
    }

    /// Finishes the files and adds them to the column family (see the module
    /// documentation). `Busy` if the range holds keys older than the writer's sequence
    /// number (nothing is added, the files are removed); an ingest of no entries adds
    /// nothing.
    pub fn finish(mut self) -> Result<Ingested> {
        self.finish_file()?;
        let (Some(first), last) = (self.first_key.clone(), self.last_key.clone()) else {
            return Ok(Ingested {
                level: 0,
                files: 0,
                bytes: 0,
                entries: 0,
                seqno: self.seqno,
            });
        };
        riptide_compaction::fsutil::sync_dir(&*self.db.options.file_system, &self.dir)?;
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
        if db.last_seqno.load(Ordering::Acquire) >= self.seqno {
            return Err(Error::busy(format!(
                "ingest into column family {:?}: more than {SEQNO_GAP} writes were numbered \
                 while it ran; ingest in smaller parts",
                self.cf_name
            )));
        }
        let view = self.cf.view();
        for mem in std::iter::once(&view.mem).chain(&view.imms) {
            if let Some(key) = key_in_memtable(mem, &first, &last)? {
                return Err(self.overlap_error("an unflushed write", &key));
            }
        }
        let current = vs.current();
        let levels = current.levels(self.cf.id);
        for files in levels {
            for f in files
                .iter()
                .filter(|f| f.meta.overlaps_user_range(&first, &last))
            {
                if let Some(key) = key_in_table(f, &first, &last)? {
                    return Err(self.overlap_error(&format!("table {}", f.number()), &key));
                }
            }
        }
        let level = (1..levels.len())
            .rev()
            .find(|&l| {
                !levels.get(l).is_some_and(|files| {
                    files
                        .iter()
                        .any(|f| f.meta.overlaps_user_range(&first, &last))
                }) && !db.registry.output_overlaps(self.cf.id, l, &first, &last)
            })
            .unwrap_or(0);
        let mut edits: Vec<VersionEdit> = self
            .done
            .iter()
            .map(|t| VersionEdit::AddFile {
                cf: self.cf.id,
                level,
                meta: t.meta.clone(),
            })
            .collect();
        edits.push(VersionEdit::SetLastSeqno(self.seqno));
        riptide_common::kill_point::kill_point("ingest.before_install");
        let version = vs.apply_with_tables(edits, &self.done)?;
        db.install_version(&version);
        db.last_seqno.store(self.seqno, Ordering::Release);
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
            level,
            files: done.len() as u64,
            bytes,
            entries: self.entries,
            seqno: self.seqno,
        })
    }

    fn overlap_error(&self, place: &str, key: &[u8]) -> Error {
        Error::busy(format!(
            "ingest into column family {:?}: {place} holds key {key:02x?} inside the ingested \
             range {:02x?}..={:02x?}, older than the ingest (sequence number {}); the range \
             must hold no key before the ingest begins",
            self.cf_name,
            self.first_key.as_deref().unwrap_or_default(),
            self.last_key,
            self.seqno
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

/// A user key of `mem` in `[first, last]`, if any.
fn key_in_memtable(mem: &Arc<Memtable>, first: &[u8], last: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut it = mem.iter();
    it.seek(&seek_key(first, MAX_SEQNO))?;
    if it.valid() {
        let ikey = parse_internal_key(it.key())?;
        if ikey.user_key <= last {
            return Ok(Some(ikey.user_key.to_vec()));
        }
    }
    Ok(None)
}

/// A user key of table `t` in `[first, last]`, if any.
fn key_in_table(t: &Arc<TableHandle>, first: &[u8], last: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut it = t.iter();
    it.seek(&seek_key(first, MAX_SEQNO))?;
    if it.valid() {
        let ikey = parse_internal_key(it.key())?;
        if ikey.user_key <= last {
            return Ok(Some(ikey.user_key.to_vec()));
        }
    }
    Ok(None)
}
