//! [`CompactionRegistry`]: the compactions running right now, shared by every compaction
//! thread, so that concurrent jobs never touch the same files or write overlapping key
//! ranges into the same level.

use std::collections::{HashMap, HashSet};

use parking_lot::{Mutex, MutexGuard};
use riptide_common::CfId;

use crate::compact::CompactionOutput;
use crate::job::{CompactionJob, CompactionReason};

/// Most file numbers remembered as "tombstone compaction gained nothing"; the set is
/// cleared when it grows past this (it is only a hint).
const MAX_NO_GAIN_FILES: usize = 4096;

/// A job between its pick and its [`CompactionRegistry::finish`].
#[derive(Debug)]
struct RunningJob {
    id: u64,
    cf: CfId,
    inputs: Vec<u64>,
    output_level: usize,
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

/// The registry's state, behind its mutex.
#[derive(Debug, Default)]
pub(crate) struct RegistryState {
    next_id: u64,
    running: Vec<RunningJob>,
    busy: HashSet<u64>,
    cursors: HashMap<(CfId, usize), Vec<u8>>,
    no_tombstone_gain: HashSet<u64>,
}

impl RegistryState {
    /// True if file `number` is an input of a running job.
    pub(crate) fn is_busy(&self, number: u64) -> bool {
        self.busy.contains(&number)
    }

    /// True if a running job of `cf` writes to `level` in a range overlapping
    /// `[smallest, largest]` (user keys, inclusive).
    pub(crate) fn output_overlaps(
        &self,
        cf: CfId,
        level: usize,
        smallest: &[u8],
        largest: &[u8],
    ) -> bool {
        self.running.iter().any(|r| {
            r.cf == cf
                && r.output_level == level
                && r.smallest.as_slice() <= largest
                && smallest <= r.largest.as_slice()
        })
    }

    /// True if `job` may not run next to the running jobs: one of its inputs is being
    /// compacted, it writes into a key range another job writes at the same level, or it
    /// reads a level in a range another job is writing to.
    pub(crate) fn conflicts(&self, job: &CompactionJob) -> bool {
        if job.input_files().any(|f| self.is_busy(f.number())) {
            return true;
        }
        if self.output_overlaps(
            job.cf,
            job.output_level,
            &job.smallest_user_key,
            &job.largest_user_key,
        ) {
            return true;
        }
        job.inputs.iter().any(|(level, files)| {
            crate::job::user_key_hull(files)
                .is_some_and(|(s, l)| self.output_overlaps(job.cf, *level, &s, &l))
        })
    }

    /// Records `job` as running and gives it its id.
    pub(crate) fn register(&mut self, job: &mut CompactionJob) {
        self.next_id += 1;
        job.id = self.next_id;
        let inputs: Vec<u64> = job.input_files().map(|f| f.number()).collect();
        self.busy.extend(inputs.iter().copied());
        self.running.push(RunningJob {
            id: job.id,
            cf: job.cf,
            inputs,
            output_level: job.output_level,
            smallest: job.smallest_user_key.clone(),
            largest: job.largest_user_key.clone(),
        });
    }

    /// The round-robin cursor of `(cf, level)`: the largest user key of the last file picked
    /// there by size.
    pub(crate) fn cursor(&self, cf: CfId, level: usize) -> Option<&[u8]> {
        self.cursors.get(&(cf, level)).map(Vec::as_slice)
    }

    /// Moves the round-robin cursor of `(cf, level)` to `key`.
    pub(crate) fn set_cursor(&mut self, cf: CfId, level: usize, key: Vec<u8>) {
        self.cursors.insert((cf, level), key);
    }

    /// True if a tombstone-density compaction of file `number` already gained nothing.
    pub(crate) fn tombstone_compaction_useless(&self, number: u64) -> bool {
        self.no_tombstone_gain.contains(&number)
    }
}

/// The compactions running now, shared (`Arc<CompactionRegistry>` or a field of the
/// database) by every compaction thread.
///
/// Picking a job ([`crate::pick_compaction`], [`crate::ManualCompaction::next_job`])
/// registers it under the registry's lock, so two threads never pick the same files: its
/// input files are marked as being compacted and its output key range is reserved at the
/// output level. [`Self::finish`] releases both; call it once the job's edits are applied
/// (or once it failed). The registry also remembers each level's round-robin cursor.
#[derive(Debug, Default)]
pub struct CompactionRegistry {
    state: Mutex<RegistryState>,
}

impl CompactionRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Locks the state (pickers hold it while choosing and registering).
    pub(crate) fn lock(&self) -> MutexGuard<'_, RegistryState> {
        self.state.lock()
    }

    /// Releases `job`: its inputs are no longer being compacted and its output range is
    /// free. Call it after the job's edits were applied, or after it failed. Unknown jobs
    /// are ignored.
    pub fn finish(&self, job: &CompactionJob) {
        let mut s = self.state.lock();
        let Some(pos) = s.running.iter().position(|r| r.id == job.id) else {
            return;
        };
        let r = s.running.swap_remove(pos);
        for n in &r.inputs {
            s.busy.remove(n);
        }
    }

    /// Like [`Self::finish`] for a job that succeeded with `output`. When a
    /// tombstone-density job dropped no tombstone (snapshots still need them), its output
    /// files are not picked for their tombstones again, which would only rewrite them in a
    /// loop.
    pub fn finish_with_output(&self, job: &CompactionJob, output: &CompactionOutput) {
        if job.reason == CompactionReason::TombstoneDensity && output.stats.tombstones_dropped == 0
        {
            let mut s = self.state.lock();
            if s.no_tombstone_gain.len() >= MAX_NO_GAIN_FILES {
                s.no_tombstone_gain.clear();
            }
            s.no_tombstone_gain
                .extend(output.new_files.iter().map(|f| f.number()));
        }
        self.finish(job);
    }

    /// True if a running job of `cf` writes to `level` in a range overlapping
    /// `[smallest, largest]` (user keys, inclusive): a file added there in that range could
    /// overlap the job's output.
    pub fn output_overlaps(&self, cf: CfId, level: usize, smallest: &[u8], largest: &[u8]) -> bool {
        self.lock().output_overlaps(cf, level, smallest, largest)
    }

    /// True if file `number` is an input of a running job.
    pub fn is_being_compacted(&self, number: u64) -> bool {
        self.state.lock().is_busy(number)
    }

    /// Number of running jobs.
    pub fn running_jobs(&self) -> usize {
        self.state.lock().running.len()
    }

    /// Sets the round-robin cursor of `level` of `cf` (at open, from the manifest).
    pub fn seed_round_robin_cursor(&self, cf: CfId, level: usize, key: Vec<u8>) {
        self.state.lock().set_cursor(cf, level, key);
    }

    /// The round-robin cursor of `level` of `cf`: the largest user key of the last file
    /// picked there by size (the next pick starts after it).
    pub fn round_robin_cursor(&self, cf: CfId, level: usize) -> Option<Vec<u8>> {
        self.state.lock().cursor(cf, level).map(<[u8]>::to_vec)
    }
}
