//! Opening a database: lock, manifest, WAL replay, flush of what was replayed.
//!
//! Replay rule: a WAL record in segment `s` is applied to column family `c` only if
//! `s >= c.log_number` (older segments hold nothing unflushed for `c`). Records for column
//! families that no longer exist are skipped. What was replayed is flushed to L0 tables at
//! once, every column family's log number moves to the new segment, and older segments are
//! deleted, so the next open starts from a clean WAL.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use riptide_common::write_batch::WriteBatch as RawBatch;
use riptide_common::{CfId, DEFAULT_CF_ID, Error, IoResultExt, Result, ResultExt, SeqNo};
use riptide_compaction::{VersionEdit, VersionSet, flush_memtable, manifest_path};
use riptide_memtable::Memtable;
use riptide_sstable::{BlockCache, TableCache, TableReadOptions};
use riptide_wal::Wal;

use crate::cf::{CfData, CfView};
use crate::db::{DbInner, prepare_dir};
use crate::lock::DirLock;
use crate::options::Options;
use crate::transaction::two_phase::{RecoveredPrepared, replay_marker};

/// Opens the database in `path` and recovers it. See the module doc.
pub(crate) fn open(path: &Path, options: Options) -> Result<DbInner> {
    options
        .validate()
        .context_with(|| format!("open database {}", path.display()))?;
    let fs = options.file_system.clone();
    prepare_dir(&*fs, path, options.create_if_missing)?;
    let lock = DirLock::acquire(&*fs, path)?;
    let manifest = manifest_path(path);
    let existed = fs.exists(&manifest).at("stat", &manifest)?;
    if existed && options.error_if_exists {
        return Err(Error::invalid_argument(format!(
            "database {} already exists (error_if_exists is on)",
            path.display()
        )));
    }
    if !existed && !options.create_if_missing {
        return Err(Error::not_found(format!(
            "no database in {} (create_if_missing is off)",
            path.display()
        )));
    }
    let cache = Arc::new(BlockCache::new(options.block_cache_size));
    let table_cache = Arc::new(
        TableCache::new(
            options.max_open_files,
            Some(Arc::clone(&cache)),
            TableReadOptions::default(),
        )
        .with_file_system(Arc::clone(&fs)),
    );
    let mut versions = VersionSet::open_in(
        Arc::clone(&fs),
        path,
        Some(Arc::clone(&cache)),
        Some(table_cache),
        true,
    )
    .context_with(|| format!("open database {}", path.display()))?;

    let state = versions.state().clone();
    let log_numbers: HashMap<CfId, u64> = state
        .column_families
        .iter()
        .map(|c| (c.id, c.log_number))
        .collect();
    let min_log = state.min_log_number().unwrap_or(0);
    let mut recovered: BTreeMap<CfId, Arc<Memtable>> = BTreeMap::new();
    let mut last_seqno: SeqNo = state.last_seqno;
    let mut prepared = RecoveredPrepared::new();
    let wal_fs = Arc::clone(&fs);
    let (wal, report) = Wal::open_in(
        wal_fs,
        path,
        options.wal_options(),
        min_log,
        |segment, payload| {
            let batch = RawBatch::from_data(payload.to_vec())?;
            if replay_marker(&batch, &mut prepared)? {
                // Prepared, not committed: not applied (see `transaction::two_phase`).
                return Ok(());
            }
            for (seqno, entry) in (batch.seqno()..).zip(batch.iter()) {
                let entry = entry?;
                if log_numbers
                    .get(&entry.cf)
                    .is_some_and(|&log| segment >= log)
                {
                    recovered
                        .entry(entry.cf)
                        .or_insert_with(|| Arc::new(Memtable::new(segment)))
                        .insert(entry.key, seqno, entry.kind, entry.value);
                }
                last_seqno = last_seqno.max(seqno);
            }
            Ok(())
        },
    )?;
    if let Some((file, offset)) = &report.tail_truncated {
        log::warn!(
            "WAL {} had a torn tail at offset {offset}; recovered up to it",
            file.display()
        );
    }
    if let Some(why) = &report.stopped_early {
        log::warn!("WAL replay stopped early (point-in-time recovery): {why}");
    }

    let segment = wal.current_segment();
    let mut edits = Vec::new();
    let mut tables = Vec::new();
    for (cf, mem) in &recovered {
        let number = versions.new_file_number();
        let table = flush_memtable(
            &fs,
            mem,
            path,
            number,
            &options.table_options(),
            Some(Arc::clone(&cache)),
            &[],
        )?;
        if let Some(table) = table {
            edits.push(VersionEdit::AddFile {
                cf: *cf,
                level: 0,
                meta: table.meta.clone(),
            });
            tables.push(table);
        }
    }
    for cf in &state.column_families {
        edits.push(VersionEdit::SetLogNumber {
            cf: cf.id,
            log_number: segment,
        });
    }
    edits.push(VersionEdit::SetLastSeqno(last_seqno));
    let version = versions.apply_with_tables(edits, &tables)?;
    // Prepared transactions live on in the new segment before the old ones go.
    for batch in prepared.values() {
        wal.append(batch.data())?;
    }
    if !prepared.is_empty() {
        wal.sync()?;
    }
    wal.remove_segments_below(segment)?;

    let cfs: BTreeMap<CfId, Arc<CfData>> = versions
        .state()
        .column_families
        .iter()
        .map(|c| {
            let view = CfView {
                cf_id: c.id,
                mem: Arc::new(options.new_memtable(segment)),
                imms: Vec::new(),
                version: Arc::clone(&version),
            };
            (c.id, CfData::new(c.id, c.name.clone(), view))
        })
        .collect();
    let default_cf = cfs.get(&DEFAULT_CF_ID).cloned().ok_or_else(|| {
        Error::corruption(format!(
            "manifest of {} has no default column family",
            path.display()
        ))
    })?;
    let inner = DbInner::new(
        path.to_path_buf(),
        options,
        wal,
        versions,
        cfs,
        default_cf,
        last_seqno,
        cache,
        lock,
    );
    inner.adopt_recovered_prepared(prepared)?;
    Ok(inner)
}
