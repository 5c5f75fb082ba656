//! The background worker: flushes frozen memtables (oldest first) and merges L0 into L1
//! when L0 reaches its trigger. One thread for now; several is a later step.
//!
//! A failure here (for example a full disk while writing a table) is kept as the database's
//! background error: from then on writes fail with `Closed` and say why, reads go on, and
//! nothing acknowledged is lost (it is still in the WAL).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use riptide_common::{Error, ErrorKind, Result};
use riptide_compaction::{
    CompactionOptions, VersionEdit, compact, compaction_edits, flush_memtable, l1_is_bottommost,
    pick_l0_compaction,
};
use riptide_memtable::Memtable;

use crate::cf::{CfData, CfView};
use crate::db::DbInner;
use crate::stats::Counters;

/// The worker's loop: sleep until work is signalled, do all of it, repeat until shutdown.
pub(crate) fn run(db: &DbInner) {
    loop {
        {
            let mut bg = db.bg.lock();
            while !bg.shutdown && (!bg.pending || bg.error.is_some()) {
                db.bg_cv.wait(&mut bg);
            }
            if bg.shutdown {
                return;
            }
            bg.pending = false;
        }
        // A panic here (a bug) must not leave writers waiting for a flush that never comes:
        // it becomes the background error like any other failure.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(db)))
            .unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                Err(Error::new(
                    ErrorKind::Internal,
                    format!("background worker panicked (a bug; please report it): {what}"),
                ))
            });
        if let Err(e) = outcome {
            log::error!(
                "background work on {} failed, database is now read-only: {e}",
                db.path.display()
            );
            let mut bg = db.bg.lock();
            if bg.error.is_none() {
                bg.error = Some(e);
            }
        }
        db.bg_cv.notify_all();
    }
}

fn shutting_down(db: &DbInner) -> bool {
    db.bg.lock().shutdown
}

/// Does every flush, then every due compaction, until nothing is left.
fn work(db: &DbInner) -> Result<()> {
    loop {
        if shutting_down(db) {
            return Ok(());
        }
        let cfs: Vec<Arc<CfData>> = db.cfs.read().values().cloned().collect();
        let mut flushed = false;
        for cf in &cfs {
            let oldest = cf.view().imms.last().cloned();
            if let Some(mem) = oldest {
                flush_one(db, cf, &mem)?;
                flushed = true;
                db.bg_cv.notify_all();
            }
        }
        if flushed {
            continue;
        }
        let mut compacted = false;
        for cf in &cfs {
            if shutting_down(db) {
                return Ok(());
            }
            compacted |= compact_l0(db, cf)?;
        }
        if !compacted {
            return Ok(());
        }
    }
}

/// Writes one frozen memtable as an L0 table and drops it from the view.
fn flush_one(db: &DbInner, cf: &Arc<CfData>, mem: &Arc<Memtable>) -> Result<()> {
    let number = db.versions.lock().new_file_number();
    let snapshots = db.snapshots.seqnos();
    let table = flush_memtable(
        mem,
        &db.path,
        number,
        &db.options.table_options(),
        Some(Arc::clone(&db.cache)),
        &snapshots,
    )?;

    let mut vs = db.versions.lock();
    let mut edits = Vec::new();
    let mut tables = Vec::new();
    if let Some(table) = table {
        Counters::add(&db.counters.flush_bytes_written, table.meta.file_size);
        edits.push(VersionEdit::AddFile {
            cf: cf.id,
            level: 0,
            meta: table.meta.clone(),
        });
        tables.push(table);
    }
    // Every column family's log number becomes the segment of its oldest memtable that
    // still holds unflushed data (this memtable excluded), so older segments can go.
    for other in db.cfs.read().values() {
        let view = other.view();
        let oldest = view
            .imms
            .iter()
            .rev()
            .find(|m| !(other.id == cf.id && Arc::ptr_eq(m, mem)))
            .map_or_else(|| view.mem.id(), |m| m.id());
        edits.push(VersionEdit::SetLogNumber {
            cf: other.id,
            log_number: oldest,
        });
    }
    edits.push(VersionEdit::SetLastSeqno(
        db.last_seqno.load(Ordering::Acquire),
    ));
    let version = vs.apply_with_tables(edits, &tables)?;
    cf.update_view(|v| CfView {
        cf_id: v.cf_id,
        mem: Arc::clone(&v.mem),
        imms: v
            .imms
            .iter()
            .filter(|m| !Arc::ptr_eq(m, mem))
            .cloned()
            .collect(),
        version: Arc::clone(&version),
    });
    db.install_version(&version);
    let min_log = vs.state().min_log_number();
    drop(vs);
    Counters::add(&db.counters.flushes, 1);
    if let Some(min_log) = min_log {
        db.wal.remove_segments_below(min_log)?;
    }
    Ok(())
}

/// Merges L0 (and the overlapping part of L1) into L1 when L0 has reached its trigger.
/// Returns whether it did.
fn compact_l0(db: &DbInner, cf: &Arc<CfData>) -> Result<bool> {
    let version = Arc::clone(&cf.view().version);
    let Some(inputs) = pick_l0_compaction(&version, cf.id, db.options.l0_compaction_trigger) else {
        return Ok(false);
    };
    let snapshots = db.snapshots.seqnos();
    let table_options = db.options.table_options();
    let opts = CompactionOptions {
        dir: &db.path,
        table_options: &table_options,
        cache: Some(Arc::clone(&db.cache)),
        snapshots: &snapshots,
        bottommost: l1_is_bottommost(&version, cf.id),
        target_file_size: db.options.target_file_size,
    };
    let output = compact(inputs.clone(), &opts, || {
        db.versions.lock().new_file_number()
    })?;
    let edits = compaction_edits(&version, cf.id, &inputs, 1, &output)?;
    let mut vs = db.versions.lock();
    let version = vs.apply_with_tables(edits, &output.new_files)?;
    db.install_version(&version);
    drop(vs);
    Counters::add(&db.counters.compactions, 1);
    Counters::add(&db.counters.compaction_bytes_read, output.stats.bytes_read);
    Counters::add(
        &db.counters.compaction_bytes_written,
        output.stats.bytes_written,
    );
    Ok(true)
}
