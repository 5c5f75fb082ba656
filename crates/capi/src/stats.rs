//! Statistics: the table of `riptide::Statistics::TABLE` (name, doc, kind per statistic)
//! followed by the library's own (`calls::LIBRARY_STATS`), every value filled in one call,
//! and the text report. Nothing here is declared per statistic.

use std::ffi::{CString, c_char};
use std::sync::LazyLock;

use riptide::{Error, StatKind, StatValue, Statistics};

use crate::calls::LIBRARY_STATS;
use crate::db::riptide_db_t;
use crate::ffi_util::{Out, arg_ref, guard, guard_value, null_arg};
use crate::memory::malloc_string;
use crate::status::riptide_status_t;

/// Statistic kind: a count since the database was opened (only grows).
pub const RIPTIDE_STAT_COUNTER: i32 = 0;
/// Statistic kind: a value now (bytes held, things open or running).
pub const RIPTIDE_STAT_GAUGE: i32 = 1;
/// Statistic kind: a ratio derived from other statistics (read `ratio` of its value).
pub const RIPTIDE_STAT_RATIO: i32 = 2;

/// One statistic of the table (`riptide_stat_at`). Owned by the library, valid and unchanged
/// for the life of the process. Fields are only ever added at the end.
#[repr(C)]
pub struct riptide_stat_t {
    /// The name, NUL-terminated (`keys_written`; MariaDB shows `Riptide_<name>`).
    pub name: *const c_char,
    /// What it measures, in one line.
    pub doc: *const c_char,
    /// `RIPTIDE_STAT_COUNTER`, `RIPTIDE_STAT_GAUGE` or `RIPTIDE_STAT_RATIO`.
    pub kind: i32,
}

/// The value of one statistic, as `riptide_stats_fill` stores it: `integer` for a counter
/// or gauge, `ratio` for a ratio.
#[repr(C)]
#[derive(Clone, Copy)]
pub union riptide_stat_value_t {
    /// The value of a `RIPTIDE_STAT_COUNTER` or `RIPTIDE_STAT_GAUGE`.
    pub integer: u64,
    /// The value of a `RIPTIDE_STAT_RATIO`.
    pub ratio: f64,
}

/// `Statistics::TABLE` in C form, with the strings its entries point into.
struct StatTable {
    entries: Vec<riptide_stat_t>,
    _strings: Vec<CString>,
}

// SAFETY: the raw pointers of a `StatTable` point into its own `CString`s, whose heap buffers
// never move or change after the table is built (it is never mutated), so sharing it between
// threads shares only immutable data.
unsafe impl Sync for StatTable {}
// SAFETY: as for `Sync`: the table owns everything its pointers point into.
unsafe impl Send for StatTable {}

static STATS: LazyLock<StatTable> = LazyLock::new(|| {
    let mut strings = Vec::new();
    let mut keep = |s: &str| {
        // Names and docs hold no NUL byte (the riptide crate's tests check the names).
        let c = CString::new(s).unwrap_or_default();
        let p = c.as_ptr();
        strings.push(c);
        p
    };
    let mut entries: Vec<riptide_stat_t> = Statistics::TABLE
        .iter()
        .map(|s| riptide_stat_t {
            name: keep(s.name),
            doc: keep(s.doc),
            kind: kind_code(s.kind),
        })
        .collect();
    entries.extend(
        LIBRARY_STATS
            .iter()
            .map(|(name, doc, kind, _)| riptide_stat_t {
                name: keep(name),
                doc: keep(doc),
                kind: kind_code(*kind),
            }),
    );
    StatTable {
        entries,
        _strings: strings,
    }
});

/// The C code of a statistic's kind.
fn kind_code(kind: StatKind) -> i32 {
    match kind {
        StatKind::Counter => RIPTIDE_STAT_COUNTER,
        StatKind::Gauge => RIPTIDE_STAT_GAUGE,
        StatKind::Ratio => RIPTIDE_STAT_RATIO,
    }
}

/// How many statistics there are (`riptide_stat_at`, `riptide_stats_fill`).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_stat_count() -> usize {
    guard_value(0, || STATS.entries.len())
}

/// The statistic number `index` (0 .. `riptide_stat_count()` - 1), NULL past the end.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_stat_at(index: usize) -> *const riptide_stat_t {
    guard_value(std::ptr::null(), || {
        STATS
            .entries
            .get(index)
            .map_or(std::ptr::null(), std::ptr::from_ref)
    })
}

/// Fills `values[i]` with the value of statistic `i` (`riptide_stat_at(i)`), for `i` below
/// `count`, all from one snapshot of the engine. Pass `count = riptide_stat_count()`; a
/// smaller count gets the first statistics only, entries past the table get 0.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `values` is NULL or points to `count` writable
/// values; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_stats_fill(
    db: *mut riptide_db_t,
    values: *mut riptide_stat_value_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: `errmsg` is NULL or writable, per this function's contract.
    unsafe {
        guard(errmsg, || {
            if values.is_null() {
                return Err(null_arg("values"));
            }
            if count > isize::MAX as usize / std::mem::size_of::<riptide_stat_value_t>() {
                return Err(Error::invalid_argument(format!(
                    "count {count} of parameter `values` is too large"
                )));
            }
            // SAFETY: `db` is NULL or a live handle, per this function's contract.
            let stats = arg_ref(db, "db")?.with(|db| Ok(db.statistics()))?;
            // SAFETY: `values` is non-NULL (checked above) and points to `count` writable
            // values not otherwise accessed during the call, per this function's contract;
            // `riptide_stat_value_t` is plain data and `count` values fit in `isize`.
            let out = std::slice::from_raw_parts_mut(values, count);
            let mut specs = Statistics::TABLE.iter();
            let mut library = LIBRARY_STATS.iter();
            for slot in out {
                *slot = match specs.next().map(|s| s.value(&stats)) {
                    Some(StatValue::Ratio(ratio)) => riptide_stat_value_t { ratio },
                    Some(StatValue::Integer(integer)) => riptide_stat_value_t { integer },
                    None => riptide_stat_value_t {
                        integer: library.next().map_or(0, |(_, _, _, value)| value()),
                    },
                };
            }
            Ok(())
        })
    }
}

/// Stores in `*report` a multi-line, human-readable statistics report (counters, per-level
/// files and bytes, row locks), NUL-terminated, to free with `riptide_free`. This is what
/// `SHOW ENGINE RIPTIDE STATUS` prints.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `report` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_stats_report(
    db: *mut riptide_db_t,
    report: *mut *mut c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: `errmsg` is NULL or writable, per this function's contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: `report` is NULL or writable for the call, per this function's
            // contract; `db` (below) is NULL or a live handle, likewise.
            let out = Out::new(report, "report")?;
            out.set(std::ptr::null_mut());
            let text = arg_ref(db, "db")?.with(|db| Ok(db.statistics().to_string()))?;
            out.set(malloc_string(&text)?);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr::null_mut;

    use super::*;
    use crate::db::{riptide_db_destroy, riptide_db_open};
    use crate::kv::{riptide_get, riptide_put};
    use crate::memory::{riptide_free, riptide_free_value};

    fn text(p: *const c_char) -> String {
        assert!(!p.is_null());
        // SAFETY: the table holds NUL-terminated strings for the process's life.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The table's entry `i`.
    fn stat(i: usize) -> &'static riptide_stat_t {
        // SAFETY: a non-NULL entry lives as long as the process and never changes.
        unsafe { riptide_stat_at(i).as_ref() }.unwrap()
    }

    #[test]
    fn the_table_is_statistics_table_then_the_library_s() {
        let engine = Statistics::TABLE.len();
        assert_eq!(riptide_stat_count(), engine + LIBRARY_STATS.len());
        assert!(riptide_stat_at(riptide_stat_count()).is_null());
        for (i, (name, doc, kind, _)) in LIBRARY_STATS.iter().enumerate() {
            let e = stat(engine + i);
            assert_eq!(
                (text(e.name), text(e.doc)),
                (name.to_string(), doc.to_string())
            );
            assert_eq!(e.kind, kind_code(*kind), "{name}");
        }
        assert_eq!(
            stat(engine + 1).kind,
            RIPTIDE_STAT_GAUGE,
            "heap_allocated_bytes is a value now"
        );
        for (i, spec) in Statistics::TABLE.iter().enumerate() {
            let e = stat(i);
            assert_eq!(text(e.name), spec.name);
            assert_eq!(text(e.doc), spec.doc);
            let kind = match spec.kind {
                StatKind::Counter => RIPTIDE_STAT_COUNTER,
                StatKind::Gauge => RIPTIDE_STAT_GAUGE,
                StatKind::Ratio => RIPTIDE_STAT_RATIO,
            };
            assert_eq!(e.kind, kind, "{}", spec.name);
        }
    }

    #[test]
    fn fill_reports_every_value_from_one_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let path = CString::new(dir.path().to_str().unwrap()).unwrap();
        let mut db = null_mut();
        let mut msg: *mut c_char = null_mut();
        let index = |name: &str| (0..riptide_stat_count()).find(|&i| text(stat(i).name) == name);
        let n = riptide_stat_count();
        let mut values = vec![riptide_stat_value_t { integer: 7 }; n + 2];
        // SAFETY: `path` is NUL-terminated, NULL options mean the defaults, `db` and `msg`
        // are writable; `values` holds `n + 2` values; every handle is freed once at the end.
        unsafe {
            assert_eq!(
                riptide_db_open(path.as_ptr(), std::ptr::null(), &mut db, &mut msg),
                riptide_status_t::RIPTIDE_OK
            );
            for k in 0..10u8 {
                let key = [b'k', k];
                let st = riptide_put(
                    db,
                    std::ptr::null(),
                    key.as_ptr().cast(),
                    2,
                    key.as_ptr().cast(),
                    2,
                    &mut msg,
                );
                assert_eq!(st, riptide_status_t::RIPTIDE_OK);
            }
            let (mut v, mut len, mut found) = (null_mut(), 0usize, false);
            let st = riptide_get(
                db,
                std::ptr::null(),
                std::ptr::null(),
                c"k".as_ptr(),
                1,
                &mut v,
                &mut len,
                &mut found,
                &mut msg,
            );
            assert_eq!(st, riptide_status_t::RIPTIDE_OK);
            riptide_free_value(v, len);
            assert_eq!(
                riptide_stats_fill(db, values.as_mut_ptr(), n + 2, &mut msg),
                riptide_status_t::RIPTIDE_OK
            );
            assert_eq!(values[index("keys_written").unwrap()].integer, 10);
            assert_eq!(values[index("bytes_written").unwrap()].integer, 40);
            assert_eq!(values[index("gets").unwrap()].integer, 1);
            assert_eq!(values[index("lock_granted").unwrap()].integer, 0);
            let amp = values[index("write_amplification").unwrap()].ratio;
            assert!(amp > 1.0 && amp.is_finite(), "{amp}");
            // The library's counter of handler calls comes after the engine's statistics.
            crate::calls::count();
            assert!(
                values[index("handler_calls").unwrap()].integer
                    <= crate::calls::riptide_handler_calls()
            );
            // Past the table: zeros.
            assert_eq!(values[n].integer, 0);
            assert_eq!(values[n + 1].integer, 0);
            // A shorter array gets the first values only.
            let mut first = [riptide_stat_value_t { integer: 99 }; 1];
            assert_eq!(
                riptide_stats_fill(db, first.as_mut_ptr(), 1, &mut msg),
                riptide_status_t::RIPTIDE_OK
            );
            assert_eq!(first[0].integer, values[0].integer);
            assert_eq!(
                riptide_stats_fill(db, null_mut(), 1, &mut msg),
                riptide_status_t::RIPTIDE_INVALID_ARGUMENT
            );
            assert!(text(msg).contains("`values`"));
            riptide_free(msg.cast());
            assert_eq!(
                riptide_stats_fill(null_mut(), first.as_mut_ptr(), 1, &mut msg),
                riptide_status_t::RIPTIDE_INVALID_ARGUMENT
            );
            riptide_free(msg.cast());
            riptide_db_destroy(db);
        }
    }
}
