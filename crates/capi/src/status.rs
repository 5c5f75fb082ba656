//! Status codes: what every fallible function returns, one per engine `ErrorKind`.

use std::ffi::c_char;

use riptide::ErrorKind;

/// What a fallible function returns. `RIPTIDE_OK` (0) is success; every other value is one
/// kind of failure, and the function's `errmsg` out-parameter (when not NULL) then receives a
/// message saying what failed and where. Values are stable: new kinds may be added at the
/// end, existing ones never change.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum riptide_status_t {
    /// Success.
    RIPTIDE_OK = 0,
    /// An operating-system I/O call failed (read, write, fsync, no space left...).
    RIPTIDE_IO = 1,
    /// Stored bytes do not match their checksum or their documented format.
    RIPTIDE_CORRUPTION = 2,
    /// The caller passed something unacceptable: a NULL handle, a NULL pointer with a
    /// nonzero length, an unknown enum value, an inverted range, an unfinished transaction...
    RIPTIDE_INVALID_ARGUMENT = 3,
    /// Something named by the caller does not exist (a column family, a prepared xid, a
    /// savepoint). A key that is absent is *not* this: reads report it with `found = false`.
    RIPTIDE_NOT_FOUND = 4,
    /// A resource is held by someone else (the database directory lock, a name in use).
    RIPTIDE_BUSY = 5,
    /// The database was closed, or made read-only by an earlier background failure.
    RIPTIDE_CLOSED = 6,
    /// The operation is valid but not implemented by this version.
    RIPTIDE_NOT_SUPPORTED = 7,
    /// A transaction conflicts with a write committed after its snapshot; it was rolled back.
    RIPTIDE_CONFLICT = 8,
    /// A lock wait would have closed a cycle; this transaction is the victim.
    RIPTIDE_DEADLOCK = 9,
    /// A wait (for a row lock, for a write stall) exceeded its limit.
    RIPTIDE_TIMED_OUT = 10,
    /// A bug inside the engine, for example a caught panic. Please report it.
    RIPTIDE_INTERNAL = 11,
    /// A handler insert or update would duplicate a primary or unique key; the function's
    /// `dup_index` out-parameter names the index (0 is the primary key).
    RIPTIDE_DUPLICATE_KEY = 12,
    /// A lock wait was interrupted by another thread (`riptide_hinterrupt_fire`: MariaDB's
    /// `KILL QUERY`, a shutdown). The session keeps the locks it held before the wait and
    /// stays usable, as after `RIPTIDE_TIMED_OUT`; its waits keep failing this way until
    /// `riptide_hsession_clear_interrupt`.
    RIPTIDE_INTERRUPTED = 13,
    /// A configured limit would be exceeded: a transaction's write set would grow past the
    /// `max_txn_write_set_bytes` option. The write did nothing; the transaction stays
    /// usable (commit it, or roll it or its statement back).
    RIPTIDE_LIMIT_EXCEEDED = 14,
}

impl riptide_status_t {
    /// The status for an engine error kind.
    pub fn from_kind(kind: ErrorKind) -> riptide_status_t {
        match kind {
            ErrorKind::Io => riptide_status_t::RIPTIDE_IO,
            ErrorKind::Corruption => riptide_status_t::RIPTIDE_CORRUPTION,
            ErrorKind::InvalidArgument => riptide_status_t::RIPTIDE_INVALID_ARGUMENT,
            ErrorKind::NotFound => riptide_status_t::RIPTIDE_NOT_FOUND,
            ErrorKind::Busy => riptide_status_t::RIPTIDE_BUSY,
            ErrorKind::Closed => riptide_status_t::RIPTIDE_CLOSED,
            ErrorKind::NotSupported => riptide_status_t::RIPTIDE_NOT_SUPPORTED,
            ErrorKind::Conflict => riptide_status_t::RIPTIDE_CONFLICT,
            ErrorKind::Deadlock => riptide_status_t::RIPTIDE_DEADLOCK,
            ErrorKind::TimedOut => riptide_status_t::RIPTIDE_TIMED_OUT,
            ErrorKind::Internal => riptide_status_t::RIPTIDE_INTERNAL,
            ErrorKind::Interrupted => riptide_status_t::RIPTIDE_INTERRUPTED,
            ErrorKind::LimitExceeded => riptide_status_t::RIPTIDE_LIMIT_EXCEEDED,
            // `ErrorKind` is non-exhaustive: a kind added later and not mapped yet.
            _ => riptide_status_t::RIPTIDE_INTERNAL,
        }
    }

    /// The status's name as a NUL-terminated static string.
    fn name(self) -> &'static [u8] {
        match self {
            riptide_status_t::RIPTIDE_OK => b"RIPTIDE_OK\0",
            riptide_status_t::RIPTIDE_IO => b"RIPTIDE_IO\0",
            riptide_status_t::RIPTIDE_CORRUPTION => b"RIPTIDE_CORRUPTION\0",
            riptide_status_t::RIPTIDE_INVALID_ARGUMENT => b"RIPTIDE_INVALID_ARGUMENT\0",
            riptide_status_t::RIPTIDE_NOT_FOUND => b"RIPTIDE_NOT_FOUND\0",
            riptide_status_t::RIPTIDE_BUSY => b"RIPTIDE_BUSY\0",
            riptide_status_t::RIPTIDE_CLOSED => b"RIPTIDE_CLOSED\0",
            riptide_status_t::RIPTIDE_NOT_SUPPORTED => b"RIPTIDE_NOT_SUPPORTED\0",
            riptide_status_t::RIPTIDE_CONFLICT => b"RIPTIDE_CONFLICT\0",
            riptide_status_t::RIPTIDE_DEADLOCK => b"RIPTIDE_DEADLOCK\0",
            riptide_status_t::RIPTIDE_TIMED_OUT => b"RIPTIDE_TIMED_OUT\0",
            riptide_status_t::RIPTIDE_INTERNAL => b"RIPTIDE_INTERNAL\0",
            riptide_status_t::RIPTIDE_DUPLICATE_KEY => b"RIPTIDE_DUPLICATE_KEY\0",
            riptide_status_t::RIPTIDE_INTERRUPTED => b"RIPTIDE_INTERRUPTED\0",
            riptide_status_t::RIPTIDE_LIMIT_EXCEEDED => b"RIPTIDE_LIMIT_EXCEEDED\0",
        }
    }

    /// The status whose numeric value is `code`, if any.
    fn from_code(code: i32) -> Option<riptide_status_t> {
        const ALL: [riptide_status_t; 15] = [
            riptide_status_t::RIPTIDE_OK,
            riptide_status_t::RIPTIDE_IO,
            riptide_status_t::RIPTIDE_CORRUPTION,
            riptide_status_t::RIPTIDE_INVALID_ARGUMENT,
            riptide_status_t::RIPTIDE_NOT_FOUND,
            riptide_status_t::RIPTIDE_BUSY,
            riptide_status_t::RIPTIDE_CLOSED,
            riptide_status_t::RIPTIDE_NOT_SUPPORTED,
            riptide_status_t::RIPTIDE_CONFLICT,
            riptide_status_t::RIPTIDE_DEADLOCK,
            riptide_status_t::RIPTIDE_TIMED_OUT,
            riptide_status_t::RIPTIDE_INTERNAL,
            riptide_status_t::RIPTIDE_DUPLICATE_KEY,
            riptide_status_t::RIPTIDE_INTERRUPTED,
            riptide_status_t::RIPTIDE_LIMIT_EXCEEDED,
        ];
        ALL.into_iter().find(|s| *s as i32 == code)
    }
}

/// The name of status code `code` (`"RIPTIDE_CONFLICT"`...), or `"RIPTIDE_UNKNOWN_STATUS"`
/// for a value that is not a status. The string is static: never free it.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_status_name(code: i32) -> *const c_char {
    let name: &'static [u8] = match riptide_status_t::from_code(code) {
        Some(s) => s.name(),
        None => b"RIPTIDE_UNKNOWN_STATUS\0",
    };
    name.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn name_of(code: i32) -> String {
        // SAFETY: riptide_status_name always returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(riptide_status_name(code)) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn every_code_has_a_name_and_unknown_codes_are_named_so() {
        assert_eq!(name_of(0), "RIPTIDE_OK");
        assert_eq!(name_of(8), "RIPTIDE_CONFLICT");
        assert_eq!(name_of(11), "RIPTIDE_INTERNAL");
        assert_eq!(name_of(12), "RIPTIDE_DUPLICATE_KEY");
        assert_eq!(name_of(13), "RIPTIDE_INTERRUPTED");
        assert_eq!(name_of(14), "RIPTIDE_LIMIT_EXCEEDED");
        assert_eq!(name_of(15), "RIPTIDE_UNKNOWN_STATUS");
        assert_eq!(name_of(-1), "RIPTIDE_UNKNOWN_STATUS");
        for code in 0..15 {
            assert!(name_of(code).starts_with("RIPTIDE_"), "code {code}");
        }
    }

    #[test]
    fn kinds_map_to_their_own_codes() {
        assert_eq!(
            riptide_status_t::from_kind(ErrorKind::Conflict),
            riptide_status_t::RIPTIDE_CONFLICT
        );
        assert_eq!(
            riptide_status_t::from_kind(ErrorKind::Closed),
            riptide_status_t::RIPTIDE_CLOSED
        );
        assert_eq!(riptide_status_t::RIPTIDE_TIMED_OUT as i32, 10);
        assert_eq!(
            riptide_status_t::from_kind(ErrorKind::Interrupted),
            riptide_status_t::RIPTIDE_INTERRUPTED
        );
        assert_eq!(riptide_status_t::RIPTIDE_INTERRUPTED as i32, 13);
        assert_eq!(
            riptide_status_t::from_kind(ErrorKind::LimitExceeded),
            riptide_status_t::RIPTIDE_LIMIT_EXCEEDED
        );
        assert_eq!(riptide_status_t::RIPTIDE_LIMIT_EXCEEDED as i32, 14);
    }
}
