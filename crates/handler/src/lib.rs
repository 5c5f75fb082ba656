//! MariaDB handler semantics over Riptide, with no MariaDB headers: what a storage engine
//! handler needs beyond a key-value store.
//!
//! - A **data dictionary** in its own column family (`__riptide_dd`): tables by name, their
//!   indexes (id, kind, unique, key parts, name), auto-increment and hidden row id
//!   reservations, the row count estimate. Layout byte by byte: `FORMAT.md`.
//! - **Key spaces**: every index owns a 4-byte big-endian id (never reused); its keys are the
//!   id + caller-encoded memcomparable bytes. Primary: id + pk -> row. Secondary: id +
//!   secondary key + pk + pk length (2 bytes) -> empty.
//! - **Row operations** in a [`Session`] (one pessimistic transaction per connection, with
//!   statement savepoints): insert / update / delete keep every index in step, check
//!   primary and unique keys (locked, so concurrent inserts of one value serialize), and
//!   single-delete secondary entries.
//! - **Maintenance**: `CHECK TABLE` ([`Session::check_table`]: every row has its secondary
//!   entries, every entry its row), `ANALYZE TABLE` ([`Table::refresh_statistics`]),
//!   `OPTIMIZE TABLE` ([`Table::compact`]).
//! - **Counters**: auto-increment and hidden row ids reserved in batches in the dictionary,
//!   never handed out twice even across a crash; row count estimates.
//!
//! ```
//! # fn main() -> Result<(), riptide_handler::HandlerError> {
//! use std::sync::Arc;
//! use riptide_handler::*;
//! let dir = tempfile::tempdir().unwrap();
//! let db = Arc::new(riptide::Db::open(dir.path(), riptide::Options::default())?);
//! let engine = HandlerEngine::open(db)?;
//! let t = engine.create_table(b"./db/t", &[
//!     IndexSpec { kind: IndexKind::Primary, unique: true, key_parts: 1, name: "PRIMARY".into() },
//!     IndexSpec { kind: IndexKind::Secondary, unique: true, key_parts: 1, name: "u".into() },
//! ], 1)?;
//! let mut s = engine.begin_session(SessionOptions::default())?;
//! s.insert(&t, b"1", &[SecondaryKey { key: b"a", has_null: false }], b"row 1")?;
//! let dup = s.insert(&t, b"2", &[SecondaryKey { key: b"a", has_null: false }], b"row 2");
//! assert_eq!(dup.unwrap_err().duplicate_index(), Some(1));
//! s.commit()?;
//! # Ok(()) }
//! ```

mod alter;
pub mod bulk;
pub mod capture;
mod check;
mod cursor;
mod engine;
mod error;
mod format;
mod introspect;
mod server_options;
mod session;
mod table;

pub use alter::{BuildCheck, IndexBuild, IndexSlot, NewIndex};
pub use bulk::{BulkOutcome, HeldBulkLoad};
pub use check::{CheckProblem, CheckReport, KeysOf};
pub use cursor::{Cursor, CursorMode, CursorRow, Seek};
pub use engine::HandlerEngine;
pub use error::{HandlerError, Result};
pub use format::{
    DD_CF_NAME, FORMAT_VERSION, IndexDef, IndexKind, IndexSpec, IndexStats, MAX_KEY_FORMAT,
    MAX_PK_LEN, TableDef, decode_secondary_entry, prefix_successor,
};
pub use introspect::{HandlerLock, LockTarget, TableIndexInfo};
pub use server_options::{Scope, ServerOption, Target, server_options};
pub use session::{Isolation, RowLock, SecondaryKey, Session, SessionOptions};
pub use table::{AUTOINC_RESERVE, ROWID_RESERVE, Table};
