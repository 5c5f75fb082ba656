//! `riptide_options_t`: how a database is opened and tuned, and the option tables. Options
//! are set by name (`riptide_options_set_by_name`); the names, types, bounds, defaults and
//! docs are `riptide::Options::TABLE`, exported as `riptide_option_at`, and the options a
//! MariaDB server exposes are `riptide_handler::server_options`, exported as
//! `riptide_server_option_at`. Nothing here is declared per option.

use std::ffi::{CString, c_char};
use std::sync::LazyLock;

use riptide::{OptionType, OptionValue, Options};
use riptide_handler::{Scope, Target};

use crate::db::riptide_db_t;
use crate::ffi_util::{
    CResult, Out, arg_mut, arg_ref, c_str, destroy_handle, guard, guard_value, into_handle,
};
use crate::memory::malloc_string;
use crate::status::riptide_status_t;

/// Database options (opaque). Made by `riptide_options_create`, set by name with
/// `riptide_options_set_by_name`, freed by `riptide_options_destroy`. `riptide_db_open`
/// copies it, so it may be freed right after. Not for concurrent use from several threads.
pub struct riptide_options_t {
    pub(crate) opts: Options,
}

/// New options with every default. Never NULL except if memory is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_options_create() -> *mut riptide_options_t {
    guard_value(std::ptr::null_mut(), || {
        into_handle(riptide_options_t {
            opts: Options::default(),
        })
    })
}

/// Frees options. NULL is a no-op.
///
/// # Safety
///
/// `options` is NULL or a live handle from `riptide_options_create`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_destroy(options: *mut riptide_options_t) {
    // SAFETY: `options` is NULL or a live handle from `riptide_options_create` (made by
    // `into_handle`) not used afterwards, per this function's contract.
    unsafe { destroy_handle(options) }
}

/// Applies `f` to the options behind `options`; on failure they are left as they were.
///
/// # Safety
///
/// `options` is NULL or a live handle not used concurrently; `errmsg` is NULL or writable.
unsafe fn set(
    options: *mut riptide_options_t,
    errmsg: *mut *mut c_char,
    f: impl FnOnce(Options) -> CResult<Options>,
) -> riptide_status_t {
    // SAFETY: `errmsg` is NULL or writable, per this function's contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: `options` is NULL or a live handle used by this call alone, per this
            // function's contract.
            let h = arg_mut(options, "options")?;
            h.opts = f(h.opts.clone())?;
            Ok(())
        })
    }
}

/// Sets the option called `name` (one of `riptide_option_at`'s, e.g. `"block_cache_size"`)
/// to the value `value` reads as: for `RIPTIDE_OPTION_BOOL` `ON`/`OFF` (also `TRUE`/`FALSE`,
/// `YES`/`NO`, `1`/`0`); for the integer types a decimal number (unsigned ones may end in
/// `K`, `M`, `G` or `T`: binary multiples); for `RIPTIDE_OPTION_DOUBLE` a number; for
/// `RIPTIDE_OPTION_ENUM` one of the option's `enum_names` (any case). An unknown name, a
/// value that does not read as the option's type or lies outside its bounds is
/// `RIPTIDE_INVALID_ARGUMENT` with a message naming the option; the options are then left as
/// they were.
///
/// # Safety
///
/// `options` is NULL or a live options handle; `name` and `value` are NULL or NUL-terminated
/// strings; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_by_name(
    options: *mut riptide_options_t,
    name: *const c_char,
    value: *const c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: `options` and `errmsg` are as `set` requires, per this function's contract.
    unsafe {
        set(options, errmsg, |o| {
            // SAFETY: `name` is NULL or NUL-terminated, per this function's contract.
            let name = c_str(name, "name")?;
            // SAFETY: `value` is NULL or NUL-terminated, per this function's contract.
            let value = c_str(value, "value")?;
            o.set_by_name(name, value)
        })
    }
}

/// Option value type: on or off (`default_value` 0 or 1).
pub const RIPTIDE_OPTION_BOOL: i32 = 0;
/// Option value type: an unsigned integer that fits in 32 bits (`min`, `max`,
/// `default_value`).
pub const RIPTIDE_OPTION_UINT32: i32 = 1;
/// Option value type: an unsigned 64-bit integer (`min`, `max`, `default_value`).
pub const RIPTIDE_OPTION_UINT64: i32 = 2;
/// Option value type: a signed 64-bit integer (`min_int`, `max_int`, `default_int`).
pub const RIPTIDE_OPTION_INT64: i32 = 3;
/// Option value type: a double (`min_double`, `max_double`, `default_double`).
pub const RIPTIDE_OPTION_DOUBLE: i32 = 4;
/// Option value type: one of `enum_names` (`default_value` is the default's index; `min` 0,
/// `max` the last index).
pub const RIPTIDE_OPTION_ENUM: i32 = 5;
/// Option value type: text (`default_text`, NULL for none).
pub const RIPTIDE_OPTION_TEXT: i32 = 6;

/// Option flag: one value per session (connection); the global value is the default of new
/// sessions.
pub const RIPTIDE_OPTION_SESSION: u32 = 1;
/// Option flag: may change while the server runs (else it is read at startup only); in
/// `riptide_option_at`'s table, the engine options `riptide_db_set_option` takes.
pub const RIPTIDE_OPTION_DYNAMIC: u32 = 2;
/// Option flag: an engine option, applied with `riptide_options_set_by_name` under the same
/// name before `riptide_db_open`. A server option without it is read by the server itself
/// (its `doc` says what for).
pub const RIPTIDE_OPTION_ENGINE: u32 = 4;

/// One entry of an option table (`riptide_option_at`, `riptide_server_option_at`). Owned by
/// the library, valid and unchanged for the life of the process. Fields are only ever added
/// at the end.
#[repr(C)]
pub struct riptide_option_t {
    /// The name, NUL-terminated (a server shows `riptide_<name>`).
    pub name: *const c_char,
    /// One line saying what the option does, its unit, and the nearest RocksDB option.
    pub doc: *const c_char,
    /// One of the `RIPTIDE_OPTION_BOOL` .. `RIPTIDE_OPTION_TEXT` constants.
    pub value_type: i32,
    /// `RIPTIDE_OPTION_SESSION`, `RIPTIDE_OPTION_DYNAMIC`, `RIPTIDE_OPTION_ENGINE`, or'ed.
    pub flags: u32,
    /// Smallest value of a bool, unsigned or enum option (0 for bool and enum).
    pub min: u64,
    /// Largest value of a bool, unsigned or enum option (1 for bool, the last index for enum).
    pub max: u64,
    /// Default of a bool (0 or 1), unsigned or enum (index) option.
    pub default_value: u64,
    /// Smallest value of a `RIPTIDE_OPTION_INT64` option.
    pub min_int: i64,
    /// Largest value of a `RIPTIDE_OPTION_INT64` option.
    pub max_int: i64,
    /// Default of a `RIPTIDE_OPTION_INT64` option.
    pub default_int: i64,
    /// Smallest value of a `RIPTIDE_OPTION_DOUBLE` option.
    pub min_double: f64,
    /// Largest value of a `RIPTIDE_OPTION_DOUBLE` option.
    pub max_double: f64,
    /// Default of a `RIPTIDE_OPTION_DOUBLE` option.
    pub default_double: f64,
    /// The default as `riptide_options_set_by_name` reads it (`ON`, `67108864`, `interval`),
    /// for every type; NULL for a text option without a default.
    pub default_text: *const c_char,
    /// The value names of a `RIPTIDE_OPTION_ENUM` option in index order, followed by a NULL;
    /// NULL for other types.
    pub enum_names: *const *const c_char,
    /// How many names `enum_names` holds (0 for other types).
    pub enum_count: usize,
}

/// An option table in its C form, with the strings and name arrays its entries point into.
struct CTable {
    entries: Vec<riptide_option_t>,
    _strings: Vec<CString>,
    _name_arrays: Vec<Vec<*const c_char>>,
}

// SAFETY: the raw pointers of a `CTable` point into its own `CString`s and name arrays, whose
// heap buffers never move or change after the table is built (it is never mutated), so
// sharing it between threads shares only immutable data.
unsafe impl Sync for CTable {}
// SAFETY: as for `Sync`: the table owns everything its pointers point into.
unsafe impl Send for CTable {}

impl CTable {
    /// The C form of `options`: (name, doc, type, default, flags) each.
    fn new<'a>(
        options: impl Iterator<Item = (&'a str, &'a str, OptionType, OptionValue, u32)>,
    ) -> CTable {
        let mut strings = Vec::new();
        let mut name_arrays = Vec::new();
        let mut entries = Vec::new();
        /// A C copy of `s` kept in `strings`. Names and docs hold no NUL byte; a text
        /// default with one is cut there.
        fn keep(s: &str, strings: &mut Vec<CString>) -> *const c_char {
            let c = CString::new(s.split('\0').next().unwrap_or("")).unwrap_or_default();
            let p = c.as_ptr();
            strings.push(c);
            p
        }
        for (name, doc, ty, default, flags) in options {
            let mut e = riptide_option_t {
                name: keep(name, &mut strings),
                doc: keep(doc, &mut strings),
                value_type: RIPTIDE_OPTION_TEXT,
                flags,
                min: 0,
                max: 0,
                default_value: 0,
                min_int: 0,
                max_int: 0,
                default_int: 0,
                min_double: 0.0,
                max_double: 0.0,
                default_double: 0.0,
                default_text: match &default {
                    OptionValue::Text(None) => std::ptr::null(),
                    d => keep(&ty.format(d), &mut strings),
                },
                enum_names: std::ptr::null(),
                enum_count: 0,
            };
            match (ty, &default) {
                (OptionType::Bool, OptionValue::Bool(d)) => {
                    e.value_type = RIPTIDE_OPTION_BOOL;
                    e.max = 1;
                    e.default_value = u64::from(*d);
                }
                (OptionType::Unsigned { bits, min, max }, OptionValue::Unsigned(d)) => {
                    e.value_type = if bits <= 32 {
                        RIPTIDE_OPTION_UINT32
                    } else {
                        RIPTIDE_OPTION_UINT64
                    };
                    (e.min, e.max, e.default_value) = (min, max, *d);
                }
                (OptionType::Signed { min, max }, OptionValue::Signed(d)) => {
                    e.value_type = RIPTIDE_OPTION_INT64;
                    (e.min_int, e.max_int, e.default_int) = (min, max, *d);
                }
                (OptionType::Float { min, max }, OptionValue::Float(d)) => {
                    e.value_type = RIPTIDE_OPTION_DOUBLE;
                    (e.min_double, e.max_double, e.default_double) = (min, max, *d);
                }
                (OptionType::Enum { names }, OptionValue::Enum(d)) => {
                    e.value_type = RIPTIDE_OPTION_ENUM;
                    let mut array: Vec<*const c_char> =
                        names.iter().map(|n| keep(n, &mut strings)).collect();
                    array.push(std::ptr::null());
                    e.enum_names = array.as_ptr();
                    e.enum_count = names.len();
                    e.max = names.len().saturating_sub(1) as u64;
                    e.default_value = *d as u64;
                    name_arrays.push(array);
                }
                // Text, or a default of another type than the option's (the Rust tables'
                // tests rule that out): a text option.
                _ => {}
            }
            entries.push(e);
        }
        CTable {
            entries,
            _strings: strings,
            _name_arrays: name_arrays,
        }
    }

    fn at(&self, index: usize) -> *const riptide_option_t {
        self.entries
            .get(index)
            .map_or(std::ptr::null(), std::ptr::from_ref)
    }
}

/// `riptide::Options::TABLE` in C form.
static ENGINE_OPTIONS: LazyLock<CTable> = LazyLock::new(|| {
    CTable::new(Options::TABLE.iter().map(|o| {
        (
            o.name,
            o.doc,
            o.value_type,
            o.default_value(),
            if o.is_dynamic() {
                RIPTIDE_OPTION_ENGINE | RIPTIDE_OPTION_DYNAMIC
            } else {
                RIPTIDE_OPTION_ENGINE
            },
        )
    }))
});

/// `riptide_handler::server_options()` in C form.
static SERVER_OPTIONS: LazyLock<CTable> = LazyLock::new(|| {
    CTable::new(riptide_handler::server_options().iter().map(|o| {
        let mut flags = 0;
        if o.scope == Scope::Session {
            flags |= RIPTIDE_OPTION_SESSION;
        }
        if o.dynamic {
            flags |= RIPTIDE_OPTION_DYNAMIC;
        }
        if o.target == Target::Engine {
            flags |= RIPTIDE_OPTION_ENGINE;
        }
        (o.name, o.doc, o.value_type, o.default.clone(), flags)
    }))
});

/// How many engine options there are (`riptide_option_at`).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_option_count() -> usize {
    guard_value(0, || ENGINE_OPTIONS.entries.len())
}

/// The engine option number `index` (0 .. `riptide_option_count()` - 1), NULL past the
/// end: every option `riptide_options_set_by_name` accepts, with the engine's defaults.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_option_at(index: usize) -> *const riptide_option_t {
    guard_value(std::ptr::null(), || ENGINE_OPTIONS.at(index))
}

/// How many options a MariaDB server exposes (`riptide_server_option_at`).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_server_option_count() -> usize {
    guard_value(0, || SERVER_OPTIONS.entries.len())
}

/// The server option number `index` (0 .. `riptide_server_option_count()` - 1), NULL past
/// the end: what the MariaDB plugin declares as its system variable `riptide_<name>`, with
/// the server's defaults. Those flagged `RIPTIDE_OPTION_ENGINE` are applied with
/// `riptide_options_set_by_name`; `lock_wait_timeout` (`RIPTIDE_OPTION_SESSION`, seconds) is
/// the row lock wait limit of a session (`riptide_hsession_set_lock_timeout`); `data_dir` is
/// the directory the server opens (its own default when empty).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_server_option_at(index: usize) -> *const riptide_option_t {
    guard_value(std::ptr::null(), || SERVER_OPTIONS.at(index))
}

/// Stores in `*value` the value engine option `name` has now in the open database `db`,
/// as text in the form `riptide_options_set_by_name` reads (`8`, `64M` as `67108864`,
/// `lz4`, `ON`; an empty string for a text option left unset), NUL-terminated, to free
/// with `riptide_free`. What it was opened with, or what `riptide_db_set_option` changed
/// it to since. An unknown name is `RIPTIDE_INVALID_ARGUMENT` and `*value` is NULL.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `name` is NULL or a NUL-terminated string;
/// `value` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_option_value(
    db: *mut riptide_db_t,
    name: *const c_char,
    value: *mut *mut c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: `errmsg` is NULL or writable, per this function's contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: `value` is NULL or writable, `name` NULL or a NUL-terminated string
            // and `db` NULL or a live handle, per this function's contract.
            let out = Out::new(value, "value")?;
            out.set(std::ptr::null_mut());
            let name = c_str(name, "name")?;
            let text = arg_ref(db, "db")?.with(|db| {
                let v = db.option_value(name)?;
                let spec = Options::option(name).ok_or_else(|| {
                    riptide::Error::invalid_argument(format!("unknown option {name:?}"))
                })?;
                Ok(spec.value_type.format(&v))
            })?;
            out.set(malloc_string(&text)?);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::ptr::null_mut;

    /// `SYSVAR_CAPACITY` of `plugin-shim/sysvars.cc`: the plugin declares at most this many
    /// system variables (and fails its init beyond it, after the server has already refused
    /// any option given for the ones left out).
    const SHIM_SYSVAR_CAPACITY: usize = 64;

    #[test]
    fn every_server_option_fits_the_shim_sysvar_table() {
        let n = super::riptide_server_option_count();
        assert!(
            n <= SHIM_SYSVAR_CAPACITY,
            "{n} server options, the shim holds {SHIM_SYSVAR_CAPACITY}: raise SYSVAR_CAPACITY \
             in plugin-shim/sysvars.cc and SHIM_SYSVAR_CAPACITY here"
        );
    }

    use super::*;

    #[test]
    fn unknown_values_and_bad_numbers_are_invalid_arguments() {
        use riptide_status_t::{RIPTIDE_INVALID_ARGUMENT as INVALID, RIPTIDE_OK as OK};
        let o = riptide_options_create();
        assert!(!o.is_null());
        let set = |name: &std::ffi::CStr, value: &std::ffi::CStr| {
            // SAFETY: `o` is a live options handle until it is destroyed at the end of the
            // test; the strings are NUL-terminated; a NULL errmsg is allowed.
            unsafe { riptide_options_set_by_name(o, name.as_ptr(), value.as_ptr(), null_mut()) }
        };
        assert_eq!(set(c"sync_mode", c"7"), INVALID);
        assert_eq!(set(c"sync_interval_ms", c"0"), INVALID);
        assert_eq!(set(c"sync_interval_ms", c"100"), OK);
        assert_eq!(set(c"sync_mode", c"none"), OK);
        assert_eq!(set(c"compression", c"lz4"), INVALID);
        assert_eq!(set(c"compression_level", c"1000"), INVALID);
        assert_eq!(set(c"compression_level", c"3"), OK);
        assert_eq!(set(c"compression", c"zstd"), OK);
        assert_eq!(set(c"recovery_mode", c"3"), INVALID);
        assert_eq!(set(c"recovery_mode", c"point_in_time"), OK);
        assert_eq!(set(c"bloom_bits_per_key", c"65"), INVALID);
        assert_eq!(set(c"level_size_ratio", c"NaN"), INVALID);
        assert_eq!(set(c"tombstone_ratio_trigger", c"inf"), INVALID);
        assert_eq!(set(c"block_size", c"18446744073709551615"), INVALID);
        assert_eq!(set(c"max_open_files", c"64"), OK);
        assert_eq!(set(c"create_if_missing", c"maybe"), INVALID);
        // SAFETY: `o` is live and freed once.
        unsafe { riptide_options_destroy(o) };
    }

    /// The NUL-terminated string at `p`.
    fn text(p: *const c_char) -> String {
        assert!(!p.is_null());
        // SAFETY: the option tables hold NUL-terminated strings for the process's life.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }

    /// The entries of a table exported as `count()` / `at(i)`.
    fn entries(
        count: extern "C" fn() -> usize,
        at: extern "C" fn(usize) -> *const riptide_option_t,
    ) -> Vec<&'static riptide_option_t> {
        assert!(at(count()).is_null(), "past the end is NULL");
        (0..count())
            // SAFETY: a non-NULL entry lives as long as the process and never changes.
            .map(|i| unsafe { at(i).as_ref() }.unwrap())
            .collect()
    }

    #[test]
    fn the_engine_table_is_options_table_and_its_defaults_set_by_name() {
        let table = entries(riptide_option_count, riptide_option_at);
        assert_eq!(table.len(), Options::TABLE.len());
        let o = riptide_options_create();
        for (e, spec) in table.iter().zip(Options::TABLE) {
            assert_eq!(text(e.name), spec.name);
            assert_eq!(text(e.doc), spec.doc);
            let dynamic = if spec.is_dynamic() {
                RIPTIDE_OPTION_DYNAMIC
            } else {
                0
            };
            assert_eq!(e.flags, RIPTIDE_OPTION_ENGINE | dynamic, "{}", spec.name);
            let name = CString::new(spec.name).unwrap();
            // SAFETY: `o` is a live handle; the strings are NUL-terminated.
            let st = unsafe {
                riptide_options_set_by_name(o, name.as_ptr(), e.default_text, null_mut())
            };
            assert_eq!(st, riptide_status_t::RIPTIDE_OK, "{}", spec.name);
            match e.value_type {
                RIPTIDE_OPTION_ENUM => {
                    // SAFETY: `enum_names` holds `enum_count` names and a NULL.
                    let names =
                        unsafe { std::slice::from_raw_parts(e.enum_names, e.enum_count + 1) };
                    assert!(names[e.enum_count].is_null());
                    assert_eq!(text(names[e.default_value as usize]), text(e.default_text));
                }
                RIPTIDE_OPTION_UINT32 => assert!(e.max <= u64::from(u32::MAX), "{}", spec.name),
                RIPTIDE_OPTION_BOOL
                | RIPTIDE_OPTION_UINT64
                | RIPTIDE_OPTION_INT64
                | RIPTIDE_OPTION_DOUBLE => {}
                other => panic!("{}: type {other}", spec.name),
            }
        }
        // SAFETY: `o` is live and freed once.
        unsafe { riptide_options_destroy(o) };
        let by_name = |n: &str| *table.iter().find(|e| text(e.name) == n).unwrap();
        let cache = by_name("block_cache_size");
        assert_eq!(
            (cache.value_type, cache.min, cache.max),
            (RIPTIDE_OPTION_UINT64, 1 << 20, 1 << 40)
        );
        assert_eq!(cache.default_value, 64 << 20);
        let level = by_name("compression_level");
        assert_eq!(
            (level.value_type, level.default_int, level.max_int),
            (RIPTIDE_OPTION_INT64, 1, 22)
        );
        let ratio = by_name("level_size_ratio");
        assert_eq!(
            (ratio.value_type, ratio.default_double),
            (RIPTIDE_OPTION_DOUBLE, 10.0)
        );
        assert_eq!(text(by_name("sync_mode").default_text), "full");
    }

    #[test]
    fn the_server_table_has_the_server_defaults_and_flags() {
        let table = entries(riptide_server_option_count, riptide_server_option_at);
        assert_eq!(table.len(), riptide_handler::server_options().len());
        let by_name = |n: &str| *table.iter().find(|e| text(e.name) == n).unwrap();
        let sync = by_name("sync_mode");
        assert_eq!(
            (sync.value_type, sync.default_value, sync.flags),
            (
                RIPTIDE_OPTION_ENUM,
                1,
                RIPTIDE_OPTION_ENGINE | RIPTIDE_OPTION_DYNAMIC
            )
        );
        assert_eq!(text(sync.default_text), "interval");
        assert_eq!(sync.enum_count, 3);
        let timeout = by_name("lock_wait_timeout");
        assert_eq!(
            timeout.flags,
            RIPTIDE_OPTION_SESSION | RIPTIDE_OPTION_DYNAMIC
        );
        assert_eq!(
            (
                timeout.value_type,
                timeout.min,
                timeout.max,
                timeout.default_value
            ),
            (RIPTIDE_OPTION_UINT64, 1, 1 << 30, 50)
        );
        let dir = by_name("data_dir");
        assert_eq!((dir.value_type, dir.flags), (RIPTIDE_OPTION_TEXT, 0));
        assert!(dir.default_text.is_null());
        let young = by_name("young_space_bound");
        assert_eq!(
            (young.value_type, young.max, young.default_value),
            (RIPTIDE_OPTION_BOOL, 1, 1)
        );
        assert_eq!(text(young.default_text), "ON");
    }

    #[test]
    fn set_by_name_refuses_bad_input_naming_the_option_and_keeps_the_options() {
        let o = riptide_options_create();
        let get = |name: &str| {
            // SAFETY: `o` is a live handle used by this thread only.
            let h = unsafe { &*o };
            Options::option(name).unwrap().get(&h.opts).to_string()
        };
        let set = |name: &str, value: &str| -> (riptide_status_t, String) {
            let (n, v) = (CString::new(name).unwrap(), CString::new(value).unwrap());
            let mut msg: *mut c_char = null_mut();
            // SAFETY: `o` is live; the strings are NUL-terminated; `msg` is writable.
            let st = unsafe { riptide_options_set_by_name(o, n.as_ptr(), v.as_ptr(), &mut msg) };
            let text = if msg.is_null() {
                String::new()
            } else {
                text(msg)
            };
            // SAFETY: `msg` is NULL or a message from the library, freed once.
            unsafe { crate::memory::riptide_free(msg.cast()) };
            (st, text)
        };
        assert_eq!(
            set("block_cache_size", "128M").0,
            riptide_status_t::RIPTIDE_OK
        );
        assert_eq!(set("sync_mode", "interval").0, riptide_status_t::RIPTIDE_OK);
        let (st, msg) = set("block_cache_size", "1K");
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        assert!(
            msg.contains("block_cache_size") && msg.contains("below the minimum"),
            "{msg}"
        );
        let (st, msg) = set("no_such_thing", "1");
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        assert!(msg.contains("unknown option `no_such_thing`"), "{msg}");
        let (st, msg) = set("sync_mode", "sometimes");
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        assert!(msg.contains("none, interval, full"), "{msg}");
        // The failures changed nothing.
        assert_eq!(get("block_cache_size"), (128u64 << 20).to_string());
        assert_eq!(get("sync_mode"), "1");
        let mut msg: *mut c_char = null_mut();
        // SAFETY: NULL strings are allowed by the contract; `msg` is writable.
        let st =
            unsafe { riptide_options_set_by_name(o, std::ptr::null(), std::ptr::null(), &mut msg) };
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        assert!(text(msg).contains("`name`"));
        // SAFETY: `msg` came from the library and is freed once; `o` is live and freed once.
        unsafe {
            crate::memory::riptide_free(msg.cast());
            riptide_options_destroy(o);
        }
    }

    #[test]
    fn set_by_name_rejects_a_null_handle_naming_it() {
        let mut msg: *mut c_char = std::ptr::null_mut();
        // SAFETY: NULL options is allowed by the contract; the strings are NUL-terminated;
        // `msg` is writable.
        let st = unsafe {
            riptide_options_set_by_name(
                std::ptr::null_mut(),
                c"write_buffer_size".as_ptr(),
                c"1M".as_ptr(),
                &mut msg,
            )
        };
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        // SAFETY: `msg` is a NUL-terminated message from the library.
        let text = unsafe { std::ffi::CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned();
        assert!(text.contains("`options`"), "{text}");
        // SAFETY: `msg` came from the library and is freed once.
        unsafe { crate::memory::riptide_free(msg.cast()) };
        // SAFETY: NULL is a no-op.
        unsafe { riptide_options_destroy(std::ptr::null_mut()) };
    }
}
