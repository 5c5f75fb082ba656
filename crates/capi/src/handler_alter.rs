//! In-place index changes through the C ABI (`ALTER TABLE ... ADD INDEX / DROP INDEX,
//! ALGORITHM=INPLACE` in the MariaDB plugin): `riptide_handler_begin_index_build`, then
//! `riptide_hbuild_add` per row and new index, `riptide_hbuild_finish`, and
//! `riptide_handler_commit_index_build` or `riptide_handler_abort_index_build`. An online
//! build (`LOCK=NONE`) also calls `riptide_hbuild_capture_changes` before its snapshot, and
//! `riptide_hbuild_take_changed_rows` / `riptide_hbuild_changed_row` /
//! `riptide_hbuild_apply_change` after its finish. See the
//! `riptide_handler` crate's `alter` module for what each step writes.

use std::ffi::c_char;

use riptide::Error;
use riptide_handler::{BuildCheck, IndexBuild, IndexSlot, NewIndex};

use crate::ffi_util::{CResult, ErrMsg, Out, arg_mut, arg_ref, bytes, into_handle, opt_bytes};
use crate::handler_engine::{index_spec, riptide_handler_t, riptide_index_spec_t};
use crate::handler_util::hguard;
use crate::memory::malloc_bytes;
use crate::status::riptide_status_t;

/// A secondary index to add in place.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_new_index_t {
    /// Its spec (`kind` must be `RIPTIDE_INDEX_SECONDARY`).
    pub spec: riptide_index_spec_t,
    /// For a unique index: the offsets, in each key given to `riptide_hbuild_add`, of the
    /// NULL-indicator bytes of its nullable parts (a key with a 0 byte at one of them has a
    /// NULL part and never conflicts); `n_null_offsets` of them. NULL with 0 for none. Every
    /// key of one index must have the same length.
    pub null_offsets: *const u32,
    /// Number of `null_offsets`.
    pub n_null_offsets: usize,
}

/// Where an index of the changed table comes from (`riptide_handler_commit_index_build`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_index_slot_t {
    /// False: the index at `position` of the table's current index list; true: the build's
    /// new index at `position`.
    pub is_new: bool,
    /// The position.
    pub position: usize,
}

/// An in-place index build (opaque): made by `riptide_handler_begin_index_build`, ended
/// (and freed) by `riptide_handler_commit_index_build` or `riptide_handler_abort_index_build`.
/// One thread at a time.
pub struct riptide_hbuild_t {
    build: IndexBuild,
}

/// Reads the array `(items, n)` (NULL with `n` 0: empty).
///
/// # Safety
///
/// `(items, n)` follows the array rule (`ffi_util` module docs) for the call.
unsafe fn array<'a, T>(items: *const T, n: usize, name: &str) -> CResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if items.is_null() {
        return Err(Error::invalid_argument(format!(
            "parameter `{name}` is NULL but its count is {n}"
        )));
    }
    // SAFETY: not NULL, so by the array rule (this function's contract) `items` points to
    // `n` readable, initialised `T` that nothing writes during the call.
    Ok(unsafe { std::slice::from_raw_parts(items, n) })
}

/// Begins adding the `n` secondary indexes `indexes` to table `name` in place: allocates
/// their ids and records the build (a crash before the commit leaves no entry behind: the
/// next open removes them). `n` 0 begins a change that only drops indexes. On success
/// `*out` is the build. `RIPTIDE_NOT_FOUND` if the table does not exist.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(name, name_len)` is NULL or `name_len`
/// readable bytes; `(indexes, n)` is NULL with `n` 0 or `n` readable `riptide_new_index_t`,
/// each with a `spec.name` NULL or NUL-terminated and `(null_offsets, n_null_offsets)`
/// NULL with 0 or that many readable `u32`; `out` is NULL or writable; `errmsg` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_begin_index_build(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    indexes: *const riptide_new_index_t,
    n: usize,
    out: *mut *mut riptide_hbuild_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name`, the array `indexes`, the out-parameters `out` and `errmsg`.
    let (handler, name, indexes, out, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            array(indexes, n, "indexes"),
            Out::new(out, "out"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, name, indexes, out) = (handler?, name?, indexes?, out?);
        let mut list = Vec::with_capacity(indexes.len());
        for (i, ix) in indexes.iter().enumerate() {
            // SAFETY: per `# Safety`, each `spec.name` is NULL or NUL-terminated, and each
            // `(null_offsets, n_null_offsets)` follows the array rule.
            let (spec, offsets) = unsafe {
                (
                    index_spec(i, &ix.spec, "indexes")?,
                    array(ix.null_offsets, ix.n_null_offsets, "null_offsets")?,
                )
            };
            list.push(NewIndex {
                spec,
                null_offsets: offsets.iter().map(|&o| o as usize).collect(),
            });
        }
        let build = h.engine.begin_index_build(name, &list)?;
        out.set(into_handle(riptide_hbuild_t { build }));
        Ok(())
    })
}

/// Makes the build's commit (`riptide_handler_commit_index_build`) record `(data, len)` as
/// the table's caller data (read back with `riptide_htable_caller_data`), in the same batch
/// as the index change. A build may add and drop no index and only record caller data.
///
/// # Safety
///
/// `build` is NULL or a live build handle used by no other thread; `(data, len)` is NULL or
/// that many readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbuild_set_caller_data(
    build: *mut riptide_hbuild_t,
    data: *const c_char,
    len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `build`, the byte
    // string `data` and the out-parameter `errmsg`.
    let (build, data, errmsg) = unsafe {
        (
            arg_mut(build, "build"),
            bytes(data, len, "data"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        build?.build.set_caller_data(data?);
        Ok(())
    })
}

/// Adds one row's entry to the build's new index `index`: its key `(key, key_len)` (as a
/// `riptide_hkey_t` of that index would carry it) and the row's primary key `(pk,
/// pk_len)`. Entries are written in batches, outside any transaction.
///
/// # Safety
///
/// `build` is NULL or a live build handle used by no other thread; `(key, key_len)` and
/// `(pk, pk_len)` are NULL or that many readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbuild_add(
    build: *mut riptide_hbuild_t,
    index: usize,
    key: *const c_char,
    key_len: usize,
    pk: *const c_char,
    pk_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `build`, the byte
    // strings `key` and `pk`, and the out-parameter `errmsg`.
    let (build, key, pk, errmsg) = unsafe {
        (
            arg_mut(build, "build"),
            bytes(key, key_len, "key"),
            bytes(pk, pk_len, "pk"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        build?.build.add(index, key?, pk?)?;
        Ok(())
    })
}

/// Makes `build` online (`ALTER TABLE ... ADD INDEX, LOCK=NONE`): from now on the table
/// records the primary key of every row writers change, so that the rows can be read at
/// one snapshot while writes go on; after `riptide_hbuild_finish`,
/// `riptide_hbuild_take_changed_rows` gives those keys. Call it while no transaction has
/// written the table (MariaDB: the exclusive metadata lock of the ALTER's prepare), before
/// the build's snapshot. `RIPTIDE_NOT_SUPPORTED` for a build that adds a unique index;
/// `RIPTIDE_BUSY` if the table changed since the build began.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `build` is NULL or a live build handle used
/// by no other thread; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbuild_capture_changes(
    handler: *mut riptide_handler_t,
    build: *mut riptide_hbuild_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `handler` and
    // `build` and the out-parameter `errmsg`.
    let (handler, build, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            arg_mut(build, "build"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, build) = (handler?, build?);
        h.engine.capture_build_changes(&mut build.build)?;
        Ok(())
    })
}

/// An online build, after `riptide_hbuild_finish` and once the table's writers are kept
/// out: takes the primary keys of the rows changed since `riptide_hbuild_capture_changes`
/// (in ascending order); `*count` is how many, each then read with
/// `riptide_hbuild_changed_row`. `RIPTIDE_INVALID_ARGUMENT` if the build is not online;
/// `RIPTIDE_NOT_SUPPORTED` if more rows changed than the record holds (128 MiB of keys).
///
/// # Safety
///
/// `build` is NULL or a live build handle used by no other thread; `count` and `errmsg`
/// are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbuild_take_changed_rows(
    build: *mut riptide_hbuild_t,
    count: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `build` and the
    // out-parameters `count` and `errmsg`.
    let (build, count, errmsg) = unsafe {
        (
            arg_mut(build, "build"),
            Out::new(count, "count"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (build, count) = (build?, count?);
        count.set(build.build.take_changed_rows()?);
        Ok(())
    })
}

/// The primary key of changed row `i` (below the count of
/// `riptide_hbuild_take_changed_rows`): `*pk` points to `*pk_len` bytes owned by the
/// build, valid until its next take or its end. `RIPTIDE_INVALID_ARGUMENT` for an `i` out
/// of range.
///
/// # Safety
///
/// `build` is NULL or a live build handle used by no other thread; `pk`, `pk_len` and
/// `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbuild_changed_row(
    build: *mut riptide_hbuild_t,
    i: usize,
    pk: *mut *const c_char,
    pk_len: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `build` and the
    // out-parameters.
    let (build, pk, pk_len, errmsg) = unsafe {
        (
            arg_mut(build, "build"),
            Out::new(pk, "pk"),
            Out::new(pk_len, "pk_len"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (build, pk, pk_len) = (build?, pk?, pk_len?);
        let key = build
            .build
            .changed_row(i)
            .ok_or_else(|| Error::invalid_argument(format!("changed row #{i} does not exist")))?;
        pk.set(key.as_ptr().cast::<c_char>());
        pk_len.set(key.len());
        Ok(())
    })
}

/// Brings new index `index`'s entry of the row with primary key `(pk, pk_len)` from the key
/// `(old_key, old_len)` (its key at the build's snapshot; NULL: no row then) to `(new_key,
/// new_len)` (its key now; NULL: no row now). Equal keys write nothing. Only after
/// `riptide_hbuild_finish`.
///
/// # Safety
///
/// `build` is NULL or a live build handle used by no other thread; `(old_key, old_len)`,
/// `(new_key, new_len)` and `(pk, pk_len)` are NULL or that many readable bytes; `errmsg`
/// is NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn riptide_hbuild_apply_change(
    build: *mut riptide_hbuild_t,
    index: usize,
    old_key: *const c_char,
    old_len: usize,
    new_key: *const c_char,
    new_len: usize,
    pk: *const c_char,
    pk_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `build`, the
    // optional byte strings `old_key` and `new_key`, the byte string `pk`, and `errmsg`.
    let (build, old, new, pk, errmsg) = unsafe {
        (
            arg_mut(build, "build"),
            opt_bytes(old_key, old_len, "old_key"),
            opt_bytes(new_key, new_len, "new_key"),
            bytes(pk, pk_len, "pk"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (build, old, new, pk) = (build?, old?, new?, pk?);
        build.build.apply_change(index, old, new, pk)?;
        Ok(())
    })
}

/// Writes the build's last entries and checks its new unique indexes: `RIPTIDE_OK` when
/// none holds a value (without NULL parts) twice; `RIPTIDE_DUPLICATE_KEY` when one does,
/// with `*dup_index` its position in the build and `*dup_pk` (`*dup_pk_len` bytes,
/// allocated with `malloc`: free with `riptide_free`) the primary key of one row holding
/// the value. The build stays alive either way.
///
/// # Safety
///
/// `build` is NULL or a live build handle used by no other thread; `dup_index`, `dup_pk`,
/// `dup_pk_len` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbuild_finish(
    build: *mut riptide_hbuild_t,
    dup_index: *mut usize,
    dup_pk: *mut *mut c_char,
    dup_pk_len: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `build` and the
    // out-parameters.
    let (build, dup_index, dup_pk, dup_pk_len, errmsg) = unsafe {
        (
            arg_mut(build, "build"),
            Out::new(dup_index, "dup_index"),
            Out::new(dup_pk, "dup_pk"),
            Out::new(dup_pk_len, "dup_pk_len"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (build, dup_index, dup_pk, dup_pk_len) = (build?, dup_index?, dup_pk?, dup_pk_len?);
        match build.build.finish()? {
            BuildCheck::Unique => Ok(()),
            BuildCheck::Duplicate { index, pk } => {
                let copy = malloc_bytes(&pk)?;
                dup_index.set(index);
                dup_pk.set(copy);
                dup_pk_len.set(pk.len());
                let name = build
                    .build
                    .new_indexes()
                    .get(index)
                    .map(|ix| ix.name.clone())
                    .unwrap_or_default();
                Err(riptide_handler::HandlerError::Duplicate {
                    index,
                    name,
                    table_id: build.build.table_id(),
                })
            }
        }
    })
}

/// Ends `build` (freed in every case) by making it the table's definition: the `n` indexes of
/// `order`, in that order (the primary key first; every new index placed); the table's
/// current indexes left out are dropped with their entries. `(version, version_len)` (0:
/// none) is recorded as the definition's version, which `riptide_handler_check_version`
/// compares. On failure the build is aborted (its entries removed) before the error is
/// returned, and the table is unchanged (with a NULL `handler` the build's entries stay
/// until the next open removes them). `RIPTIDE_BUSY` if the table's definition changed
/// since the build began.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `build` is NULL or a live build handle not
/// used afterwards; `(order, n)` is NULL with 0 or `n` readable slots; `(version,
/// version_len)` is NULL or that many readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_commit_index_build(
    handler: *mut riptide_handler_t,
    build: *mut riptide_hbuild_t,
    order: *const riptide_index_slot_t,
    n: usize,
    version: *const c_char,
    version_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles, the array `order`,
    // the byte string `version` and the out-parameter `errmsg`; `build` is taken over here.
    let (handler, build, order, version, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            take_build(build),
            array(order, n, "order"),
            bytes(version, version_len, "version"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (build, h) = (build?, handler?);
        let given = order.and_then(|o| Ok((o, version?)));
        let (order, version) = match given {
            Ok(g) => g,
            Err(e) => {
                h.engine.abort_index_build(build)?;
                return Err(e.into());
            }
        };
        let slots: Vec<IndexSlot> = order
            .iter()
            .map(|s| {
                if s.is_new {
                    IndexSlot::New(s.position)
                } else {
                    IndexSlot::Existing(s.position)
                }
            })
            .collect();
        h.engine.commit_index_build(build, &slots, version)?;
        Ok(())
    })
}

/// Ends `build` (freed in every case) without changing the table: the entries it wrote are
/// range-deleted.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `build` is NULL or a live build handle not
/// used afterwards; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_abort_index_build(
    handler: *mut riptide_handler_t,
    build: *mut riptide_hbuild_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles and `errmsg`;
    // `build` is taken over here.
    let (handler, build, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            take_build(build),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, build) = (handler?, build?);
        h.engine.abort_index_build(build)?;
        Ok(())
    })
}

/// Takes over a build handle (freeing the box) and returns its build.
///
/// # Safety
///
/// `build` is NULL or a live build handle not used afterwards.
unsafe fn take_build(build: *mut riptide_hbuild_t) -> CResult<IndexBuild> {
    if build.is_null() {
        return Err(crate::ffi_util::null_arg("build"));
    }
    // SAFETY: per `# Safety`, `build` is a live handle made by `into_handle` (a box) and not
    // used afterwards, so it is unboxed exactly once.
    let b = unsafe { Box::from_raw(build) };
    Ok(b.build)
}

/// Whether table `name`'s definition version, as the last
/// `riptide_handler_commit_index_build` recorded it, is `(version, version_len)`:
/// `*matches` true if so, false if another or none is recorded (or the table does not
/// exist). MariaDB's recovery of an in-place `ALTER TABLE` interrupted by a crash asks this
/// (`handlerton::check_version`) to learn whether the engine committed the new definition.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(name, name_len)` and `(version,
/// version_len)` are NULL or that many readable bytes; `matches` and `errmsg` are NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_check_version(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    version: *const c_char,
    version_len: usize,
    matches: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle, the byte strings
    // and the out-parameters.
    let (handler, name, version, matches, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            bytes(version, version_len, "version"),
            Out::new(matches, "matches"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, name, version, matches) = (handler?, name?, version?, matches?);
        let stored = h.engine.definition_version(name)?;
        matches.set(stored.as_deref() == Some(version));
        Ok(())
    })
}
