//! The boundary helpers every exported function uses, and the one contract they rely on: the
//! panic guard that turns errors and panics into a status and a message, the conversions of
//! pointer parameters (handles, byte strings, C strings, out-parameters) and handle boxing.
//!
//! # The contract of an exported function
//!
//! An exported (`extern "C"`) function receives raw pointers from C. Its `/// # Safety`
//! section, which cbindgen copies into `riptide.h` for C users, requires each pointer parameter
//! to follow one of the rules below (`README.md`, "Pointer arguments", says the same to C
//! users). The conversion helpers of this module are the code that relies on them: each one's
//! own `# Safety` section is "the parameter follows rule such-and-such", so an exported function
//! states the contract once, per parameter, in its docs, and relies on it in one place, the
//! block that converts its parameters (see the guide below).
//!
//! - **handle** (`riptide_db_t *db`...): NULL, or a *live* handle of the parameter's type:
//!   made by one of that type's constructors (all of which use [`into_handle`]), not freed yet,
//!   and staying so until the call returns: no other thread frees it, or uses it as an
//!   exclusive handle, meanwhile. Helpers: [`arg_ref`], [`arg_opt`], [`query`]. Two threads
//!   may then hold `&T` at once, so `T` must be `Sync` (checked below); the iterator types are
//!   not, so C may only use an iterator as an exclusive handle, even to read it.
//! - **exclusive handle**: a handle that, in addition, no other thread uses at all until the
//!   call returns ("used by this thread alone"; the handles documented "one thread at a
//!   time": batches, iterators, options, handler sessions and cursors). Helpers: [`arg_mut`],
//!   [`arg_opt_mut`].
//! - **freed handle** (the `_destroy` and `_release` functions): NULL, or a live handle that
//!   no other thread uses during the call and that nobody uses afterwards. Helper:
//!   [`destroy_handle`].
//! - **byte string** `(data, len)`: `data` is NULL, or points to `len` readable bytes that
//!   nothing writes until the call returns. (NULL with a nonzero length is not undefined
//!   behaviour: the helpers report it as `RIPTIDE_INVALID_ARGUMENT`.) Helpers: [`bytes`],
//!   [`opt_bytes`].
//! - **C string**: NULL, or a NUL-terminated string, readable up to its NUL, that nothing
//!   writes until the call returns. Helpers: [`c_bytes`], [`c_str`].
//! - **out-parameter** (`errmsg` included): NULL, or valid and aligned for writing one value of
//!   the pointee type, and not read or written by anyone else until the call returns.
//!   Helpers: [`Out::new`], [`Out::optional`], [`ErrMsg::new`], `kv::ValueOut::check`.
//! - **array** `(ptr, n)` of `#[repr(C)]` structs: `ptr` is NULL with `n == 0`, or points to
//!   `n` readable elements that nothing writes until the call returns, each of whose pointer
//!   fields follows its own rule. No helper here: the function that takes one makes the
//!   slice in its own `unsafe` block and says so there; an array that several functions take
//!   gets a conversion type of its own whose constructor does that
//!   (`handler_util::HKeys::new`).
//!
//! A NULL pointer is never undefined behaviour: a helper reports a NULL handle, out-parameter
//! or string as `RIPTIDE_INVALID_ARGUMENT` naming the parameter, unless the parameter is
//! documented as optional ([`arg_opt`], [`opt_bytes`], [`Out::optional`], `errmsg`). A
//! reference made from a parameter is valid for the call only: never keep one after it.
//!
//! # How to write an exported function
//!
//! 1. Declare it `#[unsafe(no_mangle)] pub unsafe extern "C" fn riptide_...`; a fallible one
//!    returns [`riptide_status_t`] and takes `errmsg: *mut *mut c_char` last. Its doc comment
//!    ends with a `# Safety` section that gives each pointer parameter its rule in the C
//!    user's words: "`db` is NULL or a live database handle; `(key, key_len)` is NULL or
//!    `key_len` readable bytes; `value` and `errmsg` are NULL or writable"; "used by this
//!    thread alone" for an exclusive handle. Doc comments go into the header: regenerate it
//!    (`README.md`).
//! 2. Its first statement is its one `unsafe` block, which converts every pointer parameter
//!    with the helpers of this module (shadowing the parameter's name) and does nothing else.
//!    Its `// SAFETY:` comment names the parameters and their rules. The conversions do not
//!    report errors yet: each gives a `CResult` (or an `Option`) for the body to unwrap.
//! 3. The rest is safe code: `errmsg.guard(|| { ... })` ([`ErrMsg::guard_status`] to choose
//!    the failure status), which catches panics and reports the outcome. Unwrap the
//!    conversions with `?` in the order the errors should be reported: out-parameters first,
//!    setting them to their failure value at once (`out.set(std::ptr::null_mut())`), then
//!    handles, then the rest. (Which error wins is observable: when converting an existing
//!    function, keep its order.) Engine calls and allocations belong here, under the guard,
//!    never in the conversion block.
//! 4. A function that cannot fail returns a fallback instead of a status: [`query`] for an
//!    accessor of one handle, or the conversion block followed by [`guard_value`]. A destructor
//!    is `unsafe { destroy_handle(p) }`, its comment saying where `p` came from.
//! 5. Code shared by several exported functions takes converted values (`CResult<&T>`,
//!    `CResult<&[u8]>`, [`ErrMsg`]...) and is a safe function. Do not write an `unsafe fn`
//!    over raw parameters that also does the work: it needs a contract of its own and every
//!    caller a comment forwarding it. A conversion of a group of parameters that several
//!    functions share is fine as a helper of its own (`kv::ValueOut::check`: `value`,
//!    `value_len`, `found`), called in the conversion block; its `# Safety` names each
//!    parameter's rule.
//! 6. Any other unsafe operation (a slice over a C array, a `free`, a copy into a C struct)
//!    is a block of its own, as small as it can be, whose `// SAFETY:` comment says what it
//!    relies on and why that holds. Never write a comment that says only "forwarded
//!    contract": say what is forwarded and to what.
//!
//! ```text
//! /// Deletes `key` from `cf` (NULL: the default column family).
//! ///
//! /// # Safety
//! ///
//! /// `db` is NULL or a live database handle; `cf` is NULL or a live column family handle
//! /// of this database; `(key, key_len)` is NULL or `key_len` readable bytes; `errmsg` is
//! /// NULL or writable.
//! #[unsafe(no_mangle)]
//! pub unsafe extern "C" fn riptide_delete(
//!     db: *mut riptide_db_t,
//!     cf: *const riptide_cf_t,
//!     key: *const c_char,
//!     key_len: usize,
//!     errmsg: *mut *mut c_char,
//! ) -> riptide_status_t {
//!     // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `db` and `cf`,
//!     // the byte string `key` and the out-parameter `errmsg`.
//!     let (db, cf, key, errmsg) = unsafe {
//!         (arg_ref(db, "db"), arg_opt(cf), bytes(key, key_len, "key"), ErrMsg::new(errmsg))
//!     };
//!     errmsg.guard(|| {
//!         let (db, key) = (db?, key?);
//!         db.with(|d| d.delete_cf(&cf_or_default(d, cf), key))
//!     })
//! }
//! ```
//!
//! Lints: `clippy::undocumented_unsafe_blocks` (workspace-wide) requires the `// SAFETY:`
//! comment on every block; what it says is for the author and the reviewer to get right.
//!
//! [`guard`], which takes the raw `errmsg` and so is `unsafe`, serves the modules not
//! converted to this pattern yet (`options`, `stats`): delete it once those use [`ErrMsg`].

use std::any::Any;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

use riptide::{Error, ErrorKind};

use crate::memory::malloc_c_string;
use crate::status::riptide_status_t;

// Every handle may move between threads between calls (`Send`), and those the handle rule
// lets several threads read at once are also `Sync`; the iterators are not (module docs).
// Handler sessions and cursors are passed as exclusive handles only, so the contract needs
// them `Send` alone (their types happen to be `Sync` as well).
const _: fn() = || {
    fn moves<T: Send>() {}
    fn shared<T: Send + Sync>() {}
    moves::<crate::iter::riptide_iter_t>();
    moves::<crate::txn_iter::riptide_txn_iter_t>();
    moves::<crate::handler_session::riptide_hsession_t>();
    moves::<crate::handler_cursor::riptide_hcursor_t>();
    shared::<crate::db::riptide_db_t>();
    shared::<crate::cf::riptide_cf_t>();
    shared::<crate::snapshot::riptide_snapshot_t>();
    shared::<crate::batch::riptide_batch_t>();
    shared::<crate::txn::riptide_txn_t>();
    shared::<crate::txn_options::riptide_txn_options_t>();
    shared::<crate::handler_engine::riptide_handler_t>();
    shared::<crate::handler_table::riptide_htable_t>();
    shared::<crate::handler_session::riptide_hinterrupt_t>();
};

/// What the body of an exported function returns.
pub(crate) type CResult<T = ()> = Result<T, Error>;

/// The `errmsg` out-parameter of a fallible exported function, checked. NULL is allowed: the
/// caller then gets the status alone.
pub(crate) struct ErrMsg(Option<Out<*mut c_char>>);

impl ErrMsg {
    /// Takes the `errmsg` parameter.
    ///
    /// # Safety
    ///
    /// `errmsg` follows the out-parameter rule (module docs) for as long as the returned value
    /// lives.
    pub(crate) unsafe fn new(errmsg: *mut *mut c_char) -> ErrMsg {
        ErrMsg(NonNull::new(errmsg).map(|ptr| Out { ptr }))
    }

    /// Runs `body`, catching any panic, and reports its outcome: `RIPTIDE_OK` and `*errmsg =
    /// NULL` on success; on failure the error's status and, in `*errmsg`, a malloc'd message.
    /// A panic becomes `RIPTIDE_INTERNAL` with the panic's message.
    pub(crate) fn guard(self, body: impl FnOnce() -> CResult) -> riptide_status_t {
        self.guard_status(|| {
            body().map_err(|e| (riptide_status_t::from_kind(e.kind()), e.to_string()))
        })
    }

    /// As [`ErrMsg::guard`], for bodies that choose their failure status themselves (a status
    /// and its message).
    pub(crate) fn guard_status(
        self,
        body: impl FnOnce() -> Result<(), (riptide_status_t, String)>,
    ) -> riptide_status_t {
        let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
            let e = panic_error(&*payload);
            Err((riptide_status_t::from_kind(e.kind()), e.to_string()))
        });
        let (status, message) = match outcome {
            Ok(()) => (riptide_status_t::RIPTIDE_OK, None),
            Err((status, message)) => (status, Some(message)),
        };
        if let Some(out) = self.0 {
            // Allocation or formatting cannot unwind here in practice, but keep the boundary
            // panic-free all the same.
            let msg = catch_unwind(|| message.as_deref().map(malloc_c_string))
                .ok()
                .flatten()
                .unwrap_or(std::ptr::null_mut());
            out.set(msg);
        }
        status
    }
}

/// [`ErrMsg::guard`] on a raw `errmsg`, for the modules not converted yet (module docs).
///
/// # Safety
///
/// `errmsg` follows the out-parameter rule (module docs).
pub(crate) unsafe fn guard(
    errmsg: *mut *mut c_char,
    body: impl FnOnce() -> CResult,
) -> riptide_status_t {
    // SAFETY: `ErrMsg::new` needs `errmsg` to follow the out-parameter rule for the life of the
    // `ErrMsg`, which `guard` consumes before returning; this function's contract gives that.
    unsafe { ErrMsg::new(errmsg) }.guard(body)
}

/// Runs `body`, catching any panic; a panic yields `fallback`. For the few functions that
/// cannot fail (destroy, accessors) and so return no status.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Runs `f` on the object behind the handle `ptr` under the panic guard: `fallback` for NULL
/// or a panic. For accessors that return a plain value.
///
/// # Safety
///
/// `ptr` follows the handle rule (module docs).
pub(crate) unsafe fn query<T, R: Copy>(ptr: *const T, fallback: R, f: impl FnOnce(&T) -> R) -> R {
    // SAFETY: `arg_opt` needs the handle rule for `ptr`, this function's contract; the
    // reference is used within this call only.
    let handle = unsafe { arg_opt(ptr) };
    guard_value(fallback, || handle.map_or(fallback, f))
}

/// The `Internal` error for a caught panic payload.
pub(crate) fn panic_error(payload: &(dyn Any + Send)) -> Error {
    let what = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    };
    Error::new(
        ErrorKind::Internal,
        format!("panic inside the riptide C API: {what}"),
    )
}

/// `InvalidArgument` naming the NULL parameter.
pub(crate) fn null_arg(name: &str) -> Error {
    Error::invalid_argument(format!("parameter `{name}` is NULL"))
}

/// The object behind handle parameter `name`; NULL is `InvalidArgument`.
///
/// # Safety
///
/// `ptr` follows the handle rule (module docs) during `'a`.
pub(crate) unsafe fn arg_ref<'a, T>(ptr: *const T, name: &str) -> CResult<&'a T> {
    // SAFETY: `arg_opt` needs exactly this function's contract.
    unsafe { arg_opt(ptr) }.ok_or_else(|| null_arg(name))
}

/// The object behind exclusive handle parameter `name`; NULL is `InvalidArgument`.
///
/// # Safety
///
/// `ptr` follows the exclusive handle rule (module docs) during `'a`.
pub(crate) unsafe fn arg_mut<'a, T>(ptr: *mut T, name: &str) -> CResult<&'a mut T> {
    // SAFETY: `arg_opt_mut` needs exactly this function's contract.
    unsafe { arg_opt_mut(ptr) }.ok_or_else(|| null_arg(name))
}

/// An optional exclusive handle parameter: NULL gives `None`.
///
/// # Safety
///
/// `ptr` follows the exclusive handle rule (module docs) during `'a`.
pub(crate) unsafe fn arg_opt_mut<'a, T>(ptr: *mut T) -> Option<&'a mut T> {
    // SAFETY: by the exclusive handle rule, a non-NULL `ptr` points to a live `T` (made by
    // `into_handle`, so aligned and initialised) that nothing else reads or writes during `'a`.
    unsafe { ptr.as_mut() }
}

/// An optional handle parameter: NULL gives `None`.
///
/// # Safety
///
/// `ptr` follows the handle rule (module docs) during `'a`.
pub(crate) unsafe fn arg_opt<'a, T>(ptr: *const T) -> Option<&'a T> {
    // SAFETY: by the handle rule, a non-NULL `ptr` points to a live `T` (made by
    // `into_handle`, so aligned and initialised) that stays live, and that no one accesses
    // mutably, during `'a`.
    unsafe { ptr.as_ref() }
}

/// The byte string `(data, len)` named `name`. NULL with length 0 is the empty string; NULL
/// with a nonzero length is `InvalidArgument`.
///
/// # Safety
///
/// `(data, len)` follows the byte string rule (module docs) during `'a`.
pub(crate) unsafe fn bytes<'a>(data: *const c_char, len: usize, name: &str) -> CResult<&'a [u8]> {
    // SAFETY: `opt_bytes` needs exactly this function's contract.
    unsafe { opt_bytes(data, len, name) }.map(Option::unwrap_or_default)
}

/// An optional byte string (a bound): NULL gives `None` (its length must be 0); a non-NULL
/// pointer gives the bytes, possibly empty.
///
/// # Safety
///
/// `(data, len)` follows the byte string rule (module docs) during `'a`.
pub(crate) unsafe fn opt_bytes<'a>(
    data: *const c_char,
    len: usize,
    name: &str,
) -> CResult<Option<&'a [u8]>> {
    if data.is_null() {
        if len == 0 {
            return Ok(None);
        }
        return Err(Error::invalid_argument(format!(
            "parameter `{name}` is NULL but its length is {len}"
        )));
    }
    if len > isize::MAX as usize {
        return Err(Error::invalid_argument(format!(
            "length {len} of parameter `{name}` is too large"
        )));
    }
    // SAFETY: `data` is non-NULL, so by the byte string rule it points to `len` readable
    // bytes (alignment 1) that nothing writes during `'a`; `len` fits in `isize`.
    Ok(Some(unsafe {
        std::slice::from_raw_parts(data.cast::<u8>(), len)
    }))
}

/// The NUL-terminated C string parameter `name`, as bytes (without the NUL); NULL is
/// `InvalidArgument`.
///
/// # Safety
///
/// `s` follows the C string rule (module docs) during `'a`.
pub(crate) unsafe fn c_bytes<'a>(s: *const c_char, name: &str) -> CResult<&'a [u8]> {
    if s.is_null() {
        return Err(null_arg(name));
    }
    // SAFETY: `s` is non-NULL, so by the C string rule it is NUL-terminated, readable up to
    // the NUL and unchanged during `'a`.
    Ok(unsafe { CStr::from_ptr(s) }.to_bytes())
}

/// The NUL-terminated UTF-8 string parameter `name`; NULL or invalid UTF-8 is
/// `InvalidArgument`.
///
/// # Safety
///
/// `s` follows the C string rule (module docs) during `'a`.
pub(crate) unsafe fn c_str<'a>(s: *const c_char, name: &str) -> CResult<&'a str> {
    // SAFETY: `c_bytes` needs exactly this function's contract.
    let b = unsafe { c_bytes(s, name) }?;
    std::str::from_utf8(b)
        .map_err(|e| Error::invalid_argument(format!("parameter `{name}` is not UTF-8: {e}")))
}

/// A checked out-parameter: a non-NULL pointer the function writes its result through.
pub(crate) struct Out<T: Copy> {
    ptr: NonNull<T>,
}

impl<T: Copy> Out<T> {
    /// Checks the out-parameter `name`; NULL is `InvalidArgument`.
    ///
    /// # Safety
    ///
    /// `ptr` follows the out-parameter rule (module docs) for as long as the returned value
    /// lives.
    pub(crate) unsafe fn new(ptr: *mut T, name: &str) -> CResult<Out<T>> {
        NonNull::new(ptr)
            .map(|ptr| Out { ptr })
            .ok_or_else(|| null_arg(name))
    }

    /// An optional out-parameter: NULL gives `None` (the caller does not want that result).
    ///
    /// # Safety
    ///
    /// As [`Out::new`].
    pub(crate) unsafe fn optional(ptr: *mut T) -> Option<Out<T>> {
        NonNull::new(ptr).map(|ptr| Out { ptr })
    }

    /// Writes `value` to the out-parameter.
    pub(crate) fn set(&self, value: T) {
        // SAFETY: `ptr` is non-NULL and, by the out-parameter rule that `Out::new` and
        // `Out::optional` require, valid and aligned for writes of a `T`, with no other access
        // to it, while `self` lives; `T: Copy`, so nothing is dropped.
        unsafe { self.ptr.as_ptr().write(value) }
    }
}

/// Moves `value` to the heap and returns the handle C holds.
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Frees a handle made by [`into_handle`], running its destructor; NULL is a no-op. A panic
/// in the destructor is caught (and the handle is then leaked, not freed twice).
///
/// # Safety
///
/// `ptr` follows the freed handle rule (module docs), and its handle type is `T`.
pub(crate) unsafe fn destroy_handle<T>(ptr: *mut T) {
    if ptr.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: by the freed handle rule, `ptr` is a live handle of type `T`, and every
        // handle is a box made by `into_handle`; no one else uses it now or later, so it is
        // dropped exactly once.
        drop(unsafe { Box::from_raw(ptr) });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::riptide_free;

    fn take_msg(msg: *mut c_char) -> String {
        assert!(!msg.is_null());
        // SAFETY: `msg` is a NUL-terminated string malloc'd by the guard.
        let s = unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: `msg` came from the library's allocator and is freed once.
        unsafe { riptide_free(msg.cast()) };
        s
    }

    #[test]
    fn a_panic_inside_the_guard_becomes_internal_with_its_message() {
        let mut msg: *mut c_char = std::ptr::null_mut();
        // SAFETY: `msg` is a local, writable and used by nothing else while the `ErrMsg` lives.
        let st = unsafe { ErrMsg::new(&mut msg) }.guard(|| {
            let v: Vec<u8> = Vec::new();
            if v.is_empty() {
                std::panic::panic_any("boom in body");
            }
            Ok(())
        });
        assert_eq!(st, riptide_status_t::RIPTIDE_INTERNAL);
        let text = take_msg(msg);
        assert!(text.contains("boom in body"), "{text}");
        assert!(text.starts_with("internal error"), "{text}");
    }

    #[test]
    fn a_formatted_panic_message_is_kept() {
        let mut msg: *mut c_char = std::ptr::null_mut();
        let n = 7;
        // SAFETY: `msg` is a local, writable and used by nothing else while the `ErrMsg` lives.
        let st = unsafe { ErrMsg::new(&mut msg) }.guard_status(|| {
            std::panic::panic_any(format!("value {n} out of range"));
        });
        assert_eq!(st, riptide_status_t::RIPTIDE_INTERNAL);
        assert!(take_msg(msg).contains("value 7 out of range"));
    }

    #[test]
    fn success_clears_errmsg_and_errors_keep_their_kind() {
        let mut msg: *mut c_char = std::ptr::dangling_mut::<c_char>();
        // SAFETY: `msg` is a local, writable and used by nothing else during the call (its old
        // value is overwritten, not read). This and the next calls try the raw-`errmsg` form.
        let st = unsafe { guard(&mut msg, || Ok(())) };
        assert_eq!(st, riptide_status_t::RIPTIDE_OK);
        assert!(msg.is_null());
        // SAFETY: `msg` is a valid out-pointer.
        let st = unsafe { guard(&mut msg, || Err(Error::busy("lock held"))) };
        assert_eq!(st, riptide_status_t::RIPTIDE_BUSY);
        assert_eq!(take_msg(msg), "busy: lock held");
        // A NULL errmsg is allowed: only the status is reported.
        // SAFETY: NULL errmsg is allowed by the contract.
        let st = unsafe { guard(std::ptr::null_mut(), || Err(Error::busy("x"))) };
        assert_eq!(st, riptide_status_t::RIPTIDE_BUSY);
        // SAFETY: NULL errmsg is allowed by the contract.
        let st = unsafe { guard(std::ptr::null_mut(), || panic!("quiet")) };
        assert_eq!(st, riptide_status_t::RIPTIDE_INTERNAL);
    }

    #[test]
    fn guard_status_reports_the_chosen_status() {
        let mut msg: *mut c_char = std::ptr::null_mut();
        // SAFETY: `msg` is a local, writable and used by nothing else while the `ErrMsg` lives.
        let st = unsafe { ErrMsg::new(&mut msg) }
            .guard_status(|| Err((riptide_status_t::RIPTIDE_DUPLICATE_KEY, "dup".to_string())));
        assert_eq!(st, riptide_status_t::RIPTIDE_DUPLICATE_KEY);
        assert_eq!(take_msg(msg), "dup");
    }

    #[test]
    fn queries_and_optional_out_parameters_accept_null() {
        // SAFETY: NULL follows the handle rule.
        assert_eq!(unsafe { query::<u32, u32>(std::ptr::null(), 9, |v| *v) }, 9);
        let h = into_handle(5_u32);
        // SAFETY: `h` is a live handle made by `into_handle`, used by this thread alone.
        assert_eq!(unsafe { query(h, 9, |v| *v + 1) }, 6);
        // SAFETY: `h` is live and is not used after this call.
        unsafe { destroy_handle(h) };
        // SAFETY: NULL follows the out-parameter rule.
        assert!(unsafe { Out::<usize>::optional(std::ptr::null_mut()) }.is_none());
        let mut n = 0_usize;
        // SAFETY: `n` is a local, writable and used by nothing else while `out` lives.
        let out = unsafe { Out::optional(&mut n) };
        if let Some(out) = out {
            out.set(3);
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn guard_value_returns_the_fallback_on_panic() {
        assert_eq!(guard_value(0, || 5), 5);
        assert_eq!(guard_value(-1, || panic!("no")), -1);
    }

    #[test]
    fn byte_strings_reject_null_with_length() {
        // SAFETY: NULL data is allowed by the contract.
        let e = unsafe { bytes(std::ptr::null(), 3, "key") }.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("`key`"), "{e}");
        // SAFETY: NULL data is allowed by the contract.
        assert_eq!(unsafe { bytes(std::ptr::null(), 0, "key") }.unwrap(), b"");
        // SAFETY: NULL data is allowed by the contract.
        let absent = unsafe { opt_bytes(std::ptr::null(), 0, "lower") }.unwrap();
        assert_eq!(absent, None);
        let data = b"a\0b";
        // SAFETY: `data` holds 3 readable bytes.
        let got = unsafe { bytes(data.as_ptr().cast(), 3, "key") }.unwrap();
        assert_eq!(got, b"a\0b");
        // SAFETY: `data` holds 3 readable bytes; an empty bound is not an absent one.
        let got = unsafe { opt_bytes(data.as_ptr().cast(), 0, "lower") }.unwrap();
        assert_eq!(got, Some(&b""[..]));
    }

    #[test]
    fn handles_and_out_params_reject_null() {
        // SAFETY: NULL is allowed by the contract.
        let e = unsafe { arg_ref::<u32>(std::ptr::null(), "db") }.unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: parameter `db` is NULL");
        // SAFETY: NULL is allowed by the contract.
        assert!(unsafe { Out::<u8>::new(std::ptr::null_mut(), "found") }.is_err());
        // SAFETY: NULL is allowed by the contract.
        assert!(unsafe { c_str(std::ptr::null(), "name") }.is_err());
        let bad = b"\xff\0";
        // SAFETY: `bad` is NUL-terminated.
        let e = unsafe { c_str(bad.as_ptr().cast(), "name") }.unwrap_err();
        assert!(e.to_string().contains("not UTF-8"), "{e}");
        // SAFETY: NULL is a no-op for destroy.
        unsafe { destroy_handle::<u32>(std::ptr::null_mut()) };
    }
}
