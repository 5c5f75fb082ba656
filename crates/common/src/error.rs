//! The one error type used by every Riptide crate.
//!
//! An [`Error`] carries a small, stable [`ErrorKind`] (the model for the C ABI's status codes)
//! and a human-readable context that says what failed and where (file, offset, key).

use std::fmt;
use std::io;
use std::path::Path;

/// The category of an [`Error`]. Stable: callers (and the C ABI) match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An operating-system I/O call failed (read, write, fsync, rename, no space left...).
    Io,
    /// Bytes read from disk do not match their checksum or their documented format.
    Corruption,
    /// The caller passed something the engine cannot accept (bad option, key out of order...).
    InvalidArgument,
    /// Something named by the caller does not exist (a column family, a prepared xid...).
    NotFound,
    /// A resource is held by someone else (the database directory lock, a name in use).
    Busy,
    /// The database or handle was closed, or was put in read-only mode by an earlier failure.
    Closed,
    /// The operation is valid but this version of the engine does not implement it.
    NotSupported,
    /// A transaction could not commit because of a write that conflicts with it.
    Conflict,
    /// A lock wait would have formed a cycle; this transaction was chosen as the victim.
    Deadlock,
    /// A wait (for a lock, for a write stall) exceeded its limit.
    TimedOut,
    /// A bug inside the engine (for example a caught panic). Please report it.
    Internal,
    /// A wait (for a row lock or a gap lock) was interrupted by another thread (MariaDB's
    /// `KILL QUERY`, a shutdown); the transaction keeps what it held before the wait.
    Interrupted,
    /// A configured limit would be exceeded (a transaction's write set growing past
    /// `max_txn_write_set_bytes`); the operation did nothing.
    LimitExceeded,
}

impl ErrorKind {
    /// A short lowercase name, used as the prefix of every error message.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Io => "I/O error",
            ErrorKind::Corruption => "corruption",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::NotFound => "not found",
            ErrorKind::Busy => "busy",
            ErrorKind::Closed => "closed",
            ErrorKind::NotSupported => "not supported",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::TimedOut => "timed out",
            ErrorKind::Internal => "internal error",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::LimitExceeded => "limit exceeded",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from the engine: a kind, a context message and, for I/O failures, the OS error.
#[derive(Debug, thiserror::Error)]
#[error("{kind}: {context}{}", source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
pub struct Error {
    kind: ErrorKind,
    context: String,
    #[source]
    source: Option<io::Error>,
}

/// `Result<T, riptide_common::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with a context message.
    pub fn new(kind: ErrorKind, context: impl Into<String>) -> Self {
        Error {
            kind,
            context: context.into(),
            source: None,
        }
    }

    /// An I/O error: `context` says what was being done and to which path.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error {
            kind: ErrorKind::Io,
            context: context.into(),
            source: Some(source),
        }
    }

    /// An I/O error while doing `what` on `path`.
    pub fn io_at(what: &str, path: &Path, source: io::Error) -> Self {
        Self::io(format!("{what} {}", path.display()), source)
    }

    /// Stored bytes are damaged or do not follow the format.
    pub fn corruption(context: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corruption, context)
    }

    /// The caller passed an unacceptable argument.
    pub fn invalid_argument(context: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, context)
    }

    /// Something the caller named does not exist.
    pub fn not_found(context: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, context)
    }

    /// A resource is held elsewhere.
    pub fn busy(context: impl Into<String>) -> Self {
        Self::new(ErrorKind::Busy, context)
    }

    /// The handle or database is closed or read-only.
    pub fn closed(context: impl Into<String>) -> Self {
        Self::new(ErrorKind::Closed, context)
    }

    /// The operation is not implemented.
    pub fn not_supported(context: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotSupported, context)
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The context message (without the kind prefix or the OS error).
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The underlying OS error, for [`ErrorKind::Io`].
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }

    /// Prefixes the context with `outer`, keeping kind and source: `"{outer}: {context}"`.
    pub fn with_context(mut self, outer: impl fmt::Display) -> Self {
        self.context = format!("{outer}: {}", self.context);
        self
    }
}

impl Clone for Error {
    fn clone(&self) -> Self {
        Error {
            kind: self.kind,
            context: self.context.clone(),
            source: self
                .source
                .as_ref()
                .map(|e| io::Error::new(e.kind(), e.to_string())),
        }
    }
}

/// Adds file context to `std::io::Result`s.
pub trait IoResultExt<T> {
    /// Turns an `io::Error` into an [`Error`] saying `what` was done to `path`.
    fn at(self, what: &str, path: &Path) -> Result<T>;
}

impl<T> IoResultExt<T> for io::Result<T> {
    fn at(self, what: &str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io_at(what, path, e))
    }
}

/// Adds outer context to any [`Result`].
pub trait ResultExt<T> {
    /// Prefixes the error's context with the message `f` returns.
    fn context_with<D: fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    fn context_with<D: fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.with_context(f()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_kind_context_and_source() {
        let e = Error::io_at(
            "fsync",
            Path::new("/db/000001.log"),
            io::Error::other("disk on fire"),
        );
        assert_eq!(e.kind(), ErrorKind::Io);
        assert_eq!(
            e.to_string(),
            "I/O error: fsync /db/000001.log: disk on fire"
        );
        let e = Error::corruption("bad checksum at offset 12").with_context("table 000004.sst");
        assert_eq!(
            e.to_string(),
            "corruption: table 000004.sst: bad checksum at offset 12"
        );
        assert_eq!(e.clone().kind(), ErrorKind::Corruption);
    }
}
