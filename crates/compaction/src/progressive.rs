//! Progressive install: a big compaction job runs as a sequence of key-range slices, and each
//! finished slice is installed at once, so the output-level input files it replaced are
//! deleted while the rest of the job still runs.
//!
//! Why: a job keeps all its inputs until it is installed, so without this the disk holds
//! the inputs *and* the outputs written so far; with jobs of a gigabyte on a database of a
//! few, space amplification during a write-heavy run went above 1.5x. With slices of about
//! `slice_bytes`, the transient extra space of one job is about one slice.
//!
//! Slices are cut at the smallest key of output-level input files, so each of those files
//! lies wholly in one slice, and the level stays sorted and non-overlapping after every
//! partial install: the new outputs of slice `i` cover `[cut_i, cut_i+1)`, the output-level
//! inputs still waiting lie in later slices.
//!
//! The shallower inputs (L0 files, or the files of level `n` in an `n -> n+1` job) are kept
//! until the last slice is installed. Between partial installs the versions of their keys in
//! finished slices exist twice: in the shallower file and, merged, in the new output. That is
//! safe because readers look at shallower levels first and find the same (newest) version
//! there, and a later merge of both copies sees two entries with the same user key and
//! sequence number, of which garbage collection keeps one (`gc`: an exact copy of the
//! version just seen is dropped, whatever its kind; before 2026-11-30 two copies of a
//! single delete both went to the output, which the table writer refused as keys out of
//! order, and the database turned read-only after a crash in the middle of such a job:
//! the MariaDB crash test found it). Deleting a
//! shallower input early would not be safe for L0: an older L0 input could then shadow the
//! newer data moved down.
//!
//! A failure after some slices were installed leaves a consistent version (finished slices
//! installed, the rest of the inputs untouched); the job can simply be picked again.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use riptide_common::Result;

use crate::compact::{
    CompactionOptions, CompactionOutput, CompactionStats, MergeSettings, merge_range, sorted,
};
use crate::edit::VersionEdit;
use crate::job::CompactionJob;
use crate::table_handle::TableHandle;

/// The user keys at which [`run_compaction_progressive`] cuts `job` into slices of about
/// `slice_bytes` of input each. Every cut is the smallest user key of an output-level input
/// file. Empty (one slice) when the job is small, or has no output-level inputs, or rewrites
/// one level into itself.
pub fn progressive_cuts(job: &CompactionJob, slice_bytes: u64) -> Vec<Vec<u8>> {
    let slice_bytes = slice_bytes.max(1);
    if job.input_bytes() <= slice_bytes.saturating_mul(2) {
        return Vec::new();
    }
    let lower: Vec<&Arc<TableHandle>> = job
        .inputs
        .iter()
        .filter(|(level, _)| *level == job.output_level)
        .flat_map(|(_, files)| files.iter())
        .collect();
    let upper_levels = job
        .inputs
        .iter()
        .filter(|(level, _)| *level != job.output_level)
        .count();
    if lower.len() < 2 || upper_levels == 0 {
        return Vec::new();
    }
    let lower_total: u64 = lower.iter().map(|f| f.meta.file_size).sum();
    let upper_total = job.input_bytes().saturating_sub(lower_total);
    // Each lower file brings its share of the upper input along (keys are assumed spread
    // evenly over the lower files' bytes).
    let share = |bytes: u64| -> u64 {
        bytes.saturating_add(
            (u128::from(upper_total) * u128::from(bytes) / u128::from(lower_total.max(1))) as u64,
        )
    };
    let mut cuts = Vec::new();
    let mut acc = 0u64;
    for pair in lower.windows(2) {
        let [file, next] = pair else { continue };
        acc = acc.saturating_add(share(file.meta.file_size));
        if acc >= slice_bytes && next.meta.smallest_user_key() > job.smallest_user_key.as_slice() {
            cuts.push(next.meta.smallest_user_key().to_vec());
            acc = 0;
        }
    }
    cuts
}

/// Runs `job` slice by slice (see the module documentation), calling `install` with the
/// version edits and new tables of each finished slice, in key order. The last call also
/// deletes every input not deleted yet. `install` must apply the edits (for example with
/// [`crate::VersionSet::apply_with_tables`]) before returning.
///
/// Returns every new table and the job's statistics, as [`crate::run_compaction`] does.
/// On error, slices already installed stay installed. The new files of a slice that failed
/// while merging are removed; those of a slice whose `install` failed are left on disk
/// (the manifest may name them after a failure past its rename), and the next open deletes
/// them if the manifest does not.
///
/// Each installed slice's replaced files are also removed from `job.inputs` (the job's
/// references would otherwise keep the obsolete files on disk until the job ends); the
/// [`crate::CompactionRegistry`] still releases every original input by the job's id.
pub fn run_compaction_progressive(
    job: &mut CompactionJob,
    opts: &CompactionOptions<'_>,
    mut alloc_number: impl FnMut() -> u64,
    slice_bytes: u64,
    mut install: impl FnMut(Vec<VersionEdit>, &[Arc<TableHandle>]) -> Result<()>,
) -> Result<CompactionOutput> {
    let started = Instant::now();
    let snapshots = sorted(opts.snapshots);
    let kept = job.kept_ranges.clone();
    let settings = MergeSettings {
        fs: opts.fs.clone(),
        dir: opts.dir,
        table_options: opts.table_options,
        cache: opts.cache.clone(),
        snapshots: &snapshots,
        bottommost: job.bottommost,
        target_file_size: job.target_file_size,
        kept: &kept,
    };
    let mut inputs: Vec<Arc<TableHandle>> = job.input_files().cloned().collect();
    let cuts = progressive_cuts(job, slice_bytes);
    let bytes_read = job.input_bytes();
    let bytes_read_per_level: Vec<(usize, u64)> = job
        .inputs
        .iter()
        .map(|(l, files)| (*l, files.iter().map(|f| f.meta.file_size).sum()))
        .collect();
    let tombstones_in: u64 = inputs.iter().map(|h| h.meta.tombstones).sum();
    let mut bounds: Vec<Option<Vec<u8>>> = vec![None];
    bounds.extend(cuts.into_iter().map(Some));
    bounds.push(None);

    let mut stats = CompactionStats {
        subcompactions: bounds.len().saturating_sub(1),
        ..CompactionStats::default()
    };
    let mut new_files = Vec::new();
    let mut deleted: HashSet<u64> = HashSet::new();
    let slices = bounds.len().saturating_sub(1);
    for (i, pair) in bounds.windows(2).enumerate() {
        let [start, end] = pair else { continue };
        let last = i + 1 == slices;
        let files: Vec<Arc<TableHandle>> = inputs
            .iter()
            .filter(|f| {
                start
                    .as_deref()
                    .is_none_or(|s| f.meta.largest_user_key() >= s)
                    && end
                        .as_deref()
                        .is_none_or(|e| f.meta.smallest_user_key() < e)
            })
            .cloned()
            .collect();
        let r = merge_range(
            &files,
            start.clone(),
            end.clone(),
            &settings,
            &mut alloc_number,
        )?;
        stats.bytes_written += r.bytes_written;
        stats.entries_in += r.gc.entries_in;
        stats.entries_out += r.gc.entries_out;
        stats.range_deleted += r.gc.range_deleted;
        stats.range_tombstones_in += r.range_tombstones_in;
        stats.range_tombstones_out += r.range_tombstones_out;

        let mut edits = Vec::new();
        for (level, level_files) in &job.inputs {
            for f in level_files {
                let in_slice = *level == job.output_level
                    && start
                        .as_deref()
                        .is_none_or(|s| f.meta.smallest_user_key() >= s)
                    && end
                        .as_deref()
                        .is_none_or(|e| f.meta.smallest_user_key() < e);
                if (last || in_slice) && deleted.insert(f.number()) {
                    edits.push(VersionEdit::DeleteFile {
                        cf: job.cf,
                        level: *level,
                        number: f.number(),
                    });
                }
            }
        }
        for h in &r.new_files {
            edits.push(VersionEdit::AddFile {
                cf: job.cf,
                level: job.output_level,
                meta: h.meta.clone(),
            });
        }
        drop(files);
        // On failure the slice's outputs stay on disk: if the manifest write failed after
        // its rename (in the directory fsync), the manifest on disk may name them, and
        // deleting them would leave it pointing at missing tables. If it does not name them,
        // the next open deletes them as orphans.
        install(edits, &r.new_files)?;
        // Let go of the replaced files so they are deleted now, not when the job ends.
        for (_, level_files) in &mut job.inputs {
            level_files.retain(|f| !deleted.contains(&f.number()));
        }
        inputs.retain(|f| !deleted.contains(&f.number()));
        new_files.extend(r.new_files);
    }
    stats.bytes_read = bytes_read;
    stats.bytes_read_per_level = bytes_read_per_level;
    let tombstones_out: u64 = new_files.iter().map(|h| h.meta.tombstones).sum();
    stats.tombstones_dropped = tombstones_in.saturating_sub(tombstones_out);
    stats.files_kept = job.kept_ranges.len() as u64;
    stats.duration = started.elapsed();
    Ok(CompactionOutput { new_files, stats })
}
