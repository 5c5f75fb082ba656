//! The changes of a table made while one of its indexes is built online (`ALTER TABLE ...
//! ADD INDEX, ALGORITHM=INPLACE, LOCK=NONE` in the MariaDB plugin).
//!
//! The build reads the rows at one snapshot; writers go on meanwhile with the table's old
//! definition, which does not have the new index. Rather than have every writer compute
//! the new index's keys (only the caller can encode a key), the table records the primary
//! key of every row a writer inserts, updates or deletes while the capture is on. When the
//! build ends (the caller's writers are kept out then: MariaDB's exclusive metadata lock
//! for the commit of an in-place ALTER), the caller reads each such row twice, at the
//! build's snapshot and as it is now, and the build writes the difference into the new
//! index ([`crate::IndexBuild::apply_change`]). InnoDB's online ALTER keeps a log of the
//! changed rows in the same way (`row_log`); this one keeps their primary keys only.
//!
//! A row changed by a transaction that later rolled back is recorded too: its two reads are
//! equal, and nothing is written for it. The keys are kept in memory, at most
//! [`CAPTURE_MAX_BYTES`]; beyond that the capture stops recording and the build fails when
//! it asks for the rows (as InnoDB's `innodb_online_alter_log_max_size`), leaving the table
//! as it was.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

/// At most this many bytes of primary keys (plus [`KEY_OVERHEAD`] each) are recorded by one
/// capture: InnoDB's default `innodb_online_alter_log_max_size`.
pub const CAPTURE_MAX_BYTES: usize = 128 << 20;

/// What one recorded key costs besides its bytes (the set's slot and the key's heap block),
/// counted against [`CAPTURE_MAX_BYTES`].
const KEY_OVERHEAD: usize = 48;

/// The primary keys of the rows changed while a capture is on.
#[derive(Debug, Default)]
struct Recorded {
    keys: HashSet<Vec<u8>>,
    bytes: usize,
    /// Set once the keys outgrew [`CAPTURE_MAX_BYTES`]: recording stopped.
    overflowed: bool,
}

/// A table's change capture: off, or recording changed primary keys (see the module
/// documentation). Checking whether it is on costs one atomic load per write.
#[derive(Debug, Default)]
pub(crate) struct ChangeCapture {
    on: AtomicBool,
    recorded: Mutex<Option<Recorded>>,
}

/// Why [`ChangeCapture::take`] has no keys to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaptureError {
    /// The capture was not started.
    NotStarted,
    /// More keys changed than [`CAPTURE_MAX_BYTES`] allows; they were not all recorded.
    Overflowed {
        /// Keys recorded before the capture stopped.
        keys: usize,
    },
}

impl ChangeCapture {
    /// Starts recording (a capture already on starts over: one build at a time per table).
    pub(crate) fn start(&self) {
        *self.recorded.lock() = Some(Recorded::default());
        self.on.store(true, Ordering::SeqCst);
    }

    /// Whether writers' changes are being recorded.
    pub(crate) fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    /// Records that the row with primary key `pk` (a hidden row id for a table without
    /// one) changed, if the capture is on.
    pub(crate) fn note(&self, pk: &[u8]) {
        if !self.is_on() {
            return;
        }
        let mut guard = self.recorded.lock();
        let Some(rec) = guard.as_mut() else {
            return;
        };
        if rec.overflowed || rec.keys.contains(pk) {
            return;
        }
        let cost = pk.len() + KEY_OVERHEAD;
        if rec.bytes + cost > CAPTURE_MAX_BYTES {
            rec.overflowed = true;
            return;
        }
        rec.bytes += cost;
        rec.keys.insert(pk.to_vec());
    }

    /// The keys recorded so far, in ascending order, leaving the capture on with none.
    pub(crate) fn take(&self) -> Result<Vec<Vec<u8>>, CaptureError> {
        let mut guard = self.recorded.lock();
        let rec = guard.as_mut().ok_or(CaptureError::NotStarted)?;
        if rec.overflowed {
            return Err(CaptureError::Overflowed {
                keys: rec.keys.len(),
            });
        }
        let mut keys: Vec<Vec<u8>> = std::mem::take(&mut rec.keys).into_iter().collect();
        rec.bytes = 0;
        keys.sort_unstable();
        Ok(keys)
    }

    /// Stops recording and forgets what was recorded.
    pub(crate) fn stop(&self) {
        self.on.store(false, Ordering::SeqCst);
        *self.recorded.lock() = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_on_and_each_key_once() {
        let c = ChangeCapture::default();
        c.note(b"before");
        assert_eq!(c.take(), Err(CaptureError::NotStarted));
        c.start();
        c.note(b"b");
        c.note(b"a");
        c.note(b"b");
        assert_eq!(c.take(), Ok(vec![b"a".to_vec(), b"b".to_vec()]));
        assert_eq!(c.take(), Ok(vec![]));
        c.stop();
        c.note(b"after");
        assert!(!c.is_on());
        assert_eq!(c.take(), Err(CaptureError::NotStarted));
    }

    #[test]
    fn overflow_stops_recording_and_fails_the_take() {
        let c = ChangeCapture::default();
        c.start();
        let big = vec![7u8; CAPTURE_MAX_BYTES / 2];
        c.note(&big);
        let mut other = big.clone();
        other[0] = 8;
        c.note(&other);
        c.note(b"small");
        assert_eq!(c.take(), Err(CaptureError::Overflowed { keys: 1 }));
        c.start();
        c.note(b"small");
        assert_eq!(c.take(), Ok(vec![b"small".to_vec()]));
    }
}
