//! Helpers shared by the Rust tests of the C ABI: a database in a temporary directory and
//! safe wrappers for the calls most tests make.

#![allow(dead_code)]

use std::ffi::{CStr, CString, c_char};

use riptide_capi::*;

/// An open database in a temporary directory, destroyed on drop.
pub struct TestDb {
    pub db: *mut riptide_db_t,
    pub dir: tempfile::TempDir,
}

impl TestDb {
    pub fn open() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let path = CString::new(dir.path().join("db").to_str().unwrap()).unwrap();
        let opts = riptide_options_create();
        let mut db = std::ptr::null_mut();
        let mut err = std::ptr::null_mut();
        // SAFETY: `opts` is a live handle; `path` is NUL-terminated; out-params are locals.
        let st = unsafe {
            riptide_options_set_sync_mode(opts, RIPTIDE_SYNC_NONE, 0, std::ptr::null_mut());
            let st = riptide_db_open(path.as_ptr(), opts, &mut db, &mut err);
            riptide_options_destroy(opts);
            st
        };
        check(st, err);
        TestDb { db, dir }
    }

    pub fn put(&self, key: &[u8], value: &[u8]) {
        let mut err = std::ptr::null_mut();
        // SAFETY: `self.db` is live; the slices are readable for their lengths.
        let st = unsafe {
            riptide_put(
                self.db,
                std::ptr::null(),
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            )
        };
        check(st, err);
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, (riptide_status_t, String)> {
        let mut value = std::ptr::null_mut();
        let mut len = 0;
        let mut found = false;
        let mut err = std::ptr::null_mut();
        // SAFETY: `self.db` is live; the key is readable; out-params are locals.
        let st = unsafe {
            riptide_get(
                self.db,
                std::ptr::null(),
                std::ptr::null(),
                key.as_ptr().cast(),
                key.len(),
                &mut value,
                &mut len,
                &mut found,
                &mut err,
            )
        };
        if st != riptide_status_t::RIPTIDE_OK {
            return Err((st, take_message(err)));
        }
        Ok(found.then(|| take_value(value, len)))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        // SAFETY: `self.db` is live and not used afterwards.
        unsafe { riptide_db_destroy(self.db) };
    }
}

/// Panics with the message unless `st` is OK.
pub fn check(st: riptide_status_t, err: *mut c_char) {
    if st != riptide_status_t::RIPTIDE_OK {
        panic!("{st:?}: {}", take_message(err));
    }
    assert!(err.is_null(), "errmsg set on success");
}

/// The message behind `err`, freed.
pub fn take_message(err: *mut c_char) -> String {
    assert!(!err.is_null(), "failure without a message");
    // SAFETY: `err` is a NUL-terminated message from the library.
    let s = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: `err` came from the library and is freed once.
    unsafe { riptide_free(err.cast()) };
    s
}

/// A value returned by a get function, copied and freed.
pub fn take_value(value: *mut c_char, len: usize) -> Vec<u8> {
    assert!(!value.is_null());
    // SAFETY: the library returned `len` readable bytes at `value`.
    let v = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), len) }.to_vec();
    // SAFETY: `value` came from the library and is freed once.
    unsafe { riptide_free_value(value, len) };
    v
}

/// Asserts `st` is `want` and the message contains `needle`.
pub fn expect(st: riptide_status_t, err: *mut c_char, want: riptide_status_t, needle: &str) {
    assert_eq!(st, want);
    let msg = take_message(err);
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
}
