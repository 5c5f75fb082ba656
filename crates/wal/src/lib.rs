//! The write-ahead log of the Riptide storage engine.
//!
//! A [`Wal`] is a directory of numbered segment files (`000001.log`, `000002.log`, ...).
//! Each segment starts with a checksummed header naming its own number, followed by framed
//! records: a checksum, a length, a type and the payload (see `FORMAT.md` in this crate).
//!
//! - [`Wal::open`] replays the existing segments through a callback, recovering from damage
//!   according to a [`RecoveryMode`] (by default a torn tail is cut off, damage anywhere
//!   else is a `Corruption` error), then starts a new segment.
//! - [`Wal::append`] writes one record with one `write()` and, per [`SyncMode`], syncs it
//!   at once, in a background thread every interval, or only on rotation and close.
//! - A failed write or sync makes the WAL read-only: after a failed `fsync` the state of
//!   the file is unknown, so nothing is retried and reported as durable.
//! - [`GroupCommit`] batches concurrent writers: one leader appends (and syncs) on behalf of
//!   everyone queued behind it, and every member gets the group's result.

mod format;
mod group_commit;
mod options;
mod replay;
mod segment;
mod syncer;
mod wal;
mod writer;

pub use format::{
    FORMAT_VERSION, MAX_PAYLOAD_LEN, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN, SEGMENT_MAGIC,
    parse_segment_file_name, segment_file_name,
};
pub use group_commit::GroupCommit;
pub use options::{DEFAULT_PREALLOCATE_BYTES, RecoveryMode, SyncMode, WalOptions};
pub use replay::ReplayReport;
pub use riptide_common::{Error, ErrorKind, Result};
pub use wal::Wal;
pub use writer::{WalPosition, WalStats};
