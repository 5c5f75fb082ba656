//! The consistent cut a checkpoint copies: one sequence number, the end of the WAL at that
//! number and the table files and manifest state of that moment, captured while writers are
//! held off for as short as possible; and the pin that keeps the cut's WAL segments on disk
//! until they are copied.
//!
//! Why one moment is enough: under `write_lock` no write group is being logged or applied
//! (the group-commit leader holds it from its WAL append to the publication of its sequence
//! numbers; memtable switches, column-family changes and ingests hold it too), and under the
//! version-set lock no flush or compaction is installing. The manifest state is then the one
//! on disk, and the WAL's records up to [`WalPosition`] are exactly the writes up to the
//! published sequence number. Recovery from that state and that WAL prefix is what a crash at
//! that moment would recover, without losing what was not synced yet (the copy reads the
//! WAL's bytes, not the disk's durable state).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use riptide_common::{Error, Result, SeqNo};
use riptide_compaction::{CfState, ManifestState, Version};
use riptide_wal::WalPosition;

use crate::db::DbInner;

/// How many times [`capture`] lets go of the writers when a flush or compaction is
/// installing (writing a manifest, with an fsync) before it waits for the install while
/// holding them off.
const VERSION_LOCK_TRIES: usize = 64;

/// What [`capture`] took.
pub(crate) struct Cut {
    /// The last sequence number published: every write at or below it is in the cut,
    /// nothing above it.
    pub(crate) seqno: SeqNo,
    /// The end of the WAL's records at `seqno` (a record boundary).
    pub(crate) wal_end: WalPosition,
    /// The lowest WAL segment the cut needs (the manifest state's smallest log number).
    pub(crate) min_log: u64,
    /// The version of `state`: holding it keeps its table files on disk (a table file is
    /// deleted only when the last `Arc` of its handle drops).
    pub(crate) version: Arc<Version>,
    /// The manifest state of `version`, without its files (each level empty):
    /// [`Cut::manifest_state`] adds them from `version`, outside the locks.
    skeleton: ManifestState,
    /// How long writers were held off.
    pub(crate) stall: Duration,
}

impl Cut {
    /// The manifest a database holding exactly the cut starts from: the state of that
    /// moment, with `seqno` as its last sequence number (so the opened checkpoint's
    /// `latest_seqno` is the cut's even when the WAL holds no write since the last flush).
    pub(crate) fn manifest_state(&self) -> Result<ManifestState> {
        let mut state = self.skeleton.clone();
        state.last_seqno = state.last_seqno.max(self.seqno);
        for cf in &mut state.column_families {
            let levels = self.version.levels(cf.id);
            if levels.len() != cf.levels.len() {
                return Err(Error::new(
                    riptide_common::ErrorKind::Internal,
                    format!(
                        "column family {} has {} levels in the manifest state and {} in its \
                         version",
                        cf.id,
                        cf.levels.len(),
                        levels.len()
                    ),
                ));
            }
            for (files, handles) in cf.levels.iter_mut().zip(levels) {
                files.extend(handles.iter().map(|h| h.meta.clone()));
            }
        }
        state.validate().map_err(|m| {
            Error::new(
                riptide_common::ErrorKind::Internal,
                format!("the checkpoint's manifest state is invalid: {m}"),
            )
        })?;
        Ok(state)
    }
}

/// Takes the cut of `db` and pins its WAL segments. Writers wait only while the sequence
/// number, the WAL position, the version and the small part of the manifest state that is
/// not in the version (column families, log numbers, counters) are read: no I/O, nothing
/// proportional to the data.
///
/// If a flush or compaction is installing a version (it holds the version-set lock while
/// it writes and fsyncs the manifest), the writers are let go while it finishes, and the
/// capture starts over; after [`VERSION_LOCK_TRIES`] rounds it waits holding them off.
pub(crate) fn capture(db: &DbInner) -> Result<(Cut, WalPin<'_>)> {
    let mut tries = 0;
    loop {
        tries += 1;
        let writers = db.write_lock.lock();
        let held = Instant::now();
        let versions = if tries < VERSION_LOCK_TRIES {
            db.versions.try_lock()
        } else {
            Some(db.versions.lock())
        };
        let Some(vs) = versions else {
            drop(writers);
            // Wait for the install without holding writers off, then try again.
            drop(db.versions.lock());
            continue;
        };
        db.check_open()?;
        let seqno = db.last_seqno.load(Ordering::Acquire);
        let wal_end = db.wal.position();
        let version = vs.current();
        let skeleton = skeleton_of(vs.state());
        let min_log = skeleton.min_log_number().unwrap_or(wal_end.segment);
        // Under the version-set lock: a flush that installs after this sees the pin before
        // it removes segments (see `WalPins`).
        let pin = db.wal_pins.pin(min_log);
        drop(vs);
        drop(writers);
        let stall = held.elapsed();
        return Ok((
            Cut {
                seqno,
                wal_end,
                min_log,
                version,
                skeleton,
                stall,
            },
            pin,
        ));
    }
}

/// `state` without its files: what a checkpoint needs of it beyond the version.
fn skeleton_of(state: &ManifestState) -> ManifestState {
    ManifestState {
        next_file_number: state.next_file_number,
        last_seqno: state.last_seqno,
        next_cf_id: state.next_cf_id,
        column_families: state
            .column_families
            .iter()
            .map(|c| CfState {
                id: c.id,
                name: c.name.clone(),
                log_number: c.log_number,
                levels: vec![Vec::new(); c.levels.len()],
                compact_cursors: c.compact_cursors.clone(),
            })
            .collect(),
    }
}

/// WAL segments that checkpoints in progress still have to copy: removal of obsolete
/// segments (after a flush) stops below the lowest one pinned.
///
/// Pins are taken under the version-set lock, and a flush reads the log number it removes
/// segments below under that lock too, before it asks [`WalPins::limit`]: either the pin
/// was taken first (the flush sees it) or the flush installed first (the cut's log number
/// is then already the new one, and the segments it removes are below it). Log numbers
/// never go down, so an older removal never reaches a pinned segment either.
#[derive(Debug, Default)]
pub(crate) struct WalPins {
    /// Pinned segment -> how many checkpoints pin it.
    pinned: Mutex<BTreeMap<u64, usize>>,
}

impl WalPins {
    /// Keeps segments `>= segment` until the returned pin drops.
    pub(crate) fn pin(&self, segment: u64) -> WalPin<'_> {
        *self.pinned.lock().entry(segment).or_insert(0) += 1;
        WalPin {
            pins: self,
            segment,
        }
    }

    /// How far removal may go when segments below `n` are obsolete: `n`, or the lowest
    /// pinned segment if that is lower. Segments kept for a pin are removed by a later
    /// removal (the next flush, or the next open).
    pub(crate) fn limit(&self, n: u64) -> u64 {
        self.pinned
            .lock()
            .keys()
            .next()
            .map_or(n, |&lowest| n.min(lowest))
    }
}

/// A pin of [`WalPins`]: segments from `segment` on stay while it lives.
#[derive(Debug)]
pub(crate) struct WalPin<'a> {
    pins: &'a WalPins,
    segment: u64,
}

impl Drop for WalPin<'_> {
    fn drop(&mut self) {
        let mut pinned = self.pins.pinned.lock();
        if let Some(count) = pinned.get_mut(&self.segment) {
            *count -= 1;
            if *count == 0 {
                pinned.remove(&self.segment);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WalPins;

    #[test]
    fn removal_stops_below_the_lowest_pin_while_it_lives() {
        let pins = WalPins::default();
        assert_eq!(pins.limit(9), 9);
        let a = pins.pin(5);
        let b = pins.pin(7);
        let c = pins.pin(5);
        assert_eq!(pins.limit(9), 5);
        assert_eq!(pins.limit(3), 3);
        drop(a);
        assert_eq!(pins.limit(9), 5, "a second pin of 5 still holds it");
        drop(c);
        assert_eq!(pins.limit(9), 7);
        drop(b);
        assert_eq!(pins.limit(9), 9);
    }
}
