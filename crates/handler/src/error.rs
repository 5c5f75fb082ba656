//! The handler's error type: an engine error, or a duplicate key naming the index.

use riptide::ErrorKind;

/// What a handler operation returns on failure.
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// The engine failed (I/O, lock timeout, deadlock, conflict, invalid argument...).
    #[error(transparent)]
    Engine(#[from] riptide::Error),
    /// An insert or update would make two rows share a primary key or a unique secondary key.
    #[error("duplicate key in index #{index} (`{name}`) of table id {table_id}")]
    Duplicate {
        /// Position of the index in the table's index list (0 is the primary key).
        index: usize,
        /// The index's name as given at CREATE.
        name: String,
        /// The table's id.
        table_id: u32,
    },
}

impl HandlerError {
    /// The index position of a duplicate-key error, `None` for other errors.
    pub fn duplicate_index(&self) -> Option<usize> {
        match self {
            HandlerError::Duplicate { index, .. } => Some(*index),
            HandlerError::Engine(_) => None,
        }
    }

    /// The engine error kind, `None` for a duplicate key.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            HandlerError::Engine(e) => Some(e.kind()),
            HandlerError::Duplicate { .. } => None,
        }
    }
}

/// The handler's result type.
pub type Result<T, E = HandlerError> = std::result::Result<T, E>;
