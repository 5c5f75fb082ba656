//! The flushes and compactions running now and the last ones finished, for people:
//! [`Db::background_jobs`](crate::Db::background_jobs) (`information_schema.RIPTIDE_COMPACTIONS`
//! in MariaDB; RocksDB's `GetThreadList` and compaction event listener, MyRocks'
//! `ROCKSDB_COMPACTION_STATS`).
//!
//! A background thread registers a job when it starts it and finishes it with its outcome;
//! one mutex guards the running jobs and a ring of the last [`RECENT_JOBS`] finished ones.
//! That is two short critical sections per flush or compaction, which each write megabytes.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How many finished jobs [`BackgroundJobs`] keeps.
pub const RECENT_JOBS: usize = 100;

/// What a background job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// A frozen memtable written as tables.
    Flush,
    /// Tables of one or two levels merged into the next.
    Compaction,
}

impl JobKind {
    /// `FLUSH` or `COMPACTION`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Flush => "FLUSH",
            JobKind::Compaction => "COMPACTION",
        }
    }
}

/// Where a job is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// Running now.
    Running,
    /// Finished and installed.
    Done,
    /// Failed with this error (nothing of it was installed).
    Failed(String),
}

/// One flush or compaction, as [`Db::background_jobs`](crate::Db::background_jobs) lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobInfo {
    /// Counts up from 1 per open database.
    pub id: u64,
    /// Flush or compaction.
    pub kind: JobKind,
    /// The column family's name.
    pub cf: String,
    /// Why it runs: `frozen memtable` for a flush (the memtable filled, or a flush was
    /// asked for); for a compaction the picker's reason (`L0 file count`, `level size`,
    /// `tombstone density`, `manual`).
    pub reason: &'static str,
    /// The levels it reads (none for a flush).
    pub input_levels: Vec<usize>,
    /// The level it writes (0 for a flush into L0).
    pub output_level: usize,
    /// Input files (0 for a flush).
    pub input_files: usize,
    /// Bytes it reads: the input files, or the memtable's memory for a flush.
    pub input_bytes: u64,
    /// Bytes it wrote, once finished.
    pub output_bytes: Option<u64>,
    /// Running, done or failed.
    pub state: JobState,
    /// Time since it started.
    pub age: Duration,
    /// How long it ran, once finished.
    pub duration: Option<Duration>,
}

struct Entry {
    info: JobInfo,
    started: Instant,
}

#[derive(Default)]
struct State {
    next_id: u64,
    running: Vec<Entry>,
    recent: VecDeque<Entry>,
}

/// The running and recent jobs of a database (see the module documentation).
#[derive(Default)]
pub(crate) struct BackgroundJobs {
    state: Mutex<State>,
}

/// What a job is, when it starts (see [`BackgroundJobs::start`]).
pub(crate) struct JobStart {
    pub(crate) kind: JobKind,
    pub(crate) cf: String,
    pub(crate) reason: &'static str,
    pub(crate) input_levels: Vec<usize>,
    pub(crate) output_level: usize,
    pub(crate) input_files: usize,
    pub(crate) input_bytes: u64,
}

impl BackgroundJobs {
    /// Registers a job that starts now; returns its id for [`BackgroundJobs::finish`].
    pub(crate) fn start(&self, job: JobStart) -> u64 {
        let mut st = self.state.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.running.push(Entry {
            info: JobInfo {
                id,
                kind: job.kind,
                cf: job.cf,
                reason: job.reason,
                input_levels: job.input_levels,
                output_level: job.output_level,
                input_files: job.input_files,
                input_bytes: job.input_bytes,
                output_bytes: None,
                state: JobState::Running,
                age: Duration::ZERO,
                duration: None,
            },
            started: Instant::now(),
        });
        id
    }

    /// Ends job `id`: written `output_bytes` and installed, or failed with `error`.
    pub(crate) fn finish(&self, id: u64, outcome: std::result::Result<u64, String>) {
        let mut st = self.state.lock();
        let Some(i) = st.running.iter().position(|e| e.info.id == id) else {
            return;
        };
        let mut e = st.running.swap_remove(i);
        e.info.duration = Some(e.started.elapsed());
        match outcome {
            Ok(bytes) => {
                e.info.output_bytes = Some(bytes);
                e.info.state = JobState::Done;
            }
            Err(msg) => e.info.state = JobState::Failed(msg),
        }
        st.recent.push_back(e);
        if st.recent.len() > RECENT_JOBS {
            st.recent.pop_front();
        }
    }

    /// The running jobs (oldest first), then the finished ones (newest first).
    pub(crate) fn list(&self) -> Vec<JobInfo> {
        let st = self.state.lock();
        let now = Instant::now();
        let mut running: Vec<&Entry> = st.running.iter().collect();
        running.sort_by_key(|e| e.info.id);
        running
            .into_iter()
            .chain(st.recent.iter().rev())
            .map(|e| JobInfo {
                age: now.saturating_duration_since(e.started),
                ..e.info.clone()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(jobs: &BackgroundJobs, kind: JobKind) -> u64 {
        jobs.start(JobStart {
            kind,
            cf: "default".into(),
            reason: "level size",
            input_levels: vec![1, 2],
            output_level: 2,
            input_files: 3,
            input_bytes: 300,
        })
    }

    #[test]
    fn running_first_then_finished_newest_first_and_the_ring_is_bounded() {
        let jobs = BackgroundJobs::default();
        let a = start(&jobs, JobKind::Flush);
        let b = start(&jobs, JobKind::Compaction);
        let c = start(&jobs, JobKind::Compaction);
        jobs.finish(a, Ok(1000));
        jobs.finish(c, Err("disk full".into()));
        let l = jobs.list();
        assert_eq!(l.iter().map(|j| j.id).collect::<Vec<_>>(), vec![b, c, a]);
        assert_eq!(l[0].state, JobState::Running);
        assert_eq!(l[0].duration, None);
        assert_eq!(l[1].state, JobState::Failed("disk full".into()));
        assert_eq!(
            (l[2].state.clone(), l[2].output_bytes),
            (JobState::Done, Some(1000))
        );
        assert!(l[2].duration.is_some());
        // Finishing an unknown id changes nothing.
        jobs.finish(999, Ok(1));
        assert_eq!(jobs.list().len(), 3);
        for _ in 0..RECENT_JOBS + 5 {
            let id = start(&jobs, JobKind::Flush);
            jobs.finish(id, Ok(1));
        }
        let l = jobs.list();
        assert_eq!(l.len(), 1 + RECENT_JOBS);
        assert_eq!(l[0].id, b);
    }
}
