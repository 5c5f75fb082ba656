//! Transactions for Riptide: optimistic and pessimistic concurrency control, savepoints and
//! two-phase commit. Not implemented yet: this crate is reserved for that work (issue 4), so
//! the workspace layout matches the design from the start.
