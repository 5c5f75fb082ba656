//! Background work: `max_background_flushes` flush threads and `max_background_compactions`
//! compaction threads.
//!
//! Flush threads write frozen memtables as L0 tables, oldest first. A column family is flushed
//! by one thread at a time ([`CfData::claim_flush`]), so its memtables leave in the order they
//! were frozen, which reads rely on; several threads flush several column families at once.
//! Compaction threads pick leveled compactions (`riptide_compaction::pick_compaction`): each job is registered
//! in the shared [`CompactionRegistry`], so threads work on disjoint key ranges at once; big
//! jobs are split into subcompactions. After every install the pending-compaction estimate
//! that drives write back-pressure is refreshed.
//!
//! A failure (for example a full disk while writing a table) or a caught panic becomes the
//! database's background error: from then on writes fail with `Closed` and say why, reads go
//! on, and nothing acknowledged is lost (it is still in the WAL).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use riptide_common::kill_point::kill_point;
use riptide_common::{Error, ErrorKind, Result};
use riptide_compaction::{
    CompactionJob, CompactionOptions, CompactionOutput, CompactionStats, FlushOutput,
    ManualCompaction, ManualStep, TableHandle, TombstoneCoalescing, Version, VersionEdit,
    flush_memtable_coalescing, level_targets, pick_compaction, run_compaction,
    run_compaction_progressive,
};
use riptide_memtable::Memtable;

use crate::cf::{CfData, CfView};
use crate::db::DbInner;
use crate::jobs::{JobKind, JobStart};
use crate::stats::Counters;

/// Starts the flush threads and the compaction threads.
pub(crate) fn start(db: &Arc<DbInner>, handles: &mut Vec<JoinHandle<()>>) -> Result<()> {
    let opts = db.options();
    grow(
        db,
        opts.max_background_flushes,
        opts.max_background_compactions,
        handles,
    )
}

/// Starts flush threads until `flushes` have been started, and compaction threads until
/// `compactions` have (none if as many were started before), adding their handles to
/// `handles` (also those started before a failure to start one).
/// Each thread is numbered in its pool and works only while its number is below the pool's
/// size in the current options (`max_background_flushes`, `max_background_compactions`):
/// lowering a size makes the threads beyond it wait after their job, raising it again wakes
/// them, and only a size above every earlier one starts threads.
pub(crate) fn grow(
    db: &Arc<DbInner>,
    flushes: usize,
    compactions: usize,
    handles: &mut Vec<JoinHandle<()>>,
) -> Result<()> {
    let spawn = |name: String, f: fn(&DbInner, usize), number: usize| {
        let db = Arc::clone(db);
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || f(&db, number))
            .map_err(|e| Error::io(format!("start background thread {name}"), e))
    };
    let mut bg = db.bg.lock();
    while bg.flush_threads < flushes {
        let i = bg.flush_threads;
        handles.push(spawn(format!("riptide-flush-{i}"), flush_loop, i)?);
        bg.flush_threads += 1;
    }
    while bg.compaction_threads < compactions {
        let i = bg.compaction_threads;
        handles.push(spawn(format!("riptide-compact-{i}"), compaction_loop, i)?);
        bg.compaction_threads += 1;
    }
    // Threads parked by a lower size look at the new one.
    db.bg_cv.notify_all();
    Ok(())
}

/// Runs `work`, turning a panic (a bug) into an `Internal` error, and records any error as
/// the background error. Returns whether it succeeded.
fn guarded(db: &DbInner, what: &str, work: impl FnOnce() -> Result<()>) -> bool {
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::new(
                ErrorKind::Internal,
                format!("{what} panicked (a bug; please report it): {msg}"),
            ))
        });
    match outcome {
        Ok(()) => true,
        Err(e) => {
            set_background_error(db, what, e);
            false
        }
    }
}

/// Makes `e`, the failure of `what`, the database's background error (if it has none yet):
/// from then on writes fail with `Closed` saying why.
fn set_background_error(db: &DbInner, what: &str, e: Error) {
    log::error!(
        "{what} on {} failed, database is now read-only: {e}",
        db.path.display()
    );
    let mut bg = db.bg.lock();
    if bg.error.is_none() {
        bg.error = Some(e.with_context(what));
    }
    db.bg_cv.notify_all();
}

fn shutting_down(db: &DbInner) -> bool {
    db.bg.lock().shutdown
}

/// A flush thread: sleeps until a memtable is frozen, flushes every frozen memtable of the
/// column families no other flush thread is flushing.
///
/// A wake-up that finds nothing to flush notifies nobody: a stopped writer kicks the
/// background threads when it starts to wait, and a notification back from an idle flush
/// thread would wake it to kick again, a busy loop for as long as the stop lasts (counted
/// in `Statistics::flush_idle_wakeups`).
///
/// Thread `number` of the pool waits while `max_background_flushes` is not above it.
fn flush_loop(db: &DbInner, number: usize) {
    loop {
        {
            let mut bg = db.bg.lock();
            while !bg.shutdown
                && (!bg.pending_flush
                    || bg.error.is_some()
                    || number >= db.options().max_background_flushes)
            {
                db.bg_cv.wait(&mut bg);
            }
            if bg.shutdown {
                return;
            }
            bg.pending_flush = false;
        }
        let mut flushed = false;
        let ok = guarded(db, "flush", || {
            flushed = flush_all(db)?;
            Ok(())
        });
        if !flushed {
            // (A failure already notified everyone: it is the background error now.)
            if ok {
                Counters::add(&db.counters.flush_idle_wakeups, 1);
            }
            continue;
        }
        let mut bg = db.bg.lock();
        bg.pending_compaction = true;
        db.bg_cv.notify_all();
    }
}

/// Flushes every frozen memtable of every column family, oldest first, except those of column
/// families another flush thread is flushing (that thread looks at them again when it is
/// done). Returns whether it flushed any.
fn flush_all(db: &DbInner) -> Result<bool> {
    let mut any = false;
    loop {
        if shutting_down(db) {
            return Ok(any);
        }
        let cfs: Vec<Arc<CfData>> = db.cfs.read().values().cloned().collect();
        let mut flushed = false;
        for cf in &cfs {
            let Some(claim) = cf.claim_flush() else {
                continue;
            };
            let Some(mem) = cf.view().imms.last().cloned() else {
                continue;
            };
            wake_another_flush_thread(db, &cfs, cf);
            let job = db.jobs.start(JobStart {
                kind: JobKind::Flush,
                cf: cf.name.clone(),
                reason: "frozen memtable",
                input_levels: Vec::new(),
                output_level: 0,
                input_files: 0,
                input_bytes: mem.approximate_memory_usage() as u64,
            });
            let written = flush_one(db, cf, &mem);
            db.jobs
                .finish(job, written.as_ref().map(|b| *b).map_err(|e| e.to_string()));
            written?;
            drop(claim);
            flushed = true;
            let mut bg = db.bg.lock();
            bg.pending_compaction = true;
            db.bg_cv.notify_all();
        }
        if !flushed {
            return Ok(any);
        }
        any = true;
    }
}

/// Before this thread starts a flush of `cf`: if another column family also waits to be
/// flushed and no thread has it, wakes the other flush threads so one of them takes it
/// meanwhile. With one flush thread, nothing to do (it gets there itself).
fn wake_another_flush_thread(db: &DbInner, cfs: &[Arc<CfData>], cf: &Arc<CfData>) {
    if db.options().max_background_flushes < 2 {
        return;
    }
    let another_waits = cfs
        .iter()
        .any(|o| !Arc::ptr_eq(o, cf) && !o.is_flushing() && !o.view().imms.is_empty());
    if another_waits {
        let mut bg = db.bg.lock();
        bg.pending_flush = true;
        db.bg_cv.notify_all();
    }
}

/// Writes one frozen memtable as an L0 table and drops it from the view.
///
/// With `Options::young_space_bound`, into a column family without any table, the memtable
/// is instead written as small tables
/// (see `LevelOptions::output_file_size`) straight into the base level: nothing can overlap
/// them, so this is the flush plus the trivial move a compaction would make next, and it
/// gives the first real compaction small output-level files to free one slice at a time
/// (see `docs/ENGINE.md`, "A young database").
/// Returns the bytes of the tables it wrote.
fn flush_one(db: &DbInner, cf: &Arc<CfData>, mem: &Arc<Memtable>) -> Result<u64> {
    let snapshots = db.snapshots.seqnos();
    // Everything in this version was flushed before `mem` (the oldest frozen memtable).
    let older = Arc::clone(&cf.view().version);
    let level_opts = db.options().level_options();
    let into_empty_cf =
        db.options().young_space_bound && older.levels(cf.id).iter().all(Vec::is_empty);
    let max_file_size = if into_empty_cf {
        let base = level_targets(&older, cf.id, &level_opts).base_level;
        level_opts.output_file_size(base, base, 0)
    } else {
        u64::MAX
    };
    let verify = |first: &[u8], last: &[u8], run: &[Vec<u8>]| -> Result<bool> {
        only_run_keys_live(cf.id, &older, first, last, run)
    };
    let coalesce = TombstoneCoalescing {
        min_run: db.options().tombstone_coalesce_min_run,
        verify: &verify,
    };
    let mut next_number = || db.versions.lock().new_file_number();
    let flushed = flush_memtable_coalescing(
        mem,
        &db.path,
        FlushOutput {
            fs: db.options().file_system.clone(),
            next_number: &mut next_number,
            max_file_size,
        },
        &db.options().table_options(),
        Some(Arc::clone(&db.cache)),
        &snapshots,
        (db.options().tombstone_coalesce_min_run > 0).then_some(&coalesce),
    )?;

    let mut vs = db.versions.lock();
    if cf.is_dropped() {
        // Dropped while this flush ran (`drop_cf` holds the version-set lock while it drops):
        // the table has no column family to join. Its file goes when the handle drops.
        for table in &flushed {
            table.mark_obsolete();
        }
        return Ok(0);
    }
    // Only the flush thread holding the column family's claim adds tables to an empty column
    // family (compactions need inputs), so it is still empty; checked anyway, since L0 is
    // always a safe place.
    let current = vs.current();
    let level = if into_empty_cf && current.levels(cf.id).iter().all(Vec::is_empty) {
        level_targets(&current, cf.id, &level_opts).base_level
    } else {
        0
    };
    let mut edits = Vec::new();
    let written: u64 = flushed.iter().map(|t| t.meta.file_size).sum();
    for table in &flushed {
        Counters::add(&db.counters.flush_bytes_written, table.meta.file_size);
        edits.push(VersionEdit::AddFile {
            cf: cf.id,
            level,
            meta: table.meta.clone(),
        });
    }
    let tables = flushed;
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
    kill_point("flush.before_install");
    let version = vs.apply_with_tables(edits, &tables)?;
    kill_point("flush.after_install");
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
    refresh_pending_compaction_bytes(db, &version);
    let min_log = vs.state().min_log_number();
    drop(vs);
    Counters::add(&db.counters.flushes, 1);
    if let Some(min_log) = min_log {
        // Not below a segment a checkpoint in progress still copies.
        db.wal.remove_segments_below(db.wal_pins.limit(min_log))?;
    }
    Ok(written)
}

/// True when no key in `[first, last]` is live in the tables of `version` (for column family
/// `cf`) except keys of `run` (sorted): the check that lets a flush turn the run's point
/// tombstones into a range tombstone.
fn only_run_keys_live(
    cf: riptide_common::CfId,
    version: &Arc<Version>,
    first: &[u8],
    last: &[u8],
    run: &[Vec<u8>],
) -> Result<bool> {
    let view = Arc::new(CfView {
        cf_id: cf,
        mem: Arc::new(Memtable::new(0)),
        imms: Vec::new(),
        version: Arc::clone(version),
    });
    let merged = view.merged_iter();
    let upper = riptide_common::key::user_key_successor(last);
    let mut it = crate::iterator::DbIterator::new(
        view,
        merged,
        riptide_common::key::MAX_SEQNO,
        Some(first.to_vec()),
        Some(upper),
    )?;
    it.seek_to_first()?;
    let mut i = 0usize;
    while it.valid() {
        while run.get(i).is_some_and(|k| k.as_slice() < it.key()) {
            i += 1;
        }
        if run.get(i).is_none_or(|k| k.as_slice() != it.key()) {
            return Ok(false);
        }
        it.next()?;
    }
    Ok(true)
}

/// A compaction thread: sleeps until work may be due, then runs jobs until none is.
/// Thread `number` of the pool works only while `max_background_compactions` is above it.
fn compaction_loop(db: &DbInner, number: usize) {
    loop {
        {
            let mut bg = db.bg.lock();
            while !bg.shutdown
                && (!bg.pending_compaction
                    || bg.error.is_some()
                    || number >= db.options().max_background_compactions)
            {
                db.bg_cv.wait(&mut bg);
            }
            if bg.shutdown {
                return;
            }
            bg.pending_compaction = false;
        }
        while !shutting_down(db) && number < db.options().max_background_compactions {
            let Some(mut job) = pick_next(db) else { break };
            // Another thread may find a disjoint job while this one runs.
            {
                let mut bg = db.bg.lock();
                bg.pending_compaction = true;
                db.bg_cv.notify_all();
            }
            if !guarded(db, "compaction", || run_and_install(db, &mut job)) {
                break;
            }
        }
    }
}

/// Picks (and registers) the most urgent compaction of any column family.
fn pick_next(db: &DbInner) -> Option<CompactionJob> {
    let vs = db.versions.lock();
    let version = vs.current();
    let opts = db.options().level_options();
    let cfs: Vec<_> = db.cfs.read().keys().copied().collect();
    cfs.into_iter()
        .find_map(|cf| pick_compaction(&version, cf, &opts, &db.registry))
}

/// Runs a registered job, installs its result and releases it (also on failure).
///
/// With one subcompaction (the default) a big job is run and installed slice by slice
/// (`riptide_compaction::progressive`), so the files it replaces are deleted as it goes and
/// the disk never holds a whole job twice. With several subcompactions the job runs in
/// parallel ranges and is installed once at the end.
pub(crate) fn run_and_install(db: &DbInner, job: &mut CompactionJob) -> Result<()> {
    let cf_name = db
        .cfs
        .read()
        .get(&job.cf)
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let listed = db.jobs.start(JobStart {
        kind: JobKind::Compaction,
        cf: cf_name,
        reason: match job.reason {
            riptide_compaction::CompactionReason::L0FileCount => "L0 file count",
            riptide_compaction::CompactionReason::LevelSize => "level size",
            riptide_compaction::CompactionReason::TombstoneDensity => "tombstone density",
            riptide_compaction::CompactionReason::Manual => "manual",
        },
        input_levels: job.inputs.iter().map(|(level, _)| *level).collect(),
        output_level: job.output_level,
        input_files: job.inputs.iter().map(|(_, files)| files.len()).sum(),
        input_bytes: job.input_bytes(),
    });
    let outcome = run_job(db, job);
    db.jobs.finish(
        listed,
        outcome
            .as_ref()
            .map(|o| o.stats.bytes_written)
            .map_err(|e| e.to_string()),
    );
    match &outcome {
        Ok(output) => db.registry.finish_with_output(job, output),
        Err(_) => db.registry.finish(job),
    }
    let output = outcome?;
    let c = &db.counters;
    if output.stats.files_moved > 0 {
        Counters::add(&c.compaction_files_moved, output.stats.files_moved);
    } else {
        Counters::add(&c.compactions, 1);
        Counters::add(&c.compaction_bytes_read, output.stats.bytes_read);
        Counters::add(&c.compaction_bytes_written, output.stats.bytes_written);
        Counters::add(
            &c.compaction_tombstones_dropped,
            output.stats.tombstones_dropped,
        );
        Counters::add(&c.compaction_range_deleted, output.stats.range_deleted);
        Counters::add(&c.compaction_files_kept, output.stats.files_kept);
    }
    let mut bg = db.bg.lock();
    bg.pending_compaction = true;
    db.bg_cv.notify_all();
    Ok(())
}

/// How many target-size files of input one progressive slice holds.
const SLICE_FILES: u64 = 2;

/// Runs `job` and installs its output (see [`run_and_install`]).
fn run_job(db: &DbInner, job: &mut CompactionJob) -> Result<CompactionOutput> {
    let snapshots = db.snapshots.seqnos();
    let table_options = db.options().table_options();
    let opts = CompactionOptions {
        fs: db.options().file_system.clone(),
        dir: &db.path,
        table_options: &table_options,
        cache: Some(Arc::clone(&db.cache)),
        snapshots: &snapshots,
        bottommost: job.bottommost,
        target_file_size: job.target_file_size,
    };
    let alloc = || db.versions.lock().new_file_number();
    let cf = job.cf;
    // A size-triggered job moved its level's round-robin cursor when it was picked: persist
    // it with the job's output, so a restart resumes where compaction left off.
    let cursor_edit = job
        .inputs
        .first()
        .filter(|_| job.reason == riptide_compaction::CompactionReason::LevelSize)
        .and_then(|(level, _)| {
            db.registry
                .round_robin_cursor(cf, *level)
                .map(|key| VersionEdit::SetCompactCursor {
                    cf,
                    level: *level,
                    key,
                })
        });
    let install = |mut edits: Vec<VersionEdit>, tables: &[Arc<TableHandle>]| -> Result<()> {
        edits.extend(cursor_edit.iter().cloned());
        let mut vs = db.versions.lock();
        if vs.state().cf(cf).is_none() {
            // The column family was dropped while this job ran: nothing to install; the
            // output files go when their handles drop.
            for table in tables {
                table.mark_obsolete();
            }
            return Ok(());
        }
        kill_point("compaction.before_install");
        let version = vs.apply_with_tables(edits, tables)?;
        kill_point("compaction.after_install");
        db.install_version(&version);
        refresh_pending_compaction_bytes(db, &version);
        Ok(())
    };
    if job.is_trivial_move() {
        install(job.trivial_move_edits(), &[])?;
        return Ok(CompactionOutput {
            new_files: Vec::new(),
            stats: CompactionStats {
                files_moved: job.input_files().count() as u64,
                subcompactions: 0,
                ..Default::default()
            },
        });
    }
    job.set_aside_untouched()?;
    if db.options().max_subcompactions <= 1 {
        let slice = job.target_file_size.saturating_mul(SLICE_FILES);
        return run_compaction_progressive(job, &opts, alloc, slice, install);
    }
    let output = run_compaction(job, &opts, alloc, db.options().max_subcompactions)?;
    install(job.edits(&output), &output.new_files)?;
    Ok(output)
}

/// Compacts every level of `cf` overlapping `range` (all of it for `None`) down to the last
/// level, in the calling thread, alongside the background threads.
pub(crate) fn compact_range(
    db: &DbInner,
    cf: &CfData,
    range: Option<(&[u8], &[u8])>,
) -> Result<()> {
    let mut manual = ManualCompaction::new(cf.id, range);
    let opts = db.options().level_options();
    loop {
        let step = {
            let vs = db.versions.lock();
            manual.next_job(&vs.current(), &opts, &db.registry)
        };
        match step {
            ManualStep::Done => return Ok(()),
            ManualStep::Job(mut job) => {
                // A failed write or read of tables or of the manifest makes the database
                // read-only, as in a background compaction: after a failed directory fsync
                // the manifest on disk may be newer than the one in memory.
                if let Err(e) = run_and_install(db, &mut job) {
                    if matches!(
                        e.kind(),
                        ErrorKind::Io | ErrorKind::Corruption | ErrorKind::Internal
                    ) {
                        set_background_error(db, "compact_range", e.clone());
                    }
                    return Err(e);
                }
            }
            ManualStep::Wait => {
                let mut bg = db.bg.lock();
                if let Some(e) = &bg.error {
                    return Err(e.clone().with_context("compact_range"));
                }
                if bg.shutdown {
                    return Err(Error::closed("database closed during compact_range"));
                }
                db.bg_cv
                    .wait_for(&mut bg, std::time::Duration::from_millis(50));
            }
        }
    }
}

/// Re-estimates, for every column family, the bytes compaction must still rewrite to bring
/// every level within its target (RocksDB's `estimated_pending_compaction_bytes`).
pub(crate) fn refresh_pending_compaction_bytes(db: &DbInner, version: &Version) {
    let opts = db.options().level_options();
    for cf in db.cfs.read().values() {
        let targets = level_targets(version, cf.id, &opts);
        let levels = version.levels(cf.id);
        let bytes = |l: usize| targets.level_bytes.get(l).copied().unwrap_or(0);
        let mut pending = 0u64;
        let mut carried = 0u64;
        let l0_files = levels.first().map_or(0, Vec::len);
        if l0_files >= opts.l0_compaction_trigger {
            carried = bytes(0);
            pending += bytes(0) + bytes(targets.base_level);
        }
        for level in targets.base_level..targets.last_level() {
            let size = bytes(level) + carried;
            let target = targets.target(level);
            if size > target {
                let excess = size - target;
                // The excess is merged with the next level: about ratio + 1 times its size.
                pending += excess.saturating_mul(opts.ratio() as u64 + 1);
                carried = excess;
            } else {
                carried = 0;
            }
        }
        cf.pending_compaction_bytes
            .store(pending, Ordering::Relaxed);
    }
}
