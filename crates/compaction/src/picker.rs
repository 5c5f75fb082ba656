//! Leveled compaction picking (RocksDB-style): score every level, compact the most urgent
//! one, and fall back to files dense with tombstones.
//!
//! * score(L0) = L0 files not being compacted / `l0_compaction_trigger`, or their bytes /
//!   `max_bytes_for_level_base`, or their bytes / (`l0_fraction_trigger` x the bytes of
//!   every deeper level), whichever is largest (L0 files with nothing below them score 1);
//! * score(Ln) = bytes of Ln files not being compacted / target of Ln (see
//!   [`crate::targets`]); the last level is not scored.
//!
//! The level with the highest score >= 1 that yields a job runs: for L0 every L0 file plus
//! the overlapping files of the base level (never two L0 jobs at once); for Ln one file
//! picked by [`LevelOptions::priority`] (by default the one with the fewest overlapping bytes
//! below per byte of its own, RocksDB `kMinOverlappingRatio`; or round-robin, RocksDB
//! `kRoundRobin`), widened to a clean cut at user-key boundaries,
//! plus the overlapping files of Ln+1 (then grown with more Ln files while that adds no Ln+1
//! file and stays within `max_compaction_bytes`). Files being compacted, and jobs whose key
//! range collides with a running job's output, are skipped (see [`CompactionRegistry`]).

use std::sync::Arc;

use riptide_common::CfId;

use crate::file_meta::FileMeta;
use crate::job::{CompactionJob, CompactionReason, is_bottommost, user_key_hull};
use crate::options::{CompactionPriority, LevelOptions};
use crate::registry::{CompactionRegistry, RegistryState};
use crate::table_handle::TableHandle;
use crate::targets::{LevelTargets, level_targets};
use crate::version::Version;

/// The compaction score of every level of `cf` but the last, indexed by level (see the
/// module documentation). A level is due when its score is >= 1.
pub fn compaction_scores(
    version: &Version,
    cf: CfId,
    opts: &LevelOptions,
    registry: &CompactionRegistry,
) -> Vec<f64> {
    let targets = level_targets(version, cf, opts);
    let reg = registry.lock();
    level_scores(version, cf, opts, &targets, &reg)
}

fn level_scores(
    version: &Version,
    cf: CfId,
    opts: &LevelOptions,
    targets: &LevelTargets,
    reg: &RegistryState,
) -> Vec<f64> {
    let idle = |level: usize| {
        version
            .files(cf, level)
            .iter()
            .filter(|f| !reg.is_busy(f.number()))
    };
    (0..targets.last_level())
        .map(|level| {
            if level == 0 {
                let files = idle(0).count();
                let count = files as f64 / opts.l0_compaction_trigger.max(1) as f64;
                let l0_bytes = idle(0).map(|f| f.meta.file_size).sum::<u64>() as f64;
                let bytes = l0_bytes / opts.max_bytes_for_level_base.max(1) as f64;
                count
                    .max(bytes)
                    .max(fraction_score(opts, files, l0_bytes, targets))
            } else {
                match targets.target(level) {
                    0 => 0.0,
                    t => idle(level).map(|f| f.meta.file_size).sum::<u64>() as f64 / t as f64,
                }
            }
        })
        .collect()
}

/// The L0 score from [`LevelOptions::l0_fraction_trigger`]: `l0_bytes` over the fraction of
/// the deeper levels' bytes, or 1 when L0 has files and nothing lies below (the first flush
/// of a database then moves down at once, see [`CompactionJob::is_trivial_move`]).
fn fraction_score(opts: &LevelOptions, l0_files: usize, l0_bytes: f64, t: &LevelTargets) -> f64 {
    let fraction = opts.l0_fraction_trigger;
    if !(fraction.is_finite() && fraction > 0.0) || l0_files == 0 {
        return 0.0;
    }
    let below: u64 = t.level_bytes.iter().skip(1).sum();
    if below == 0 {
        return 1.0;
    }
    l0_bytes / (fraction * below as f64)
}

/// Picks the most urgent compaction of `cf` in `version` and registers it in `registry`,
/// or `None` if nothing is due (or everything due collides with running jobs).
///
/// `version` must be the current version, taken under the lock under which the caller
/// applies version edits (and calls [`CompactionRegistry::finish`] after applying): a stale
/// version could name files a finished job already removed. Call
/// [`CompactionRegistry::finish`] with the job when it is installed or has failed.
pub fn pick_compaction(
    version: &Version,
    cf: CfId,
    opts: &LevelOptions,
    registry: &CompactionRegistry,
) -> Option<CompactionJob> {
    let targets = level_targets(version, cf, opts);
    let mut reg = registry.lock();
    let scores = level_scores(version, cf, opts, &targets, &reg);
    let mut due: Vec<(usize, f64)> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s >= 1.0)
        .collect();
    due.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (level, score) in due {
        let ctx = PickContext {
            version,
            cf,
            opts,
            targets: &targets,
        };
        let job = if level == 0 {
            pick_l0(&ctx, &reg, score)
        } else {
            pick_level(&ctx, level, &mut reg, score)
        };
        if let Some(mut job) = job {
            reg.register(&mut job);
            return Some(job);
        }
    }
    let ctx = PickContext {
        version,
        cf,
        opts,
        targets: &targets,
    };
    let mut job = pick_tombstone_density(&ctx, &reg)?;
    reg.register(&mut job);
    Some(job)
}

/// What every picking step looks at.
pub(crate) struct PickContext<'a> {
    pub(crate) version: &'a Version,
    pub(crate) cf: CfId,
    pub(crate) opts: &'a LevelOptions,
    pub(crate) targets: &'a LevelTargets,
}

impl PickContext<'_> {
    /// Builds an (unregistered) job from its inputs (empty levels are left out), computing
    /// its key range, whether it is bottommost and its output file size.
    pub(crate) fn build_job(
        &self,
        inputs: Vec<(usize, Vec<Arc<TableHandle>>)>,
        output_level: usize,
        reason: CompactionReason,
        score: f64,
    ) -> Option<CompactionJob> {
        let inputs: Vec<_> = inputs.into_iter().filter(|(_, f)| !f.is_empty()).collect();
        let (smallest, largest) = user_key_hull(inputs.iter().flat_map(|(_, f)| f.iter()))?;
        Some(CompactionJob {
            id: 0,
            cf: self.cf,
            bottommost: is_bottommost(self.version, self.cf, output_level, &smallest, &largest),
            inputs,
            output_level,
            reason,
            score,
            target_file_size: self.opts.output_file_size(
                output_level,
                self.targets.base_level,
                self.targets.level_bytes.iter().sum(),
            ),
            smallest_user_key: smallest,
            largest_user_key: largest,
            kept_ranges: Vec::new(),
        })
    }
}

/// Every L0 file plus the overlapping base-level files, unless an L0 file is being
/// compacted or a file or range collides with a running job.
fn pick_l0(ctx: &PickContext<'_>, reg: &RegistryState, score: f64) -> Option<CompactionJob> {
    let l0 = ctx.version.files(ctx.cf, 0);
    if l0.iter().any(|f| reg.is_busy(f.number())) {
        return None;
    }
    let (s, l) = user_key_hull(l0)?;
    let out = ctx.targets.base_level;
    let below = ctx.version.overlapping_files(ctx.cf, out, &s, &l);
    let inputs = vec![(0, l0.to_vec()), (out, below)];
    let job = ctx.build_job(inputs, out, CompactionReason::L0FileCount, score)?;
    (!reg.conflicts(&job)).then_some(job)
}

/// The indices `lo..=hi` of the files of a sorted level around `files[i]` such that no user
/// key has versions both inside and outside (a clean cut).
pub(crate) fn clean_cut(files: &[Arc<TableHandle>], i: usize) -> (usize, usize) {
    let (mut lo, mut hi) = (i, i);
    while let (Some(prev), Some(cur)) =
        (lo.checked_sub(1).and_then(|p| files.get(p)), files.get(lo))
        && !prev.meta.ends_before(cur.meta.smallest_user_key())
    {
        lo -= 1;
    }
    while let (Some(cur), Some(next)) = (files.get(hi), files.get(hi + 1))
        && !cur.meta.ends_before(next.meta.smallest_user_key())
    {
        hi += 1;
    }
    (lo, hi)
}

/// The job merging `files[i]` of `level` (with its clean cut) into `output_level`, with the
/// overlapping output-level files, or `None` if it collides with running jobs. When
/// `output_level == level` (the last level) the file is rewritten alone.
fn job_for_file(
    ctx: &PickContext<'_>,
    reg: &RegistryState,
    level: usize,
    i: usize,
    output_level: usize,
    reason: CompactionReason,
    score: f64,
) -> Option<CompactionJob> {
    let (version, cf) = (ctx.version, ctx.cf);
    let files = version.files(cf, level);
    let (lo, hi) = clean_cut(files, i);
    let mut upper: Vec<Arc<TableHandle>> = files.get(lo..=hi)?.to_vec();
    if upper.iter().any(|f| reg.is_busy(f.number())) {
        return None;
    }
    let mut lower = Vec::new();
    if output_level != level {
        let (s, l) = user_key_hull(&upper)?;
        lower = version.overlapping_files(cf, output_level, &s, &l);
        if lower.iter().any(|f| reg.is_busy(f.number())) {
            return None;
        }
        // Grow the upper inputs over the whole range while that adds no lower file.
        if let Some((gs, gl)) = user_key_hull(upper.iter().chain(&lower)) {
            let grown = version.overlapping_files(cf, level, &gs, &gl);
            let bytes = |v: &[Arc<TableHandle>]| v.iter().map(|f| f.meta.file_size).sum::<u64>();
            if grown.len() > upper.len()
                && grown.iter().all(|f| !reg.is_busy(f.number()))
                && bytes(&grown) + bytes(&lower) <= ctx.opts.max_compaction_bytes
                && let Some((ns, nl)) = user_key_hull(&grown)
                && version.overlapping_files(cf, output_level, &ns, &nl).len() == lower.len()
            {
                upper = grown;
            }
        }
    }
    let job = ctx.build_job(
        vec![(level, upper), (output_level, lower)],
        output_level,
        reason,
        score,
    )?;
    (!reg.conflicts(&job)).then_some(job)
}

/// A size-triggered job from level `level` >= 1: the first file, in the order of
/// [`LevelOptions::priority`], that yields a job. Advances the level's round-robin cursor
/// past the chosen inputs (only round-robin picking reads it).
fn pick_level(
    ctx: &PickContext<'_>,
    level: usize,
    reg: &mut RegistryState,
    score: f64,
) -> Option<CompactionJob> {
    let files = ctx.version.files(ctx.cf, level);
    let output_level = ctx.targets.output_level_for(level);
    let order: Vec<usize> = match ctx.opts.priority {
        CompactionPriority::RoundRobin => {
            let start = reg.cursor(ctx.cf, level).map_or(0, |c| {
                files.partition_point(|f| f.meta.smallest_user_key() <= c)
            });
            (start..files.len())
                .chain(0..start.min(files.len()))
                .collect()
        }
        CompactionPriority::MinOverlappingRatio => {
            min_overlapping_ratio_order(ctx, reg, level, output_level)
        }
    };
    for i in order {
        if files.get(i).is_none_or(|f| reg.is_busy(f.number())) {
            continue;
        }
        let reason = CompactionReason::LevelSize;
        let Some(job) = job_for_file(ctx, reg, level, i, output_level, reason, score) else {
            continue;
        };
        let last_key = job
            .inputs
            .iter()
            .find(|(l, _)| *l == level)
            .and_then(|(_, f)| user_key_hull(f))
            .map(|(_, l)| l);
        if let Some(k) = last_key {
            reg.set_cursor(ctx.cf, level, k);
        }
        return Some(job);
    }
    None
}

/// The indices of the idle files of `level`, fewest overlapping bytes in `output_level` per
/// byte of their own (tombstones weighed twice, [`compensated_size`]) first; ties in key
/// order (RocksDB `kMinOverlappingRatio`).
fn min_overlapping_ratio_order(
    ctx: &PickContext<'_>,
    reg: &RegistryState,
    level: usize,
    output_level: usize,
) -> Vec<usize> {
    let files = ctx.version.files(ctx.cf, level);
    let mut ranked: Vec<(f64, usize)> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| !reg.is_busy(f.number()))
        .map(|(i, f)| {
            let (s, l) = (f.meta.smallest_user_key(), f.meta.largest_user_key());
            let overlap: u64 = ctx
                .version
                .overlapping_files(ctx.cf, output_level, s, l)
                .iter()
                .map(|g| g.meta.file_size)
                .sum();
            (overlap as f64 / compensated_size(&f.meta), i)
        })
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, i)| i).collect()
}

/// A file's size with its tombstones counted twice (at the file's mean bytes per entry), at
/// least 1: a merge that moves tombstones down frees space below, so such files rank as if
/// they were bigger (RocksDB's compensated file size).
fn compensated_size(meta: &FileMeta) -> f64 {
    let size = meta.file_size as f64;
    let per_entry = if meta.entries == 0 {
        0.0
    } else {
        size / meta.entries as f64
    };
    (size + meta.tombstones as f64 * per_entry).max(1.0)
}

/// A tombstone-density job: the file of L1 or deeper (not being compacted) with the highest
/// tombstone ratio, at least `tombstone_ratio_trigger` and with at least
/// `tombstone_min_entries` entries, merged with the overlapping files of the next level, or
/// rewritten alone in the last level (where its tombstones can go). L0 files are left to
/// the L0 trigger: moving one down alone could put it below older overlapping L0 files.
fn pick_tombstone_density(ctx: &PickContext<'_>, reg: &RegistryState) -> Option<CompactionJob> {
    let opts = ctx.opts;
    let trigger = opts.tombstone_ratio_trigger;
    if trigger.is_nan() || trigger <= 0.0 {
        return None;
    }
    let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
    for level in 1..=ctx.targets.last_level() {
        for (i, f) in ctx.version.files(ctx.cf, level).iter().enumerate() {
            let m = &f.meta;
            if m.entries == 0
                || m.entries < opts.tombstone_min_entries
                || reg.is_busy(m.number)
                || reg.tombstone_compaction_useless(m.number)
            {
                continue;
            }
            let ratio = m.tombstones as f64 / m.entries as f64;
            if ratio >= trigger {
                candidates.push((ratio, level, i));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    candidates.into_iter().find_map(|(ratio, level, i)| {
        let out = ctx.targets.output_level_for(level);
        let reason = CompactionReason::TombstoneDensity;
        job_for_file(ctx, reg, level, i, out, reason, ratio)
    })
}
