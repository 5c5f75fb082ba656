//! Shared foundations of the Riptide storage engine.
//!
//! Every other Riptide crate builds on these: the [`Error`] type and its [`ErrorKind`],
//! internal keys ([`key`]), byte encodings ([`coding`]), the checksum ([`checksum`]), the
//! iterator protocol ([`iter`]), the merge of several iterators ([`merge`]), range tombstones
//! ([`range_del`]), the [`WriteBatch`] format and the file-system seam every file operation
//! goes through ([`fs`]).

pub mod checksum;
pub mod coding;
pub mod error;
pub mod fs;
pub mod iter;
pub mod key;
pub mod kill_point;
pub mod merge;
pub mod range_del;
pub mod write_batch;

pub use error::{Error, ErrorKind, IoResultExt, Result, ResultExt};
pub use iter::{BoxedIterator, InternalIterator};
pub use key::{SeqNo, ValueKind};
pub use write_batch::{BatchEntry, BatchMarker, CfId, DEFAULT_CF_ID, WriteBatch};
