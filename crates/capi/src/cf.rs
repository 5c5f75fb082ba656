//! `riptide_cf_t`: column family handles: create, look up, drop, list.

use std::ffi::c_char;

use riptide::{ColumnFamily, Error};

use crate::db::riptide_db_t;
use crate::ffi_util::{
    CResult, ErrMsg, Out, arg_opt, arg_ref, c_str, destroy_handle, guard_value, into_handle, query,
};
use crate::memory::{malloc_array, malloc_string};
use crate::status::riptide_status_t;

/// A column family handle (opaque). Made by `riptide_cf_create`, `riptide_cf_get` or
/// `riptide_cf_default`; freed by `riptide_cf_destroy` (which does not drop the column
/// family). Wherever a function takes a `const riptide_cf_t *`, NULL means the default column
/// family. A handle may be shared between threads. Using it after the column family was
/// dropped fails with `RIPTIDE_NOT_FOUND`. Use it only with the database it came from.
pub struct riptide_cf_t {
    pub(crate) cf: ColumnFamily,
    /// The name followed by a NUL, for `riptide_cf_name`.
    name: Vec<u8>,
}

impl riptide_cf_t {
    fn new(cf: ColumnFamily) -> riptide_cf_t {
        let mut name = cf.name().as_bytes().to_vec();
        name.push(0);
        riptide_cf_t { cf, name }
    }
}

/// Stores a new handle for `cf` in `out`.
fn hand_out(out: &Out<*mut riptide_cf_t>, cf: ColumnFamily) -> CResult {
    out.set(into_handle(riptide_cf_t::new(cf)));
    Ok(())
}

/// Creates the column family `name` (NUL-terminated UTF-8) and stores a handle to it in
/// `*cf`. `RIPTIDE_BUSY` if the name is taken.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `name` is NULL or NUL-terminated; `cf` is NULL
/// or writable; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_create(
    db: *mut riptide_db_t,
    name: *const c_char,
    cf: *mut *mut riptide_cf_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `cf` and
    // `errmsg`, the handle `db` and the C string `name`.
    let (out, db, name, errmsg) = unsafe {
        (
            Out::new(cf, "cf"),
            arg_ref(db, "db"),
            c_str(name, "name"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let (db, name) = (db?, name?);
        let created = db.with(|d| d.create_cf(name))?;
        hand_out(&out, created)
    })
}

/// Looks up the column family `name` (NUL-terminated UTF-8) and stores a handle to it in
/// `*cf`. `RIPTIDE_NOT_FOUND` if there is none.
///
/// # Safety
///
/// As `riptide_cf_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_get(
    db: *mut riptide_db_t,
    name: *const c_char,
    cf: *mut *mut riptide_cf_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `cf` and
    // `errmsg`, the handle `db` and the C string `name`.
    let (out, db, name, errmsg) = unsafe {
        (
            Out::new(cf, "cf"),
            arg_ref(db, "db"),
            c_str(name, "name"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let (db, name) = (db?, name?);
        let found = db.with(|d| {
            d.cf(name)
                .ok_or_else(|| Error::not_found(format!("no column family is named {name:?}")))
        })?;
        hand_out(&out, found)
    })
}

/// Stores a handle to the default column family in `*cf`.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `cf` is NULL or writable; `errmsg` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_default(
    db: *mut riptide_db_t,
    cf: *mut *mut riptide_cf_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `cf` and
    // `errmsg` and the handle `db`.
    let (out, db, errmsg) = unsafe { (Out::new(cf, "cf"), arg_ref(db, "db"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let default = db?.with(|d| Ok(d.default_cf()))?;
        hand_out(&out, default)
    })
}

/// Drops the column family behind `cf`: its data becomes unreachable at once. The handle
/// stays allocated (free it with `riptide_cf_destroy`); using it fails with
/// `RIPTIDE_NOT_FOUND`. The default column family cannot be dropped
/// (`RIPTIDE_INVALID_ARGUMENT`); `cf` may not be NULL here.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `cf` is NULL or a live column family handle;
/// `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_drop(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `db` and `cf` and
    // the out-parameter `errmsg`.
    let (db, cf, errmsg) = unsafe { (arg_ref(db, "db"), arg_ref(cf, "cf"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| {
        let (db, cf) = (db?, cf?);
        db.with(|d| d.drop_cf(&cf.cf))
    })
}

/// Frees a column family handle (the column family itself stays). NULL is a no-op.
///
/// # Safety
///
/// `cf` is NULL or a live column family handle that no other thread is using and that is
/// not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_destroy(cf: *mut riptide_cf_t) {
    // SAFETY: per `# Safety`, `cf` follows the freed handle rule of the ffi_util contract: NULL
    // or made by `riptide_cf_create`, `_get` or `_default` and never used again.
    unsafe { destroy_handle(cf) }
}

/// The column family's name, NUL-terminated, valid while the handle lives (do not free it);
/// its length without the NUL goes to `*name_len` when `name_len` is not NULL. NULL for a
/// NULL handle.
///
/// # Safety
///
/// `cf` is NULL or a live column family handle; `name_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_name(
    cf: *const riptide_cf_t,
    name_len: *mut usize,
) -> *const c_char {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `cf` and the
    // optional out-parameter `name_len`.
    let (cf, name_len) = unsafe { (arg_opt(cf), Out::optional(name_len)) };
    guard_value(std::ptr::null(), || {
        let (ptr, len) = match cf {
            Some(h) => (h.name.as_ptr().cast(), h.name.len().saturating_sub(1)),
            None => (std::ptr::null(), 0),
        };
        if let Some(out) = name_len {
            out.set(len);
        }
        ptr
    })
}

/// The column family's numeric id (stable for its lifetime, never reused); 0 (the default
/// column family's id) for a NULL handle.
///
/// # Safety
///
/// `cf` is NULL or a live column family handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_id(cf: *const riptide_cf_t) -> u32 {
    // SAFETY: per `# Safety`, `cf` follows the handle rule of the ffi_util contract.
    unsafe { query(cf, 0, |h| h.cf.id()) }
}

/// Lists the names of every column family, default first: `*names` receives an array of
/// `*count` NUL-terminated strings. Free it with `riptide_free_string_list(names, count)`.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `names` and `count` are NULL or writable;
/// `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_cf_list(
    db: *mut riptide_db_t,
    names: *mut *mut *mut c_char,
    count: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `names`,
    // `count` and `errmsg` and the handle `db`.
    let (out_names, out_count, db, errmsg) = unsafe {
        (
            Out::new(names, "names"),
            Out::new(count, "count"),
            arg_ref(db, "db"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (out_names, out_count) = (out_names?, out_count?);
        out_names.set(std::ptr::null_mut());
        out_count.set(0);
        let list = db?.with(|d| Ok(d.list_cfs()))?;
        let mut strings: Vec<*mut c_char> = Vec::with_capacity(list.len());
        for name in &list {
            match malloc_string(name) {
                Ok(s) => strings.push(s),
                Err(e) => {
                    free_strings(strings);
                    return Err(e);
                }
            }
        }
        match malloc_array(&strings) {
            Ok(array) => {
                out_names.set(array);
                out_count.set(strings.len());
                Ok(())
            }
            Err(e) => {
                free_strings(strings);
                Err(e)
            }
        }
    })
}

/// Frees strings allocated for a list that could not be completed.
fn free_strings(strings: Vec<*mut c_char>) {
    for s in strings {
        // SAFETY: each entry is a live `malloc` string made by `malloc_string` and not handed
        // out (the list failed), so this is its only free.
        unsafe { crate::memory::riptide_free(s.cast()) };
    }
}
