//! Compaction: merging table files into new ones, dropping versions no reader can see.

use std::path::Path;
use std::sync::Arc;

use riptide_common::merge::MergingIterator;
use riptide_common::{BoxedIterator, Result, SeqNo};
use riptide_sstable::{BlockCache, TableOptions};

use crate::gc::copy_with_gc;
use crate::output::OutputTables;
use crate::table_handle::TableHandle;

/// Where and how a compaction writes.
#[derive(Debug, Clone)]
pub struct CompactionOptions<'a> {
    /// The database directory.
    pub dir: &'a Path,
    /// Options of the output tables.
    pub table_options: &'a TableOptions,
    /// Block cache the output tables are opened with.
    pub cache: Option<Arc<BlockCache>>,
    /// Live snapshots, sorted ascending (sorted here if they are not).
    pub snapshots: &'a [SeqNo],
    /// True when no file below the output level can hold these keys: tombstones every
    /// snapshot sees are dropped with what they delete.
    pub bottommost: bool,
    /// An output file is closed once it reaches about this size (never between two versions
    /// of one user key).
    pub target_file_size: u64,
}

/// Counters of one compaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionStats {
    /// Total size of the input files.
    pub bytes_read: u64,
    /// Total size of the output files.
    pub bytes_written: u64,
    /// Entries read.
    pub entries_in: u64,
    /// Entries written.
    pub entries_out: u64,
}

/// The result of [`compact`].
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

/// Merges `inputs` (newest first) into new tables numbered by `alloc_number`, applying the
/// version garbage collection of [`crate::gc`].
///
/// The outputs are fsynced, as is the directory. On error every output written so far is
/// removed. The caller installs the result with a version edit that deletes the inputs and
/// adds [`CompactionOutput::new_files`] (see [`crate::pick::compaction_edits`]).
pub fn compact(
    inputs: Vec<Arc<TableHandle>>,
    opts: &CompactionOptions<'_>,
    alloc_number: impl FnMut() -> u64,
) -> Result<CompactionOutput> {
    let snapshots = sorted(opts.snapshots);
    let bytes_read = inputs.iter().map(|h| h.meta.file_size).sum();
    let children: Vec<BoxedIterator> = inputs
        .iter()
        .map(|h| Box::new(h.iter()) as BoxedIterator)
        .collect();
    let mut merged = MergingIterator::new(children);
    let mut out = OutputTables::new(
        opts.dir,
        opts.table_options,
        opts.cache.clone(),
        alloc_number,
        opts.target_file_size.max(1),
    );
    let gc = copy_with_gc(&mut merged, &snapshots, opts.bottommost, |k, v| {
        out.add(k, v)
    })?;
    let (new_files, bytes_written) = out.finish()?;
    Ok(CompactionOutput {
        new_files,
        stats: CompactionStats {
            bytes_read,
            bytes_written,
            entries_in: gc.entries_in,
            entries_out: gc.entries_out,
        },
    })
}
