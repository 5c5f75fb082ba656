//! Every table's indexes with their sizes on disk by level, for
//! `information_schema.RIPTIDE_TABLES`: `riptide_handler_tables` makes a list, read with
//! `riptide_table_list_count` / `riptide_table_list_at`, freed by
//! `riptide_table_list_destroy`.

use std::ffi::{CString, c_char};

use riptide_handler::{IndexKind, TableIndexInfo};

use crate::ffi_util::{ErrMsg, Out, arg_ref, destroy_handle, into_handle};
use crate::handler_engine::riptide_handler_t;
use crate::handler_util::hguard;
use crate::status::riptide_status_t;

/// One index of one table (see `riptide_handler_tables`). Strings and the level array
/// belong to the list and live until it is destroyed.
#[repr(C)]
#[derive(Debug)]
pub struct riptide_table_index_info_t {
    /// The table's name as the caller created it (MariaDB: `./db/table`).
    pub table: *const c_char,
    /// The index's name.
    pub index: *const c_char,
    /// The index's id (the 4-byte prefix of its keys).
    pub index_id: u32,
    /// `PRIMARY`, `HIDDEN_PRIMARY` or `SECONDARY`.
    pub kind: *const c_char,
    /// Whether duplicates are refused.
    pub unique: bool,
    /// Number of key parts.
    pub key_parts: u16,
    /// The table's row estimate (the same on every index of the table).
    pub rows: u64,
    /// Bytes of table files holding the index's keys, per level (`[0]` is L0): `levels`
    /// values.
    pub level_bytes: *const u64,
    /// Number of values in `level_bytes`.
    pub levels: usize,
}

/// The indexes of every table (opaque): made by `riptide_handler_tables`.
pub struct riptide_table_list_t {
    rows: Vec<riptide_table_index_info_t>,
    /// Owned storage the rows point into, boxed so the addresses stay put.
    _strings: Vec<CString>,
    _levels: Vec<Box<[u64]>>,
}

// SAFETY: the raw pointers in `rows` point into the list's own boxed storage (never changed
// after construction) or to static strings; nothing is shared mutably.
unsafe impl Send for riptide_table_list_t {}

impl riptide_table_list_t {
    fn new(infos: Vec<TableIndexInfo>) -> Self {
        let mut list = riptide_table_list_t {
            rows: Vec::with_capacity(infos.len()),
            _strings: Vec::new(),
            _levels: Vec::new(),
        };
        for i in infos {
            let table = list.string(&i.table);
            let index = list.string(i.index.as_bytes());
            let levels: Box<[u64]> = i.level_bytes.into_boxed_slice();
            let (level_bytes, count) = (levels.as_ptr(), levels.len());
            list._levels.push(levels);
            list.rows.push(riptide_table_index_info_t {
                table,
                index,
                index_id: i.index_id,
                kind: match i.kind {
                    IndexKind::Primary => c"PRIMARY",
                    IndexKind::HiddenPk => c"HIDDEN_PRIMARY",
                    IndexKind::Secondary => c"SECONDARY",
                }
                .as_ptr(),
                unique: i.unique,
                key_parts: i.key_parts,
                rows: i.rows,
                level_bytes,
                levels: count,
            });
        }
        list
    }

    /// A C copy of `bytes` kept by the list (cut at a NUL byte, which names do not hold).
    fn string(&mut self, bytes: &[u8]) -> *const c_char {
        let cut = bytes.split(|&b| b == 0).next().unwrap_or_default();
        let c = CString::new(cut.to_vec()).unwrap_or_default();
        let p = c.as_ptr();
        self._strings.push(c);
        p
    }
}

/// Lists every index of every table of the handler layer's dictionary, tables in name
/// order, each with the table's row estimate and the bytes of table files holding the
/// index's keys per level (from the files' index blocks; memtables not counted). Opens
/// each table. On success `*list` is a new list to free with `riptide_table_list_destroy`;
/// on failure it is NULL.
///
/// # Safety
///
/// `handler` is NULL or a live handler engine; `list` is writable; `errmsg` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_tables(
    handler: *const riptide_handler_t,
    list: *mut *mut riptide_table_list_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler` and the
    // out-parameters `list` and `errmsg`.
    let (handler, out, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            Out::new(list, "list"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let out = out?;
        out.set(std::ptr::null_mut());
        let infos = handler?.engine.table_indexes()?;
        out.set(into_handle(riptide_table_list_t::new(infos)));
        Ok(())
    })
}

/// How many indexes `list` holds (0 for NULL).
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_table_list_count(list: *const riptide_table_list_t) -> usize {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe { crate::ffi_util::query(list, 0, |l| l.rows.len()) }
}

/// Index `index` of `list` (NULL past the end or for a NULL list); valid until the list is
/// destroyed.
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_table_list_at(
    list: *const riptide_table_list_t,
    index: usize,
) -> *const riptide_table_index_info_t {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe {
        crate::ffi_util::query(list, std::ptr::null(), |l| {
            l.rows
                .get(index)
                .map_or(std::ptr::null(), |r| r as *const _)
        })
    }
}

/// Frees a list of `riptide_handler_tables` (NULL: nothing).
///
/// # Safety
///
/// `list` is NULL or a live list, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_table_list_destroy(list: *mut riptide_table_list_t) {
    // SAFETY: per `# Safety`, `list` follows the freed handle rule.
    unsafe { destroy_handle(list) }
}
