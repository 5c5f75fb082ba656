//! What the C ABI targets (`capi_sequence`, `handler_sequence`) share: byte string and
//! handle arguments made from fuzz input, the check every fallible call gets (a status in
//! range, never `RIPTIDE_INTERNAL`, a message exactly when it failed), and reading back what
//! a get returned.

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};

use arbitrary::Arbitrary;
use riptide_capi::{
    riptide_free, riptide_free_value, riptide_options_set_by_name, riptide_options_t,
    riptide_status_name, riptide_status_t,
};

/// The largest status code the ABI defines.
pub const MAX_STATUS: i32 = riptide_status_t::RIPTIDE_INTERRUPTED as i32;

/// Sets what the C ABI targets open their databases with: small memtables, tables and
/// blocks, so that flushes and compactions happen within one input; few open files; no
/// fsync.
///
/// # Safety
///
/// `opts` is a live options handle.
pub unsafe fn set_small_options(opts: *mut riptide_options_t) {
    for (name, value) in [
        (c"write_buffer_size", c"4096"),
        (c"target_file_size", c"8192"),
        (c"block_size", c"256"),
        (c"sync_mode", c"none"),
        (c"max_open_files", c"16"),
    ] {
        // SAFETY: `opts` is live (this function's contract); the strings are NUL-terminated;
        // NULL `errmsg`.
        let st =
            unsafe { riptide_options_set_by_name(opts, name.as_ptr(), value.as_ptr(), null_mut()) };
        assert_eq!(st, riptide_status_t::RIPTIDE_OK, "{name:?}");
    }
}

/// A byte string argument `(data, len)`.
#[derive(Arbitrary, Debug, Clone)]
pub enum Bytes {
    /// `(NULL, 0)`: the empty string.
    Null,
    /// `(NULL, n > 0)`: must be refused.
    NullWithLen(u8),
    /// Real bytes, short so that writes meet.
    Data(Vec<u8>),
    /// One of a few keys.
    Key(u8),
}

impl Bytes {
    /// The owned bytes (kept alive by the caller for the call).
    pub fn owned(&self) -> Option<Vec<u8>> {
        match self {
            Bytes::Null | Bytes::NullWithLen(_) => None,
            Bytes::Data(v) => Some(v.iter().copied().take(64).collect()),
            Bytes::Key(k) => Some(vec![b'k', b'0' + k % 8]),
        }
    }

    /// True when the pair is NULL data with a nonzero length.
    pub fn is_bad(&self) -> bool {
        matches!(self, Bytes::NullWithLen(_))
    }

    /// The `(pointer, length)` pair for `owned`.
    pub fn arg(&self, owned: &Option<Vec<u8>>) -> (*const c_char, usize) {
        match (self, owned) {
            (Bytes::NullWithLen(n), _) => (null(), usize::from(*n).max(1)),
            (_, Some(v)) => (v.as_ptr().cast(), v.len()),
            _ => (null(), 0),
        }
    }
}

/// A handle argument: NULL (0) or one of the live handles of that kind.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Pick(pub u8);

/// The handle `p` names in `v`: `None` (pass NULL) for 0 or an empty list.
pub fn pick<T: Copy>(v: &[T], p: Pick) -> Option<T> {
    if p.0 == 0 || v.is_empty() {
        None
    } else {
        v.get(usize::from(p.0 - 1) % v.len()).copied()
    }
}

/// Removes and returns the handle `p` names in `v` (any, when there is one), to free it.
pub fn take<T>(v: &mut Vec<T>, p: Pick) -> Option<T> {
    if v.is_empty() {
        return None;
    }
    let i = usize::from(p.0) % v.len();
    Some(v.remove(i))
}

/// Runs one fallible call with an `errmsg` out-parameter (NULL when `errmsg_null`) and checks
/// its status and message: a status the ABI defines, never `RIPTIDE_INTERNAL` (a caught
/// panic: a bug), a message on failure and none on success (when `errmsg` was given), a name
/// for the status. Returns the status.
pub fn checked_call(
    what: &str,
    errmsg_null: bool,
    f: impl FnOnce(*mut *mut c_char) -> riptide_status_t,
) -> riptide_status_t {
    let mut err: *mut c_char = null_mut();
    let status = f(if errmsg_null { null_mut() } else { &mut err });
    let code = status as i32;
    assert!(
        (0..=MAX_STATUS).contains(&code),
        "{what}: status {code} out of range"
    );
    // SAFETY: a message the library set is a NUL-terminated malloc'd string.
    let msg = (!err.is_null()).then(|| {
        unsafe { CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned()
    });
    // SAFETY: `err` is NULL or the library's malloc'd message, freed once.
    unsafe { riptide_free(err.cast()) };
    assert!(
        status != riptide_status_t::RIPTIDE_INTERNAL,
        "{what}: RIPTIDE_INTERNAL (a bug): {msg:?}"
    );
    if !errmsg_null {
        if status == riptide_status_t::RIPTIDE_OK {
            assert!(msg.is_none(), "{what}: success with a message {msg:?}");
        } else {
            assert!(
                msg.as_deref().is_some_and(|m| !m.is_empty()),
                "{what}: {status:?} without a message"
            );
        }
    }
    // SAFETY: status names are static strings.
    let name = unsafe { CStr::from_ptr(riptide_status_name(code)) };
    assert!(!name.to_bytes().is_empty());
    status
}

/// Reads a value a get returned (a found value is never NULL) and frees it; returns its
/// bytes when the call succeeded and found it.
pub fn take_value(
    status: riptide_status_t,
    value: *mut c_char,
    len: usize,
    found: bool,
) -> Option<Vec<u8>> {
    let out = (status == riptide_status_t::RIPTIDE_OK && found).then(|| {
        assert!(!value.is_null(), "a found value is NULL");
        // SAFETY: the library returned `len` readable bytes at `value`.
        unsafe { std::slice::from_raw_parts(value.cast::<u8>(), len) }.to_vec()
    });
    // SAFETY: `value` is NULL or the library's malloc'd value, freed once.
    unsafe { riptide_free_value(value, len) };
    out
}

/// The out-parameters of a get (`value`, `value_len`, `found`).
pub struct ValueOut {
    value: *mut c_char,
    len: usize,
    found: bool,
}

impl Default for ValueOut {
    fn default() -> Self {
        ValueOut {
            value: null_mut(),
            len: 0,
            found: false,
        }
    }
}

impl ValueOut {
    /// Pointers to the three, each NULL when its bit of `nulls` (1, 2, 4) is set.
    pub fn ptrs(&mut self, nulls: u8) -> (*mut *mut c_char, *mut usize, *mut bool) {
        (
            if nulls & 1 != 0 {
                null_mut()
            } else {
                &mut self.value
            },
            if nulls & 2 != 0 {
                null_mut()
            } else {
                &mut self.len
            },
            if nulls & 4 != 0 {
                null_mut()
            } else {
                &mut self.found
            },
        )
    }

    /// What `found` says.
    pub fn found(&self) -> bool {
        self.found
    }

    /// The value when the get returned `status` ([`take_value`]: read, then freed).
    pub fn take(self, status: riptide_status_t) -> Option<Vec<u8>> {
        take_value(status, self.value, self.len, self.found)
    }
}
