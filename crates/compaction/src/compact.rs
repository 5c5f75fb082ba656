//! Compaction: merging table files into new ones, dropping versions no reader can see.
//!
//! [`compact`] merges a list of files in one pass; [`crate::run_compaction`] runs a picked
//! [`crate::CompactionJob`], split into parallel subcompactions. Both use one merge routine.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use riptide_common::fs::FsRef;
use riptide_common::merge::MergingIterator;
use riptide_common::range_del::RangeTombstone;
use riptide_common::{BoxedIterator, Result, SeqNo};
use riptide_sstable::{BlockCache, TableOptions};

use crate::gc::{GcStats, RangeDelAggregator, copy_with_gc_and_range_dels};
use crate::output::OutputTables;
use crate::range_iter::RangeIterator;
use crate::table_handle::TableHandle;
use crate::untouched::KeptRange;

/// Bytes read per read from each input table of a compaction: the inputs are read front to
/// back once, so one read fetches many blocks (RocksDB: `compaction_readahead_size`, 2 MiB).
/// Held per input table for the whole compaction, so a merge of 20 inputs holds 5 MiB.
const COMPACTION_READAHEAD: usize = 256 << 10;

/// Where and how a compaction writes.
#[derive(Debug, Clone)]
pub struct CompactionOptions<'a> {
    /// The file system the database lives on (`riptide_common::fs::real()` for the
    /// operating system's).
    pub fs: FsRef,
    /// The database directory.
    pub dir: &'a Path,
    /// Options of the output tables.
    pub table_options: &'a TableOptions,
    /// Block cache the output tables are opened with.
    pub cache: Option<Arc<BlockCache>>,
    /// Live snapshots, sorted ascending (sorted here if they are not).
    pub snapshots: &'a [SeqNo],
    /// True when no file below the output level can hold these keys: tombstones every
    /// snapshot sees are dropped with what they delete. Used by [`compact`];
    /// [`crate::run_compaction`] takes [`crate::CompactionJob::bottommost`] instead.
    pub bottommost: bool,
    /// An output file is closed once it reaches about this size (never between two versions
    /// of one user key). Used by [`compact`]; [`crate::run_compaction`] takes
    /// [`crate::CompactionJob::target_file_size`] instead.
    pub target_file_size: u64,
}

/// Counters of one compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionStats {
    /// Total size of the input files.
    pub bytes_read: u64,
    /// Size of the input files per input level, as `(level, bytes)`, shallowest first
    /// (empty for [`compact`], which does not know levels).
    pub bytes_read_per_level: Vec<(usize, u64)>,
    /// Total size of the output files.
    pub bytes_written: u64,
    /// Entries read.
    pub entries_in: u64,
    /// Entries written.
    pub entries_out: u64,
    /// Tombstones (deletes and single deletes) in the inputs that are not in the output.
    pub tombstones_dropped: u64,
    /// Range tombstones in the inputs (after clipping to the subcompaction ranges; a
    /// tombstone spanning several ranges counts once per range).
    pub range_tombstones_in: u64,
    /// Range tombstones (fragments) written to the outputs.
    pub range_tombstones_out: u64,
    /// Point versions dropped because a range tombstone of their stripe covers them.
    pub range_deleted: u64,
    /// Number of key ranges merged in parallel (1 without subcompactions; 0 for a trivial
    /// move, which merges nothing).
    pub subcompactions: usize,
    /// Files moved to the output level unchanged (a trivial move, see
    /// [`crate::CompactionJob::is_trivial_move`]); 0 for a merge.
    pub files_moved: u64,
    /// Output-level files a merge left in place because no shallower key fell into them
    /// (see [`crate::CompactionJob::set_aside_untouched`]).
    pub files_kept: u64,
    /// Wall-clock time of the whole compaction.
    pub duration: Duration,
}

/// The result of [`compact`] or [`crate::run_compaction`].
#[derive(Debug)]
pub struct CompactionOutput {
    /// The new tables, in key order (possibly none, if everything was dropped).
    pub new_files: Vec<Arc<TableHandle>>,
    /// What the compaction read and wrote.
    pub stats: CompactionStats,
}

/// `snapshots` sorted ascending (a copy).
pub(crate) fn sorted(snapshots: &[SeqNo]) -> Vec<SeqNo> {
    let mut s = snapshots.to_vec();
    s.sort_unstable();
    s.dedup();
    s
}

/// How one merge writes: everything but the inputs and the key range.
pub(crate) struct MergeSettings<'a> {
    pub(crate) fs: FsRef,
    pub(crate) dir: &'a Path,
    pub(crate) table_options: &'a TableOptions,
    pub(crate) cache: Option<Arc<BlockCache>>,
    /// Sorted ascending.
    pub(crate) snapshots: &'a [SeqNo],
    pub(crate) bottommost: bool,
    pub(crate) target_file_size: u64,
    /// Key ranges the outputs stay out of (see [`crate::untouched`]), ascending.
    pub(crate) kept: &'a [KeptRange],
}

/// What one [`merge_range`] produced.
pub(crate) struct MergeResult {
    pub(crate) new_files: Vec<Arc<TableHandle>>,
    pub(crate) bytes_written: u64,
    pub(crate) gc: GcStats,
    pub(crate) range_tombstones_in: u64,
    pub(crate) range_tombstones_out: u64,
}

/// The range tombstones of `inputs`, clipped to the user keys `[start, end)`.
fn input_tombstones(
    inputs: &[Arc<TableHandle>],
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<Vec<RangeTombstone>> {
    let mut out = Vec::new();
    for h in inputs.iter().filter(|h| h.has_range_tombstones()) {
        let ts = h
            .table()
            .and_then(|t| t.range_tombstones())
            .map_err(|e| e.with_context(format!("table {}", h.path().display())))?;
        out.extend(ts.iter().filter_map(|t| t.clip(start, end)));
    }
    Ok(out)
}

/// Merges the entries of `inputs` (shallowest first) whose user key is in `[start, end)`
/// into new tables, applying the garbage collection of [`crate::gc`] (range tombstones of the
/// inputs included, clipped to the range). The outputs and the directory are fsynced; on
/// error every output written so far is removed.
pub(crate) fn merge_range(
    inputs: &[Arc<TableHandle>],
    start: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
    s: &MergeSettings<'_>,
    alloc_number: impl FnMut() -> u64,
) -> Result<MergeResult> {
    let tombstones = input_tombstones(inputs, start.as_deref(), end.as_deref())?;
    let mut range_dels = RangeDelAggregator::new(tombstones, s.snapshots);
    let output_tombstones = range_dels.output_tombstones(s.bottommost);
    let range_tombstones_out = output_tombstones.len() as u64;
    let children: Vec<BoxedIterator> = inputs
        .iter()
        .map(|h| Box::new(h.scan_iter(COMPACTION_READAHEAD)) as BoxedIterator)
        .collect();
    let mut merged = RangeIterator::new(MergingIterator::new(children), start.clone(), end.clone());
    let mut out = OutputTables::new(
        s.fs.clone(),
        s.dir,
        s.table_options,
        s.cache.clone(),
        alloc_number,
        s.target_file_size.max(1),
    )
    .with_range_tombstones(&output_tombstones, start, end)
    .keeping_out(s.kept);
    let gc = copy_with_gc_and_range_dels(
        &mut merged,
        s.snapshots,
        s.bottommost,
        &mut range_dels,
        |k, v| out.add(k, v),
    )?;
    let (new_files, bytes_written) = out.finish()?;
    Ok(MergeResult {
        new_files,
        bytes_written,
        gc,
        range_tombstones_in: range_dels.input_count(),
        range_tombstones_out,
    })
}

/// Tombstones in `inputs` minus tombstones in `outputs`.
pub(crate) fn tombstones_dropped(inputs: &[Arc<TableHandle>], outputs: &[Arc<TableHandle>]) -> u64 {
    let count = |v: &[Arc<TableHandle>]| v.iter().map(|h| h.meta.tombstones).sum::<u64>();
    count(inputs).saturating_sub(count(outputs))
}

/// Merges `inputs` (newest first) into new tables numbered by `alloc_number`, applying the
/// version garbage collection of [`crate::gc`], in one pass on the calling thread.
///
/// The outputs are fsynced, as is the directory. On error every output written so far is
/// removed. The caller installs the result with a version edit that deletes the inputs and
/// adds [`CompactionOutput::new_files`] (see [`crate::pick::compaction_edits`]).
pub fn compact(
    inputs: Vec<Arc<TableHandle>>,
    opts: &CompactionOptions<'_>,
    alloc_number: impl FnMut() -> u64,
) -> Result<CompactionOutput> {
    let started = Instant::now();
    let snapshots = sorted(opts.snapshots);
    let settings = MergeSettings {
        fs: opts.fs.clone(),
        dir: opts.dir,
        table_options: opts.table_options,
        cache: opts.cache.clone(),
        snapshots: &snapshots,
        bottommost: opts.bottommost,
        target_file_size: opts.target_file_size,
        kept: &[],
    };
    let r = merge_range(&inputs, None, None, &settings, alloc_number)?;
    Ok(CompactionOutput {
        stats: CompactionStats {
            bytes_read: inputs.iter().map(|h| h.meta.file_size).sum(),
            bytes_read_per_level: Vec::new(),
            bytes_written: r.bytes_written,
            entries_in: r.gc.entries_in,
            entries_out: r.gc.entries_out,
            tombstones_dropped: tombstones_dropped(&inputs, &r.new_files),
            range_tombstones_in: r.range_tombstones_in,
            range_tombstones_out: r.range_tombstones_out,
            range_deleted: r.gc.range_deleted,
            subcompactions: 1,
            files_moved: 0,
            files_kept: 0,
            duration: started.elapsed(),
        },
        new_files: r.new_files,
    })
}
