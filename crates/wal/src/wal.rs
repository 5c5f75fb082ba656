//! [`Wal`]: open with replay, append, sync, rotate, remove obsolete segments, close.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use riptide_common::fs::FsRef;
use riptide_common::{Error, IoResultExt, Result};

use crate::options::{SyncMode, WalOptions};
use crate::replay::{ReplayReport, Replayed, replay};
use crate::segment::create_segment;
use crate::syncer::Syncer;
use crate::writer::{WalPosition, WalStats, Writer};

/// A write-ahead log: a directory of numbered segment files, appended to one at a time.
///
/// `Send + Sync`; every method takes `&self`. Appends are serialized by an internal mutex
/// (normally one group-commit leader appends at a time, see [`crate::GroupCommit`]).
/// Dropping a `Wal` closes it (errors are logged); call [`Wal::close`] to see them.
pub struct Wal {
    writer: Arc<Writer>,
    syncer: Mutex<Option<Syncer>>,
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("dir", &self.writer.dir())
            .field("current_segment", &self.current_segment())
            .finish_non_exhaustive()
    }
}

impl Wal {
    /// Replays every segment file in `dir` numbered `>= min_segment`, in order, calling
    /// `f(segment_number, payload)` for each intact record and applying
    /// `opts.recovery_mode` to damage; then starts a new empty segment for writing,
    /// numbered `max(existing, min_segment - 1) + 1`. Creates `dir` if missing.
    ///
    /// An error from `f` aborts the open with that error, with the segment and offset
    /// added to its context. When `open` fails, `f` may already have seen some records;
    /// the caller discards whatever it built from them.
    pub fn open(
        dir: &Path,
        opts: WalOptions,
        min_segment: u64,
        f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<(Wal, ReplayReport)> {
        Self::open_in(riptide_common::fs::real(), dir, opts, min_segment, f)
    }

    /// [`Wal::open`] on the file system `fs`: every file operation of this WAL (replay,
    /// appends, syncs, rotations, removals) goes through it.
    pub fn open_in(
        fs: FsRef,
        dir: &Path,
        opts: WalOptions,
        min_segment: u64,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<(Wal, ReplayReport)> {
        check_interval(opts.sync_mode)?;
        fs.create_dir_all(dir).at("create WAL directory", dir)?;
        let Replayed {
            report,
            next_segment,
        } = replay(&*fs, dir, opts.recovery_mode, min_segment, &mut f)?;
        let (file, path) = create_segment(&*fs, dir, next_segment)?;
        let writer = Arc::new(Writer::new(
            fs,
            dir.to_path_buf(),
            &opts,
            next_segment,
            file,
            path,
        ));
        let syncer = match opts.sync_mode {
            SyncMode::Interval(period) => Some(Syncer::start(Arc::clone(&writer), period)?),
            SyncMode::None | SyncMode::Full => None,
        };
        Ok((
            Wal {
                writer,
                syncer: Mutex::new(syncer),
            },
            report,
        ))
    }

    /// Appends one record holding `payload` with a single `write()` (no userspace
    /// buffering: a process crash loses nothing already appended). With
    /// [`SyncMode::Full`] it is `fdatasync`ed before this returns.
    ///
    /// A failed write or sync returns `ErrorKind::Io` and makes the WAL read-only: every
    /// later append, sync and rotate returns `ErrorKind::Closed`.
    pub fn append(&self, payload: &[u8]) -> Result<()> {
        self.writer.append(payload)
    }

    /// Appends one record per payload with a single `write()` and, in [`SyncMode::Full`]
    /// with `sync`, one `fdatasync` for them all (records that must stay apart, such as
    /// two-phase-commit markers, written as one group). Without `sync` they are not synced
    /// even in full mode: the next synced append, [`Wal::sync`] or rotation makes them
    /// durable (a commit whose durability another log already holds: MariaDB's binary log
    /// after two-phase commit). Nothing is written if a payload is too large. Errors as
    /// [`Wal::append`].
    pub fn append_all(&self, payloads: &[&[u8]], sync: bool) -> Result<()> {
        self.writer.append_all(payloads, sync)
    }

    /// Makes every record appended so far durable (`fdatasync` of the current segment;
    /// earlier segments were fsynced when rotated).
    pub fn sync(&self) -> Result<()> {
        self.writer.sync()
    }

    /// Fsyncs and closes the current segment, creates the next one (and fsyncs the
    /// directory), and returns its number.
    pub fn rotate(&self) -> Result<u64> {
        self.writer.rotate()
    }

    /// Changes the sync mode while the WAL is open: later appends follow `mode`, and the
    /// background sync thread is started or stopped to match. Switching to
    /// [`SyncMode::Full`] also syncs what was appended before, so once this returns every
    /// record so far is durable as well. How far ahead segments are preallocated stays what
    /// the WAL was opened with. `InvalidArgument` for an interval of zero; `Io` if the
    /// background thread cannot be started (the WAL then syncs no more in the background
    /// than before: the old mode's thread is already stopped) or the sync fails.
    pub fn set_sync_mode(&self, mode: SyncMode) -> Result<()> {
        check_interval(mode)?;
        let mut syncer = self.syncer.lock();
        if let Some(mut old) = syncer.take() {
            old.stop();
        }
        self.writer.set_sync_every_append(mode == SyncMode::Full);
        match mode {
            SyncMode::Full => self.writer.sync()?,
            SyncMode::Interval(period) => {
                *syncer = Some(Syncer::start(Arc::clone(&self.writer), period)?);
            }
            SyncMode::None => {}
        }
        Ok(())
    }

    /// Number of the segment being appended to.
    pub fn current_segment(&self) -> u64 {
        self.writer.current_segment()
    }

    /// The current segment and the byte length of its records so far (see
    /// [`WalPosition`]). Taken while no append can run (the caller holds whatever
    /// serializes its appends), it is the exact end of what was logged until then, at a
    /// record boundary: what an online backup copies.
    pub fn position(&self) -> WalPosition {
        self.writer.position()
    }

    /// Deletes the segment files numbered below `n` (lowest first), never the current one,
    /// fsyncs the directory, and returns how many were deleted. Files set aside as
    /// `*.log.discarded` are left alone. Refused with `ErrorKind::Closed` after `close` or
    /// a write failure.
    pub fn remove_segments_below(&self, n: u64) -> Result<usize> {
        self.writer.remove_segments_below(n)
    }

    /// Counters since open.
    pub fn stats(&self) -> WalStats {
        self.writer.stats()
    }

    /// [`WalStats::bytes_written`] alone: one relaxed atomic load, no lock, for hot paths.
    pub fn bytes_written(&self) -> u64 {
        self.writer.bytes_written()
    }

    /// The WAL directory.
    pub fn dir(&self) -> &Path {
        self.writer.dir()
    }

    /// Syncs and closes the current segment and stops the background sync thread. Later
    /// appends, syncs and rotations return `ErrorKind::Closed`. Closing twice is a no-op.
    pub fn close(&self) -> Result<()> {
        let res = self.writer.close();
        if let Some(mut syncer) = self.syncer.lock().take() {
            syncer.stop();
        }
        res
    }
}

/// `InvalidArgument` for [`SyncMode::Interval`] with a zero period.
fn check_interval(mode: SyncMode) -> Result<()> {
    if let SyncMode::Interval(d) = mode
        && d.is_zero()
    {
        return Err(Error::invalid_argument(
            "SyncMode::Interval needs a non-zero period (use SyncMode::Full to sync every append)",
        ));
    }
    Ok(())
}

impl Drop for Wal {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            log::error!("closing WAL {} on drop: {e}", self.dir().display());
        }
    }
}
