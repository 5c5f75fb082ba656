//! The engine-independent building blocks of Riptide transactions.
//!
//! This crate holds the parts of transactions that do not need a database:
//!
//! - [`LockManager`]: striped shared/exclusive row locks for pessimistic transactions, with wait
//!   timeouts and deadlock detection (the requester that would close a cycle is the victim),
//!   and gap locks on key ranges with the insert-intention check ([`gap_locks`]); waits can
//!   be ended early by another thread through an [`Interrupt`] ([`interrupt`]), and a
//!   [`WaitObserver`] hears of every wait ([`wait_observer`]).
//! - [`WriteBuffer`]: a transaction's indexed write set (read-your-own-writes, ordered seeks in
//!   both directions for the merging iterator), nested savepoints with undo logs, and the list
//!   of row locks the transaction took.
//! - [`TrackedKeys`]: the keys a transaction read for update or wrote, with the first sequence
//!   number each was seen at, for optimistic validation at commit.
//! - [`Xid`]: XA two-phase-commit transaction ids and their byte encoding.
//!
//! `Transaction` itself, the transactional database handle, commit (optimistic validation or
//! lock release, write of the batch), two-phase commit recovery and the iterator that merges a
//! [`WriteBuffer`] with a database snapshot live in the `riptide` facade crate, because they
//! need the database.

pub mod gap_locks;
pub mod interrupt;
mod key_fmt;
mod lock_manager;
pub mod lock_table;
mod read_set;
mod wait_for;
pub mod wait_observer;
mod write_buffer;
mod xid;

pub use gap_locks::GapLockId;
pub use interrupt::Interrupt;
pub use key_fmt::KeyFmt;
pub use lock_manager::{
    LockKey, LockManager, LockManagerOptions, LockManagerStats, LockMode, TxnId,
};
pub use lock_table::{LockInfo, LockKind, LockTable};
pub use read_set::TrackedKeys;
pub use wait_observer::WaitObserver;
pub use write_buffer::{BufferedOp, ENTRY_OVERHEAD_BYTES, WriteBuffer};
pub use xid::{MAX_BQUAL_LEN, MAX_GTRID_LEN, Xid};
