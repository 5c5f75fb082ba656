//! [`CompactionJob`]: what one compaction merges, where it writes, and the version edits that
//! install its result.

use std::sync::Arc;

use riptide_common::CfId;

use crate::compact::CompactionOutput;
use crate::edit::VersionEdit;
use crate::table_handle::TableHandle;
use crate::untouched::KeptRange;
use crate::version::Version;

/// Why a compaction was picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactionReason {
    /// L0 reached its file-count (or byte) trigger.
    L0FileCount,
    /// A level holds more than its target size.
    LevelSize,
    /// A file is dense with tombstones (nothing was due by size).
    TombstoneDensity,
    /// Asked for by the user (`compact_range`), see [`crate::manual`].
    Manual,
}

/// One compaction: its input files per level, its output level, and how it writes.
///
/// Picked (and registered) by [`crate::picker::pick_compaction`] or
/// [`crate::manual::ManualCompaction::next_job`]; run by [`crate::run_compaction`];
/// installed with [`CompactionJob::edits`]; released with
/// [`crate::registry::CompactionRegistry::finish`].
#[derive(Debug, Clone)]
pub struct CompactionJob {
    /// The registry's id of the job (unique within one registry).
    pub id: u64,
    /// The column family.
    pub cf: CfId,
    /// The input files, grouped by level, shallowest level first. L0 files are newest
    /// first, deeper levels in key order.
    pub inputs: Vec<(usize, Vec<Arc<TableHandle>>)>,
    /// The level the output files go to.
    pub output_level: usize,
    /// True when no file below the output level overlaps the job's user-key range: tombstones
    /// every snapshot sees are dropped with what they delete.
    pub bottommost: bool,
    /// Why the job was picked.
    pub reason: CompactionReason,
    /// The score of the input level when picked (>= 1 for size-triggered jobs; the
    /// tombstone ratio for tombstone-density jobs; 0 for manual ones).
    pub score: f64,
    /// Output files are closed at about this size (the output level's target file size).
    pub target_file_size: u64,
    /// The smallest user key of any input.
    pub smallest_user_key: Vec<u8>,
    /// The largest user key of any input.
    pub largest_user_key: Vec<u8>,
    /// Key ranges of output-level files the job leaves in place (sorted; see
    /// [`Self::set_aside_untouched`]): no output file reaches into them. Empty when picked.
    pub kept_ranges: Vec<KeptRange>,
}

impl CompactionJob {
    /// Every input file, shallowest level first (the merge order).
    pub fn input_files(&self) -> impl Iterator<Item = &Arc<TableHandle>> {
        self.inputs.iter().flat_map(|(_, files)| files.iter())
    }

    /// Total size of the input files.
    pub fn input_bytes(&self) -> u64 {
        self.input_files().map(|f| f.meta.file_size).sum()
    }

    /// The levels the inputs come from, shallowest first.
    pub fn input_levels(&self) -> impl Iterator<Item = usize> + '_ {
        self.inputs.iter().map(|(l, _)| *l)
    }

    /// True when the job can be done by moving its input files to [`Self::output_level`]
    /// unchanged (a *trivial move*, as RocksDB calls it): the inputs all come from one level
    /// above the output level, no output-level file overlaps them, and their user-key ranges
    /// are pairwise disjoint, so they can sit side by side in the sorted output level.
    ///
    /// Only size-triggered jobs move: a manual or tombstone-density job is asked for to
    /// rewrite (and drop tombstones), so it always merges.
    pub fn is_trivial_move(&self) -> bool {
        if !matches!(
            self.reason,
            CompactionReason::L0FileCount | CompactionReason::LevelSize
        ) {
            return false;
        }
        let [(level, files)] = self.inputs.as_slice() else {
            return false;
        };
        if *level == self.output_level || files.is_empty() || !self.kept_ranges.is_empty() {
            return false;
        }
        let mut sorted: Vec<&Arc<TableHandle>> = files.iter().collect();
        sorted.sort_by(|a, b| a.meta.smallest_user_key().cmp(b.meta.smallest_user_key()));
        sorted
            .windows(2)
            .all(|w| matches!(w, [a, b] if a.meta.ends_before(b.meta.smallest_user_key())))
    }

    /// The version edits of a trivial move (see [`Self::is_trivial_move`]): each input is
    /// deleted from its level and added, with the same number and description, to
    /// [`Self::output_level`]. Apply them with the inputs themselves as the tables, so the
    /// open handles carry over.
    pub fn trivial_move_edits(&self) -> Vec<VersionEdit> {
        let mut edits = Vec::new();
        for (level, files) in &self.inputs {
            for f in files {
                edits.push(VersionEdit::DeleteFile {
                    cf: self.cf,
                    level: *level,
                    number: f.number(),
                });
                edits.push(VersionEdit::AddFile {
                    cf: self.cf,
                    level: self.output_level,
                    meta: f.meta.clone(),
                });
            }
        }
        edits
    }

    /// The version edits that install `output` (the result of running this job): delete
    /// every input from its level, add every new file at [`Self::output_level`]. Pass
    /// `output.new_files` as the tables of
    /// [`crate::version::VersionSet::apply_with_tables`].
    pub fn edits(&self, output: &CompactionOutput) -> Vec<VersionEdit> {
        let mut edits = Vec::new();
        for (level, files) in &self.inputs {
            for f in files {
                edits.push(VersionEdit::DeleteFile {
                    cf: self.cf,
                    level: *level,
                    number: f.number(),
                });
            }
        }
        for h in &output.new_files {
            edits.push(VersionEdit::AddFile {
                cf: self.cf,
                level: self.output_level,
                meta: h.meta.clone(),
            });
        }
        edits
    }
}

/// The user-key range `[smallest, largest]` covered by `files` (`None` if empty).
pub(crate) fn user_key_hull<'a>(
    files: impl IntoIterator<Item = &'a Arc<TableHandle>>,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut hull: Option<(&[u8], &[u8])> = None;
    for f in files {
        let (s, l) = (f.meta.smallest_user_key(), f.meta.largest_user_key());
        hull = Some(match hull {
            None => (s, l),
            Some((hs, hl)) => (hs.min(s), hl.max(l)),
        });
    }
    hull.map(|(s, l)| (s.to_vec(), l.to_vec()))
}

/// True if no file of `cf` in a level below `output_level` overlaps `[smallest, largest]`.
pub fn is_bottommost(
    version: &Version,
    cf: CfId,
    output_level: usize,
    smallest: &[u8],
    largest: &[u8],
) -> bool {
    version
        .levels(cf)
        .iter()
        .skip(output_level + 1)
        .flatten()
        .all(|f| !f.meta.overlaps_user_range(smallest, largest))
}
