//! How the WAL syncs its writes and how it treats damage found during replay.

use std::time::Duration;

/// When appended records are made durable with `fdatasync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Never sync, except when a segment is rotated or the WAL is closed. A process crash
    /// loses nothing already appended (every record is one `write()`), a power loss may.
    None,
    /// A background thread syncs the current segment every period, if anything was written
    /// since the last sync. A power loss may lose up to about one period of writes.
    Interval(Duration),
    /// Every [`crate::Wal::append`] syncs before it returns (the default).
    #[default]
    Full,
}

/// What [`crate::Wal::open`] does when replay finds a damaged record or segment header.
///
/// `FORMAT.md` in this crate describes the modes in full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// A torn tail (the last record of the last segment cut short or failing its checksum,
    /// with no intact record after it) is cut off: the segment is truncated to its last
    /// intact record and fsynced. Damage anywhere else is a `Corruption` error (the
    /// default).
    ///
    /// In every mode, nothing but zeros after the last record of the last segment is not
    /// damage: it is space reserved ahead of the records
    /// ([`WalOptions::preallocate_bytes`]), or appends a power loss left as zeros, and it
    /// holds no record. It is cut off quietly ([`crate::ReplayReport::unused_tail`]).
    #[default]
    TolerateCorruptedTail,
    /// Any damage at all, a torn tail included, is a `Corruption` error.
    AbsoluteConsistency,
    /// Replay stops at the first damaged record anywhere and keeps the intact prefix: the
    /// damaged segment is truncated there and every later segment is renamed aside to
    /// `NNNNNN.log.discarded` (never deleted).
    PointInTime,
}

/// The default of [`WalOptions::preallocate_bytes`]: 1 MiB.
pub const DEFAULT_PREALLOCATE_BYTES: u64 = 1 << 20;

/// Options of a [`crate::Wal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalOptions {
    /// When appends are synced. Default: [`SyncMode::Full`].
    pub sync_mode: SyncMode,
    /// How replay treats damage. Default: [`RecoveryMode::TolerateCorruptedTail`].
    pub recovery_mode: RecoveryMode,
    /// When syncing ([`SyncMode::Full`] or [`SyncMode::Interval`]), the segment is extended
    /// with zeros this many bytes at a time ahead of its records, and records overwrite
    /// them. A sync of records written over space already allocated and counted in the
    /// file's size flushes only the data; one that grows the file also commits the file
    /// system's journal (about 1.5x the time of the data alone on ext4). The zeros cost
    /// one extra write of the log (the first sync after each extension carries it), and
    /// rotation and close cut off what was not used. 0: no reservation, records are
    /// appended. Ignored with [`SyncMode::None`], which never syncs a record. Default:
    /// [`DEFAULT_PREALLOCATE_BYTES`].
    pub preallocate_bytes: u64,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            sync_mode: SyncMode::default(),
            recovery_mode: RecoveryMode::default(),
            preallocate_bytes: DEFAULT_PREALLOCATE_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_safe() {
        let o = WalOptions::default();
        assert_eq!(o.sync_mode, SyncMode::Full);
        assert_eq!(o.recovery_mode, RecoveryMode::TolerateCorruptedTail);
        assert_eq!(o.preallocate_bytes, DEFAULT_PREALLOCATE_BYTES);
    }
}
