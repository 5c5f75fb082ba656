//! The boundary helpers every exported function uses: the panic guard that turns errors and
//! panics into a status and a message, checked pointer, byte-string and out-parameter access,
//! and handle boxing.

use std::any::Any;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

use riptide::{Error, ErrorKind};

use crate::memory::malloc_c_string;
use crate::status::riptide_status_t;

/// What the body of an exported function returns.
pub(crate) type CResult<T = ()> = Result<T, Error>;

/// Runs `body`, catching any panic, and reports its outcome: `RIPTIDE_OK` and `*errmsg =
/// NULL` on success; on failure the error's status and, in `*errmsg`, a malloc'd message.
/// A panic becomes `RIPTIDE_INTERNAL` with the panic's message.
///
/// # Safety
///
/// `errmsg` is NULL or valid for writing one pointer.
pub(crate) unsafe fn guard(
    errmsg: *mut *mut c_char,
    body: impl FnOnce() -> CResult,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard_status(errmsg, || {
            body().map_err(|e| (riptide_status_t::from_kind(e.kind()), e.to_string()))
        })
    }
}

/// As [`guard`], for bodies that choose their failure status themselves (a status and its
/// message).
///
/// # Safety
///
/// `errmsg` is NULL or valid for writing one pointer.
pub(crate) unsafe fn guard_status(
    errmsg: *mut *mut c_char,
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
    if !errmsg.is_null() {
        // Allocation or formatting cannot unwind here in practice, but keep the boundary
        // panic-free all the same.
        let msg = catch_unwind(|| message.as_deref().map(malloc_c_string))
            .ok()
            .flatten()
            .unwrap_or(std::ptr::null_mut());
        // SAFETY: `errmsg` is non-NULL and, per this function's contract, valid for writes.
        unsafe { errmsg.write(msg) };
    }
    status
}

/// Runs `body`, catching any panic; a panic yields `fallback`. For the few functions that
/// cannot fail (destroy, accessors) and so return no status.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Runs `f` on the object behind `ptr` under the panic guard: `fallback` for NULL or a
/// panic. For accessors that return a plain value.
///
/// # Safety
///
/// `ptr` is NULL or points to a live `T` that is not written during the call.
pub(crate) unsafe fn query<T, R: Copy>(ptr: *const T, fallback: R, f: impl FnOnce(&T) -> R) -> R {
    guard_value(fallback, || {
        // SAFETY: per this function's contract, a non-NULL `ptr` points to a live `T`.
        match unsafe { ptr.as_ref() } {
            Some(v) => f(v),
            None => fallback,
        }
    })
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

/// The object behind handle parameter `name`.
///
/// # Safety
///
/// `ptr` is NULL or points to a live `T` that is not written during `'a`.
pub(crate) unsafe fn arg_ref<'a, T>(ptr: *const T, name: &str) -> CResult<&'a T> {
    // SAFETY: per this function's contract, a non-NULL `ptr` points to a live `T`.
    unsafe { ptr.as_ref() }.ok_or_else(|| null_arg(name))
}

/// The object behind handle parameter `name`, mutably.
///
/// # Safety
///
/// `ptr` is NULL or points to a live `T` not otherwise accessed during `'a`.
pub(crate) unsafe fn arg_mut<'a, T>(ptr: *mut T, name: &str) -> CResult<&'a mut T> {
    // SAFETY: per this function's contract, a non-NULL `ptr` points to a live `T` used by
    // this call alone.
    unsafe { ptr.as_mut() }.ok_or_else(|| null_arg(name))
}

/// An optional handle parameter: NULL gives `None`.
///
/// # Safety
///
/// As [`arg_ref`].
pub(crate) unsafe fn arg_opt<'a, T>(ptr: *const T) -> Option<&'a T> {
    // SAFETY: per this function's contract, a non-NULL `ptr` points to a live `T`.
    unsafe { ptr.as_ref() }
}

/// The byte string `(data, len)` named `name`. NULL with length 0 is the empty string; NULL
/// with a nonzero length is `InvalidArgument`.
///
/// # Safety
///
/// A non-NULL `data` points to `len` readable bytes that are not written during `'a`.
pub(crate) unsafe fn bytes<'a>(data: *const c_char, len: usize, name: &str) -> CResult<&'a [u8]> {
    if data.is_null() {
        if len == 0 {
            return Ok(&[]);
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
    // SAFETY: `data` is non-NULL and, per this function's contract, points to `len` readable
    // bytes that stay unchanged during `'a`; `len` fits in `isize`.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// An optional byte string (a bound): NULL gives `None` (its length must be 0); a non-NULL
/// pointer gives the bytes, possibly empty.
///
/// # Safety
///
/// As [`bytes`].
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
    // SAFETY: forwarded contract.
    unsafe { bytes(data, len, name) }.map(Some)
}

/// The NUL-terminated C string parameter `name`, as bytes (without the NUL).
///
/// # Safety
///
/// `s` is NULL or points to a NUL-terminated string that is not written during `'a`.
pub(crate) unsafe fn c_bytes<'a>(s: *const c_char, name: &str) -> CResult<&'a [u8]> {
    if s.is_null() {
        return Err(null_arg(name));
    }
    // SAFETY: `s` is non-NULL and, per this function's contract, NUL-terminated and unchanged
    // during `'a`.
    Ok(unsafe { CStr::from_ptr(s) }.to_bytes())
}

/// The NUL-terminated UTF-8 string parameter `name`.
///
/// # Safety
///
/// As [`c_bytes`].
pub(crate) unsafe fn c_str<'a>(s: *const c_char, name: &str) -> CResult<&'a str> {
    // SAFETY: forwarded contract.
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
    /// `ptr` is NULL or valid for writes of a `T` for as long as the returned value lives.
    pub(crate) unsafe fn new(ptr: *mut T, name: &str) -> CResult<Out<T>> {
        NonNull::new(ptr)
            .map(|ptr| Out { ptr })
            .ok_or_else(|| null_arg(name))
    }

    /// Writes `value` to the out-parameter.
    pub(crate) fn set(&self, value: T) {
        // SAFETY: `ptr` is non-NULL and, per the contract of `Out::new`, valid for writes
        // while `self` lives; `T: Copy`, so nothing is dropped.
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
/// `ptr` is NULL or came from [`into_handle`] with the same `T` and was not freed yet.
pub(crate) unsafe fn destroy_handle<T>(ptr: *mut T) {
    if ptr.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: per this function's contract, `ptr` is a live box made by `into_handle`.
        drop(unsafe { Box::from_raw(ptr) });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::riptide_free;

    fn take_msg(msg: *mut c_char) -> String {
        assert!(!msg.is_null());
        // SAFETY: `msg` is a NUL-terminated string malloc'd by `guard`.
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
        // SAFETY: `msg` is a valid out-pointer.
        let st = unsafe {
            guard(&mut msg, || {
                let v: Vec<u8> = Vec::new();
                if v.is_empty() {
                    std::panic::panic_any("boom in body");
                }
                Ok(())
            })
        };
        assert_eq!(st, riptide_status_t::RIPTIDE_INTERNAL);
        let text = take_msg(msg);
        assert!(text.contains("boom in body"), "{text}");
        assert!(text.starts_with("internal error"), "{text}");
    }

    #[test]
    fn a_formatted_panic_message_is_kept() {
        let mut msg: *mut c_char = std::ptr::null_mut();
        let n = 7;
        // SAFETY: `msg` is a valid out-pointer.
        let st = unsafe {
            guard(&mut msg, || {
                std::panic::panic_any(format!("value {n} out of range"));
            })
        };
        assert_eq!(st, riptide_status_t::RIPTIDE_INTERNAL);
        assert!(take_msg(msg).contains("value 7 out of range"));
    }

    #[test]
    fn success_clears_errmsg_and_errors_keep_their_kind() {
        let mut msg: *mut c_char = std::ptr::dangling_mut::<c_char>();
        // SAFETY: `msg` is a valid out-pointer (its old value is overwritten, not read).
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
