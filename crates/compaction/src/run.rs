//! Running a [`CompactionJob`]: its key range is split into disjoint subcompactions at input
//! file boundaries, merged in parallel, and the outputs concatenated in key order.

use std::sync::Arc;
use std::time::Instant;

use riptide_common::{Error, ErrorKind, Result};

use crate::compact::{
    CompactionOptions, CompactionOutput, CompactionStats, MergeResult, MergeSettings, merge_range,
    sorted, tombstones_dropped,
};
use crate::job::CompactionJob;
use crate::table_handle::TableHandle;

/// The user keys at which [`run_compaction`] splits `job` into at most `max_subcompactions`
/// ranges: with split keys `k1 < k2 < ...` the ranges are `[.., k1)`, `[k1, k2)`, ...,
/// `[kn, ..]`, so every version of a user key falls in exactly one range.
///
/// Candidates are the input files' smallest keys and the keys just after their largest;
/// the bytes before each candidate are estimated from the files (half of a file that
/// straddles it), and the candidates nearest to equal shares are chosen. Empty (no split)
/// unless the job is larger than two output files; at most one range per output file.
pub fn subcompaction_boundaries(job: &CompactionJob, max_subcompactions: usize) -> Vec<Vec<u8>> {
    let total = job.input_bytes();
    let target = job.target_file_size.max(1);
    if max_subcompactions <= 1 || total <= target.saturating_mul(2) {
        return Vec::new();
    }
    let n = usize::try_from(total / target)
        .unwrap_or(usize::MAX)
        .min(max_subcompactions);
    let files: Vec<&Arc<TableHandle>> = job.input_files().collect();
    let mut candidates: Vec<Vec<u8>> = Vec::with_capacity(files.len() * 2);
    for f in &files {
        candidates.push(f.meta.smallest_user_key().to_vec());
        candidates.push(riptide_common::key::user_key_successor(
            f.meta.largest_user_key(),
        ));
    }
    candidates.sort_unstable();
    candidates.dedup();
    // A split must leave keys on both sides.
    candidates.retain(|c| {
        c.as_slice() > job.smallest_user_key.as_slice()
            && c.as_slice() <= job.largest_user_key.as_slice()
    });
    let before = |c: &[u8]| -> u64 {
        files
            .iter()
            .map(|f| {
                if f.meta.largest_user_key() < c {
                    f.meta.file_size
                } else if f.meta.smallest_user_key() >= c {
                    0
                } else {
                    f.meta.file_size / 2
                }
            })
            .sum()
    };
    let estimates: Vec<(u64, Vec<u8>)> = candidates.into_iter().map(|c| (before(&c), c)).collect();
    let mut cuts: Vec<Vec<u8>> = Vec::new();
    let mut next = 0usize;
    let mut last_est = 0u64;
    for j in 1..n {
        let want = (u128::from(total) * j as u128 / n as u128) as u64;
        let Some((i, (est, key))) = estimates
            .iter()
            .enumerate()
            .skip(next)
            .min_by_key(|(_, (est, _))| est.abs_diff(want))
        else {
            break;
        };
        // Never leave an (estimated) empty range.
        if *est > last_est && *est < total {
            cuts.push(key.clone());
            last_est = *est;
        }
        next = i + 1;
    }
    cuts
}

/// Runs `job`: merges its inputs (applying the garbage collection of [`crate::gc`] with
/// [`CompactionJob::bottommost`]) into new tables of about
/// [`CompactionJob::target_file_size`], numbered by `alloc_number`, in up to
/// `max_subcompactions` parallel threads (see [`subcompaction_boundaries`]).
///
/// From `opts` it uses the directory, table options, cache and snapshots (its
/// `bottommost` and `target_file_size` are ignored). The output is the same set of entries
/// as a single-threaded merge, in key order; no user key spans two files. On error every
/// output is removed. Install the result with [`CompactionJob::edits`].
///
/// `alloc_number` is called from the subcompaction threads: it must not wait for a lock
/// the caller holds while calling this (do not hold the version-set lock here).
pub fn run_compaction(
    job: &CompactionJob,
    opts: &CompactionOptions<'_>,
    alloc_number: impl Fn() -> u64 + Sync,
    max_subcompactions: usize,
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
    let inputs: Vec<Arc<TableHandle>> = job.input_files().cloned().collect();
    let cuts = subcompaction_boundaries(job, max_subcompactions);
    let mut ranges: Vec<KeyRange> = Vec::with_capacity(cuts.len() + 1);
    let mut start = None;
    for c in cuts {
        ranges.push((start, Some(c.clone())));
        start = Some(c);
    }
    ranges.push((start, None));

    let results: Vec<Result<MergeResult>> = if ranges.len() == 1 {
        ranges
            .into_iter()
            .map(|(s, e)| merge_range(&inputs, s, e, &settings, &alloc_number))
            .collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = ranges
                .into_iter()
                .map(|(s, e)| {
                    let files = files_in_range(&inputs, s.as_deref(), e.as_deref());
                    let settings = &settings;
                    let alloc = &alloc_number;
                    scope.spawn(move || merge_range(&files, s, e, settings, alloc))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::new(
                            ErrorKind::Internal,
                            "a subcompaction thread panicked (a bug; please report it)",
                        ))
                    })
                })
                .collect()
        })
    };

    let subcompactions = results.len();
    let mut new_files = Vec::new();
    let mut stats = CompactionStats {
        subcompactions,
        ..CompactionStats::default()
    };
    let mut first_error = None;
    for r in results {
        match r {
            Ok(r) => {
                stats.bytes_written += r.bytes_written;
                stats.entries_in += r.gc.entries_in;
                stats.entries_out += r.gc.entries_out;
                stats.range_deleted += r.gc.range_deleted;
                stats.range_tombstones_in += r.range_tombstones_in;
                stats.range_tombstones_out += r.range_tombstones_out;
                new_files.extend(r.new_files);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        // The other ranges' finished outputs are deleted when their handles drop.
        for f in &new_files {
            f.mark_obsolete();
        }
        return Err(e.with_context(format_args!(
            "compaction of column family {} into level {}",
            job.cf, job.output_level
        )));
    }
    stats.bytes_read = job.input_bytes();
    stats.bytes_read_per_level = job
        .inputs
        .iter()
        .map(|(l, files)| (*l, files.iter().map(|f| f.meta.file_size).sum()))
        .collect();
    stats.tombstones_dropped = tombstones_dropped(&inputs, &new_files);
    stats.files_kept = job.kept_ranges.len() as u64;
    stats.duration = started.elapsed();
    Ok(CompactionOutput { new_files, stats })
}

/// A user-key range `[start, end)` of a subcompaction (`None`: unbounded).
type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The files of `inputs` holding user keys in `[start, end)`, in the same order.
fn files_in_range(
    inputs: &[Arc<TableHandle>],
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Vec<Arc<TableHandle>> {
    inputs
        .iter()
        .filter(|f| {
            start.is_none_or(|s| f.meta.largest_user_key() >= s)
                && end.is_none_or(|e| f.meta.smallest_user_key() < e)
        })
        .cloned()
        .collect()
}
