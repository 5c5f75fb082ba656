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
            riptide_options_set_by_name(
                opts,
                c"sync_mode".as_ptr(),
                c"none".as_ptr(),
                std::ptr::null_mut(),
            );
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

/// A handler layer over a [`TestDb`] with one table `./db/t` (primary key, secondary index
/// `s`) holding rows `1`..=`4` (secondary key = pk, row `row`); freed on drop.
pub struct TestHandler {
    pub h: *mut riptide_handler_t,
    pub tab: *mut riptide_htable_t,
    pub db: TestDb,
}

/// The name of [`TestHandler`]'s table.
pub const TABLE: &[u8] = b"./db/t";

impl TestHandler {
    pub fn open() -> TestHandler {
        let db = TestDb::open();
        let mut err = std::ptr::null_mut();
        let mut h = std::ptr::null_mut();
        let mut tab = std::ptr::null_mut();
        let specs = [
            riptide_index_spec_t {
                kind: RIPTIDE_INDEX_PRIMARY,
                unique: true,
                key_parts: 1,
                name: c"PRIMARY".as_ptr(),
            },
            riptide_index_spec_t {
                kind: RIPTIDE_INDEX_SECONDARY,
                unique: false,
                key_parts: 1,
                name: c"s".as_ptr(),
            },
        ];
        // SAFETY: `db.db` is live; the specs, the name and the out-parameters are locals.
        unsafe {
            check(riptide_handler_open(db.db, &mut h, &mut err), err);
            check(
                riptide_handler_create_table(
                    h,
                    TABLE.as_ptr().cast(),
                    TABLE.len(),
                    specs.as_ptr(),
                    specs.len(),
                    1,
                    &mut err,
                ),
                err,
            );
            check(
                riptide_handler_open_table(
                    h,
                    TABLE.as_ptr().cast(),
                    TABLE.len(),
                    &mut tab,
                    &mut err,
                ),
                err,
            );
        }
        let t = TestHandler { h, tab, db };
        let s = t.begin();
        for pk in [b"1", b"2", b"3", b"4"] {
            t.insert(s, pk);
        }
        // SAFETY: `s` is a live session of this handler, destroyed once.
        unsafe {
            check(riptide_hsession_commit(s, &mut err), err);
            riptide_hsession_destroy(s);
        }
        t
    }

    /// A REPEATABLE READ session with a 60 s lock wait limit (destroy it yourself).
    pub fn begin(&self) -> *mut riptide_hsession_t {
        let mut s = std::ptr::null_mut();
        let mut err = std::ptr::null_mut();
        // SAFETY: `self.h` is live; the out-parameters are locals.
        unsafe {
            check(
                riptide_hsession_begin(
                    self.h,
                    RIPTIDE_HISO_REPEATABLE_READ,
                    60_000,
                    &mut s,
                    &mut err,
                ),
                err,
            );
        }
        s
    }

    /// Inserts row `pk` (secondary key `pk`) in session `s`.
    pub fn insert(&self, s: *mut riptide_hsession_t, pk: &[u8]) {
        let keys = [riptide_hkey_t {
            data: pk.as_ptr().cast(),
            len: pk.len(),
            has_null: false,
        }];
        let mut err = std::ptr::null_mut();
        let mut dup = 0usize;
        // SAFETY: `s` and `self.tab` are live; the byte strings are readable.
        let st = unsafe {
            riptide_hsession_insert(
                s,
                self.tab,
                pk.as_ptr().cast(),
                pk.len(),
                keys.as_ptr(),
                1,
                c"row".as_ptr(),
                3,
                std::ptr::null_mut(),
                &mut dup,
                &mut err,
            )
        };
        check(st, err);
    }

    /// `riptide_hsession_get_row` of row `pk` in `lock` mode: the status, the row if found,
    /// and the message on failure.
    pub fn get_row(
        &self,
        s: *mut riptide_hsession_t,
        pk: &[u8],
        lock: i32,
    ) -> (riptide_status_t, Option<Vec<u8>>, String) {
        let (mut v, mut len, mut found) = (std::ptr::null_mut(), 0usize, true);
        let mut err = std::ptr::null_mut();
        // SAFETY: `s` and `self.tab` are live; `pk` is readable; out-parameters are locals.
        let st = unsafe {
            riptide_hsession_get_row(
                s,
                self.tab,
                pk.as_ptr().cast(),
                pk.len(),
                lock,
                &mut v,
                &mut len,
                &mut found,
                &mut err,
            )
        };
        if st != riptide_status_t::RIPTIDE_OK {
            assert!(!found && v.is_null(), "out-parameters cleared on failure");
            return (st, None, take_message(err));
        }
        (st, found.then(|| take_value(v, len)), String::new())
    }
}

// SAFETY: `riptide_handler_t`, `riptide_htable_t` and `riptide_db_t` are thread-safe handles
// (crates/capi/README.md, "Threads"); sessions are made per call and used by one thread.
unsafe impl Sync for TestHandler {}

impl Drop for TestHandler {
    fn drop(&mut self) {
        // SAFETY: both handles are live and not used afterwards; the table goes first.
        unsafe {
            riptide_htable_release(self.tab);
            riptide_handler_destroy(self.h);
        }
    }
}

/// The value of the counter or gauge called `name` of `db` (see `riptide_stat_at`).
pub fn stat(db: *mut riptide_db_t, name: &str) -> u64 {
    let n = riptide_stat_count();
    let index = (0..n)
        .find(|&i| {
            // SAFETY: entries below the count are live for the process's life, their names
            // NUL-terminated.
            unsafe { CStr::from_ptr((*riptide_stat_at(i)).name) }.to_bytes() == name.as_bytes()
        })
        .unwrap_or_else(|| panic!("no statistic {name}"));
    let mut values = vec![riptide_stat_value_t { integer: 0 }; n];
    let mut err = std::ptr::null_mut();
    // SAFETY: `db` is live; `values` holds `n` values; `err` is a local.
    let st = unsafe { riptide_stats_fill(db, values.as_mut_ptr(), n, &mut err) };
    check(st, err);
    let value = values
        .get(index)
        .unwrap_or_else(|| panic!("no value for {name}"));
    // SAFETY: statistic `index` is a counter or gauge, stored as `integer`.
    unsafe { value.integer }
}
