//! Manual compaction (`compact_range`): pushing everything overlapping a user-key range (or
//! everything) down to the last level, one level at a time.
//!
//! The caller drives a [`ManualCompaction`]:
//!
//! ```text
//! let mut manual = ManualCompaction::new(cf, range);
//! loop {
//!     // under the version-set lock:
//!     match manual.next_job(&versions.current(), &level_options, &registry) {
//!         ManualStep::Job(job) => { run it, apply job.edits(&output), registry.finish(&job) }
//!         ManualStep::Wait => { wait until some running compaction finishes, then retry }
//!         ManualStep::Done => break,
//!     }
//! }
//! ```
//!
//! Each step compacts one level: L0 into the base level (every L0 file overlapping the
//! range, widened to every L0 file overlapping those, so no older L0 version stays above a
//! newer one), then the base level into the next, and so on; each step's job covers every
//! file of its level overlapping the range (widened to a clean cut) plus the overlapping
//! files of the next level, and is registered like an automatic job. A step must be applied
//! before the next one is asked for (until then `next_job` says `Wait`). A last step rewrites,
//! alone, the last-level files in the range that existed when the manual compaction started
//! and that no earlier step merged (RocksDB's `BottommostLevelCompaction::kForceOptimized`):
//! they may hold tombstones, range tombstones and versions kept for snapshots since
//! released, which only a bottommost rewrite drops. If a step fails,
//! finish its job in the registry and drop the `ManualCompaction` (start a new one to
//! retry). Data written after the manual compaction started may stay above.

use riptide_common::CfId;

use crate::job::{CompactionJob, CompactionReason, user_key_hull};
use crate::options::LevelOptions;
use crate::picker::{PickContext, clean_cut};
use crate::registry::CompactionRegistry;
use crate::targets::level_targets;
use crate::version::Version;

/// What [`ManualCompaction::next_job`] says to do next.
#[derive(Debug)]
pub enum ManualStep {
    /// Run this (registered) job, apply its edits, then finish it in the registry.
    Job(CompactionJob),
    /// The next step collides with a running compaction: retry after one finishes.
    Wait,
    /// Everything in the range has reached the last level.
    Done,
}

/// A manual compaction in progress; see the module documentation.
#[derive(Debug, Clone)]
pub struct ManualCompaction {
    cf: CfId,
    range: Option<(Vec<u8>, Vec<u8>)>,
    level: usize,
    /// Inputs of the last job handed out; until they are gone from the version (the job
    /// was applied) the next step waits.
    pending: Vec<u64>,
    /// The largest file number of the column family when the first step was asked for:
    /// files above it were written since (by this manual compaction or others).
    existing_up_to: Option<u64>,
    /// True once the last-level rewrite was handed out (or found unnecessary).
    bottom_done: bool,
}

impl ManualCompaction {
    /// A manual compaction of the user keys `[begin, end]` (inclusive) of `cf`, or of every
    /// key with `None`.
    pub fn new(cf: CfId, range: Option<(&[u8], &[u8])>) -> Self {
        ManualCompaction {
            cf,
            range: range.map(|(b, e)| (b.to_vec(), e.to_vec())),
            level: 0,
            pending: Vec::new(),
            existing_up_to: None,
            bottom_done: false,
        }
    }

    /// The level the next step compacts from.
    pub fn level(&self) -> usize {
        self.level
    }

    /// True if `f` lies (partly) in the range.
    fn in_range(&self, f: &crate::table_handle::TableHandle) -> bool {
        self.range
            .as_ref()
            .is_none_or(|(b, e)| f.meta.overlaps_user_range(b, e))
    }

    /// The next step, registered in `registry` if it is a job. `version` must be current
    /// (see [`crate::pick_compaction`]).
    pub fn next_job(
        &mut self,
        version: &Version,
        opts: &LevelOptions,
        registry: &CompactionRegistry,
    ) -> ManualStep {
        let targets = level_targets(version, self.cf, opts);
        let last = targets.last_level();
        let cf = self.cf;
        if self
            .pending
            .iter()
            .any(|&n| version.level_of(cf, n).is_some())
        {
            return ManualStep::Wait;
        }
        self.pending.clear();
        let existing_up_to = *self.existing_up_to.get_or_insert_with(|| {
            version
                .levels(cf)
                .iter()
                .flatten()
                .map(|f| f.number())
                .max()
                .unwrap_or(0)
        });
        while self.level < last {
            let level = self.level;
            let files = version.files(cf, level);
            let upper: Vec<_> = if level == 0 {
                // Every L0 file overlapping the range, then every one overlapping those.
                let mut picked: Vec<_> =
                    files.iter().filter(|f| self.in_range(f)).cloned().collect();
                while let Some((s, l)) = user_key_hull(&picked) {
                    let wider = version.overlapping_files(cf, 0, &s, &l);
                    if wider.len() == picked.len() {
                        break;
                    }
                    picked = wider;
                }
                picked
            } else {
                let hit: Vec<usize> = (0..files.len())
                    .filter(|&i| files.get(i).is_some_and(|f| self.in_range(f)))
                    .collect();
                match (hit.first(), hit.last()) {
                    (Some(&a), Some(&b)) => {
                        let (lo, _) = clean_cut(files, a);
                        let (_, hi) = clean_cut(files, b);
                        files.get(lo..=hi).map(<[_]>::to_vec).unwrap_or_default()
                    }
                    _ => Vec::new(),
                }
            };
            let output_level = targets.output_level_for(level);
            if upper.is_empty() {
                self.level = if level == 0 {
                    targets.base_level
                } else {
                    level + 1
                };
                continue;
            }
            let Some((s, l)) = user_key_hull(&upper) else {
                return ManualStep::Wait;
            };
            let lower = version.overlapping_files(cf, output_level, &s, &l);
            let inputs = vec![(level, upper), (output_level, lower)];
            let ctx = PickContext {
                version,
                cf,
                opts,
                targets: &targets,
            };
            let reason = CompactionReason::Manual;
            let Some(mut job) = ctx.build_job(inputs, output_level, reason, 0.0) else {
                return ManualStep::Wait;
            };
            let mut reg = registry.lock();
            if reg.conflicts(&job) {
                return ManualStep::Wait;
            }
            reg.register(&mut job);
            self.level = output_level;
            self.pending = job.input_files().map(|f| f.number()).collect();
            return ManualStep::Job(job);
        }
        if !self.bottom_done {
            let files = version.files(cf, last);
            let old: Vec<usize> = (0..files.len())
                .filter(|&i| {
                    files
                        .get(i)
                        .is_some_and(|f| f.number() <= existing_up_to && self.in_range(f))
                })
                .collect();
            let (Some(&a), Some(&b)) = (old.first(), old.last()) else {
                self.bottom_done = true;
                return ManualStep::Done;
            };
            let (lo, _) = clean_cut(files, a);
            let (_, hi) = clean_cut(files, b);
            let upper = files.get(lo..=hi).map(<[_]>::to_vec).unwrap_or_default();
            let ctx = PickContext {
                version,
                cf,
                opts,
                targets: &targets,
            };
            let reason = CompactionReason::Manual;
            let Some(mut job) = ctx.build_job(vec![(last, upper)], last, reason, 0.0) else {
                self.bottom_done = true;
                return ManualStep::Done;
            };
            let mut reg = registry.lock();
            if reg.conflicts(&job) {
                return ManualStep::Wait;
            }
            reg.register(&mut job);
            self.bottom_done = true;
            self.pending = job.input_files().map(|f| f.number()).collect();
            return ManualStep::Job(job);
        }
        ManualStep::Done
    }
}
