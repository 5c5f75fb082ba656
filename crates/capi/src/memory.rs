//! Buffers handed to C: every one is allocated with the C library's `malloc`, so the caller
//! frees it with [`riptide_free`] (or plain `free()`), whatever language it is written in.

use std::ffi::{c_char, c_void};

use riptide::{Error, ErrorKind};

use crate::ffi_util::CResult;

/// Copies `bytes` into a new `malloc` buffer of at least one byte (so an empty value is still
/// a non-NULL pointer), followed by a NUL when `nul` is set.
fn malloc_copy(bytes: &[u8], nul: bool) -> Option<*mut c_char> {
    let size = bytes.len().checked_add(usize::from(nul))?.max(1);
    // SAFETY: `malloc` has no preconditions; a NULL result is handled below.
    let buf = unsafe { libc::malloc(size) }.cast::<u8>();
    if buf.is_null() {
        return None;
    }
    // SAFETY: `buf` holds `size >= bytes.len()` writable bytes and cannot overlap `bytes`
    // (it was just allocated).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
    if nul {
        // SAFETY: `size >= bytes.len() + 1`, so offset `bytes.len()` is in the buffer.
        unsafe { buf.add(bytes.len()).write(0) };
    }
    Some(buf.cast())
}

/// The `Internal` error for an allocation that failed.
fn out_of_memory(size: usize) -> Error {
    Error::new(
        ErrorKind::Internal,
        format!("out of memory allocating {size} bytes for a result"),
    )
}

/// A `malloc`'d NUL-terminated copy of `s` (NULL if memory is exhausted).
pub(crate) fn malloc_c_string(s: &str) -> *mut c_char {
    malloc_copy(s.as_bytes(), true).unwrap_or(std::ptr::null_mut())
}

/// A `malloc`'d NUL-terminated copy of `s`, or an error if memory is exhausted.
pub(crate) fn malloc_string(s: &str) -> CResult<*mut c_char> {
    malloc_copy(s.as_bytes(), true).ok_or_else(|| out_of_memory(s.len()))
}

/// A `malloc`'d copy of `bytes` (never NULL, even when empty), or an error if memory is
/// exhausted.
pub(crate) fn malloc_bytes(bytes: &[u8]) -> CResult<*mut c_char> {
    malloc_copy(bytes, false).ok_or_else(|| out_of_memory(bytes.len()))
}

/// A `malloc`'d array of `items`, or an error if memory is exhausted. An empty array is a
/// non-NULL pointer to no element.
pub(crate) fn malloc_array<T: Copy>(items: &[T]) -> CResult<*mut T> {
    // `malloc` aligns for every fundamental type: at least 8 bytes on every platform we build
    // for. The arrays handed out hold pointers and `riptide_xid_t`s.
    const { assert!(std::mem::align_of::<T>() <= 8) };
    let size = std::mem::size_of_val(items).max(1);
    // SAFETY: `malloc` has no preconditions; a NULL result is handled below.
    let buf = unsafe { libc::malloc(size) }.cast::<T>();
    if buf.is_null() {
        return Err(out_of_memory(size));
    }
    // SAFETY: `buf` is aligned for `T` (`malloc`'s alignment is at least `T`'s, asserted
    // above), has room for `items.len()` elements of `T` (`size >= size_of_val(items)`
    // bytes) and cannot overlap `items` (it was just allocated); `T: Copy`, so a bitwise copy
    // is a valid copy.
    unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), buf, items.len()) };
    Ok(buf)
}

/// Frees a buffer this library returned: an error message (`errmsg`), a string (a
/// statistics report, a column family name list entry), an array (prepared xids). NULL is a
/// no-op. Every such buffer comes from `malloc`, so `free()` is equivalent.
///
/// # Safety
///
/// `ptr` is NULL or a buffer returned by this library and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_free(ptr: *mut c_void) {
    // SAFETY: per `# Safety`, `ptr` is NULL or a buffer this library `malloc`'d and nobody
    // freed yet, so freeing it once here is valid; `free(NULL)` is a no-op.
    unsafe { libc::free(ptr) }
}

/// Frees a value returned by a get function (`value`, `value_len` as returned). NULL is a
/// no-op. The length is accepted for symmetry and future allocators; today it is unused.
///
/// # Safety
///
/// `value` is NULL or a value buffer returned by this library and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_free_value(value: *mut c_char, value_len: usize) {
    let _ = value_len;
    // SAFETY: per `# Safety`, `value` is NULL or a buffer this library `malloc`'d (every value
    // comes from `malloc_bytes`) and nobody freed yet; `free(NULL)` is a no-op.
    unsafe { libc::free(value.cast()) }
}

/// Frees a list of strings returned by this library (`riptide_cf_list`): each of the
/// `count` strings, then the array. NULL is a no-op.
///
/// # Safety
///
/// `list` is NULL or an array returned by this library with exactly `count` entries, not
/// freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_free_string_list(list: *mut *mut c_char, count: usize) {
    if list.is_null() {
        return;
    }
    for i in 0..count {
        // SAFETY: per `# Safety`, `list` is an array of exactly `count` entries made by
        // `malloc_array`, so entry `i < count` is in bounds and aligned, and each entry is a
        // `malloc_string` copy not freed yet.
        unsafe { libc::free(list.add(i).read().cast()) };
    }
    // SAFETY: per `# Safety`, `list` itself is a `malloc_array` buffer not freed yet; its
    // entries were only read above.
    unsafe { libc::free(list.cast()) }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    #[test]
    fn copies_are_nul_terminated_and_empty_values_are_not_null() {
        let s = malloc_string("héllo").unwrap();
        // SAFETY: `s` is a NUL-terminated malloc'd string.
        assert_eq!(unsafe { CStr::from_ptr(s) }.to_str().unwrap(), "héllo");
        // SAFETY: `s` came from this library's allocator.
        unsafe { riptide_free(s.cast()) };
        let v = malloc_bytes(b"").unwrap();
        assert!(!v.is_null());
        // SAFETY: `v` came from this library's allocator.
        unsafe { riptide_free_value(v, 0) };
        // SAFETY: NULL is a no-op.
        unsafe { riptide_free(std::ptr::null_mut()) };
        // SAFETY: NULL is a no-op.
        unsafe { riptide_free_value(std::ptr::null_mut(), 5) };
        // SAFETY: NULL is a no-op.
        unsafe { riptide_free_string_list(std::ptr::null_mut(), 3) };
    }
}
