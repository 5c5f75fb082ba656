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
    /// A torn tail (the last record of the last segment cut short, failing its checksum, or
    /// zero-filled) is cut off: the segment is truncated to its last intact record and
    /// fsynced. Damage anywhere else is a `Corruption` error (the default).
    #[default]
    TolerateCorruptedTail,
    /// Any damage at all, a torn tail included, is a `Corruption` error.
    AbsoluteConsistency,
    /// Replay stops at the first damaged record anywhere and keeps the intact prefix: the
    /// damaged segment is truncated there and every later segment is renamed aside to
    /// `NNNNNN.log.discarded` (never deleted).
    PointInTime,
}

/// Options of a [`crate::Wal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalOptions {
    /// When appends are synced. Default: [`SyncMode::Full`].
    pub sync_mode: SyncMode,
    /// How replay treats damage. Default: [`RecoveryMode::TolerateCorruptedTail`].
    pub recovery_mode: RecoveryMode,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_safe() {
        let o = WalOptions::default();
        assert_eq!(o.sync_mode, SyncMode::Full);
        assert_eq!(o.recovery_mode, RecoveryMode::TolerateCorruptedTail);
    }
}
