//! `capi_sequence`: random sequences of C ABI calls (`riptide_capi`, called as Rust
//! `unsafe extern "C"` functions): options, open/close, column families, puts, gets, deletes,
//! batches, snapshots, iterators, transactions with savepoints and two-phase commit, prepared
//! transaction recovery, statistics; with NULL handles and out-parameters, NULL data with a
//! nonzero length, unknown enum values, handles used after close, finished or prepared
//! transactions, dropped column families.
//!
//! Every call must return a status (never crash, never `RIPTIDE_INTERNAL`, which is a caught
//! panic, i.e. a bug); a failure must come with a message (when `errmsg` is given) and a
//! success without one; a NULL required handle and NULL data with a nonzero length must fail.
//! The harness keeps to what the C contract makes the caller's job and the library cannot
//! check: it never passes a dangling or foreign pointer, never frees twice, frees transaction
//! iterators before their transaction, and frees every handle before destroying the database.

#![no_main]

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use riptide_capi::*;
use riptide_fuzz::capi::{Bytes, Pick, ValueOut, checked_call, pick, set_small_options, take};
use riptide_fuzz::temp_dir;

/// `ON` or `OFF`, as `riptide_options_set_by_name` reads a bool.
fn on_off(v: bool) -> String {
    if v { "ON" } else { "OFF" }.to_string()
}

/// At most this many live handles of each kind.
const MAX_HANDLES: usize = 6;

/// What to pass as the database path.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum PathArg {
    Good,
    Null,
    /// A regular file, not a directory.
    File,
    /// A missing directory (opened without create_if_missing, it must fail).
    Missing,
}

#[derive(Arbitrary, Debug, Clone)]
enum OptSet {
    CreateIfMissing(bool),
    ErrorIfExists(bool),
    WriteBufferSize(u32),
    MaxImmutable(u8),
    SyncMode(i32, u16),
    RecoveryMode(i32),
    BlockCacheSize(u32),
    BlockSize(u32),
    RestartInterval(u16),
    Compression(i32, i32),
    BloomBits(u32),
    L0Trigger(u8),
    YoungSpaceBound(bool),
    TargetFileSize(u32),
    NumLevels(u8),
    LevelSizeRatio(f64),
    TombstoneRatio(f64),
    MaxOpenFiles(u16),
    MaxSubcompactions(u8),
    MaxBackgroundCompactions(u8),
    /// Any text for option number `.0` of `riptide_option_at` (past the end: an unknown
    /// name); only on the scratch handle and NULL.
    Raw(u8, String),
}

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    /// Sets an option on the options handle used to open (`false`), on a scratch handle
    /// (`true`, any value), or on NULL.
    SetOption(u8, OptSet),
    Open(PathArg, bool),
    Close,
    /// Frees every handle, then the database.
    Destroy,
    CfCreate(Bytes),
    CfGet(Bytes),
    CfDefault,
    CfDrop(Pick),
    CfDestroy(Pick),
    CfInfo(Pick),
    CfList,
    Put(Pick, Bytes, Bytes),
    Get(Pick, Pick, Bytes, u8),
    Delete(Pick, Bytes),
    SingleDelete(Pick, Bytes),
    DeleteRange(Pick, Bytes, Bytes),
    Flush,
    CompactRange(Pick, Bytes, Bytes),
    LatestSeqno(bool),
    BatchCreate,
    BatchDestroy(Pick),
    BatchPut(Pick, Pick, Bytes, Bytes),
    BatchDelete(Pick, Pick, Bytes),
    BatchSingleDelete(Pick, Pick, Bytes),
    BatchDeleteRange(Pick, Pick, Bytes, Bytes),
    BatchClear(Pick),
    BatchInfo(Pick),
    Write(Pick),
    SnapshotCreate(bool),
    SnapshotRelease(Pick),
    SnapshotSeqno(Pick),
    IterCreate(Pick, Pick, Option<Bytes>, Option<Bytes>, bool),
    IterDestroy(Pick),
    IterMove(Pick, u8, Bytes),
    TxnOptSet(bool, u8, i32, u16),
    TxnBegin(bool),
    TxnDestroy(Pick),
    TxnGet(Pick, Pick, Bytes, bool, bool, u8),
    TxnPut(Pick, Pick, Bytes, Bytes),
    TxnDelete(Pick, Pick, Bytes),
    TxnSingleDelete(Pick, Pick, Bytes),
    TxnSavepoint(Pick, u8),
    TxnPrepare(Pick, i32, Bytes, Bytes),
    TxnCommit(Pick),
    TxnRollback(Pick),
    TxnIterCreate(Pick, Pick, Option<Bytes>, Option<Bytes>),
    TxnIterDestroy(Pick),
    TxnIterMove(Pick, u8, Bytes),
    PreparedList(bool),
    FinishPrepared(bool, i32, Bytes, Bytes, Option<u8>),
    Stats(u16),
    StatsReport,
    StatusName(i32),
    ToggleErrmsg,
}

/// Live handles. Slots are removed on free, so a freed pointer is never used again.
struct State {
    dir: tempfile::TempDir,
    opts: *mut riptide_options_t,
    scratch_opts: *mut riptide_options_t,
    txn_opts: *mut riptide_txn_options_t,
    /// Transactions begun with default (NULL) options have a 50 s lock timeout: while one is
    /// alive no other transaction is begun, so no lock wait can last that long.
    default_txn_alive: bool,
    db: *mut riptide_db_t,
    cfs: Vec<*mut riptide_cf_t>,
    batches: Vec<*mut riptide_batch_t>,
    snapshots: Vec<*mut riptide_snapshot_t>,
    iters: Vec<*mut riptide_iter_t>,
    /// Transactions and whether each was begun with default options.
    txns: Vec<(*mut riptide_txn_t, bool)>,
    /// Transaction iterators and the transaction each belongs to.
    txn_iters: Vec<(*mut riptide_txn_iter_t, *mut riptide_txn_t)>,
    errmsg_null: bool,
}

impl State {
    /// Runs one fallible call with an `errmsg` out-parameter (or NULL) and checks the status
    /// and the message; returns the status.
    fn call(
        &self,
        what: &str,
        f: impl FnOnce(*mut *mut c_char) -> riptide_status_t,
    ) -> riptide_status_t {
        checked_call(what, self.errmsg_null, f)
    }

    fn path(&self, p: PathArg) -> Option<CString> {
        let path = match p {
            PathArg::Good => self.dir.path().join("db"),
            PathArg::Null => return None,
            PathArg::File => {
                let f = self.dir.path().join("a-file");
                let _ = std::fs::write(&f, b"not a database");
                f
            }
            PathArg::Missing => self.dir.path().join("missing").join("db"),
        };
        CString::new(path.into_os_string().into_encoded_bytes()).ok()
    }

    /// Frees every handle made from the database (transaction iterators before their
    /// transactions), in the order the contract asks.
    fn free_all(&mut self) {
        // SAFETY (all blocks below): each pointer is live, came from the library, and is
        // removed from its list as it is freed, so it is freed exactly once.
        for (it, _) in self.txn_iters.drain(..) {
            unsafe { riptide_txn_iter_destroy(it) };
        }
        for it in self.iters.drain(..) {
            unsafe { riptide_iter_destroy(it) };
        }
        for (t, _) in self.txns.drain(..) {
            unsafe { riptide_txn_destroy(t) };
        }
        self.default_txn_alive = false;
        for s in self.snapshots.drain(..) {
            unsafe { riptide_snapshot_release(s) };
        }
        for c in self.cfs.drain(..) {
            unsafe { riptide_cf_destroy(c) };
        }
        for b in self.batches.drain(..) {
            unsafe { riptide_batch_destroy(b) };
        }
    }

    fn destroy_db(&mut self) {
        self.free_all();
        // SAFETY: `db` is NULL or live, and nothing made from it is left.
        unsafe { riptide_db_destroy(self.db) };
        self.db = null_mut();
    }

    fn cf(&self, p: Pick) -> *const riptide_cf_t {
        pick(&self.cfs, p).map_or(null(), |c| c.cast_const())
    }

    fn set_option(&mut self, which: u8, o: &OptSet) {
        let target = match which % 4 {
            0 => null_mut(),
            1 => self.scratch_opts,
            _ => self.opts,
        };
        // The options the harness opens with stay small and safe (no multi-second stalls);
        // the scratch handle and NULL get any value.
        let any = target != self.opts;
        let small = |v: u64, any_value: u64, base: u64, range: u64| {
            if any { any_value } else { base + v % range }
        };
        let settings: Vec<(String, String)> = match o {
            OptSet::CreateIfMissing(v) => vec![("create_if_missing".into(), on_off(*v))],
            OptSet::ErrorIfExists(v) => vec![("error_if_exists".into(), on_off(*v))],
            OptSet::WriteBufferSize(v) => {
                let v = small(u64::from(*v), u64::from(*v), 4096, 16384);
                vec![("write_buffer_size".into(), v.to_string())]
            }
            OptSet::MaxImmutable(v) => {
                let v = u64::from(*v).max(u64::from(!any));
                vec![("max_immutable_memtables".into(), v.to_string())]
            }
            OptSet::SyncMode(m, ms) => {
                let ms = small(u64::from(*ms), u64::from(*ms), 1, 50);
                let mode =
                    ["none", "interval", "full", "sometimes"][(m.unsigned_abs() % 4) as usize];
                vec![
                    ("sync_interval_ms".into(), ms.to_string()),
                    ("sync_mode".into(), mode.into()),
                ]
            }
            OptSet::RecoveryMode(m) => vec![("recovery_mode".into(), m.to_string())],
            OptSet::BlockCacheSize(v) => vec![("block_cache_size".into(), v.to_string())],
            OptSet::BlockSize(v) => {
                let v = small(u64::from(*v), u64::from(*v), 256, 4096);
                vec![("block_size".into(), v.to_string())]
            }
            OptSet::RestartInterval(v) => vec![("restart_interval".into(), v.to_string())],
            OptSet::Compression(c, l) => {
                let c = ["none", "zstd", "lz4"][(c.unsigned_abs() % 3) as usize];
                vec![
                    ("compression_level".into(), l.to_string()),
                    ("compression".into(), c.into()),
                ]
            }
            OptSet::BloomBits(v) => vec![("bloom_bits_per_key".into(), v.to_string())],
            OptSet::L0Trigger(v) => vec![("l0_compaction_trigger".into(), v.to_string())],
            OptSet::YoungSpaceBound(v) => vec![("young_space_bound".into(), on_off(*v))],
            OptSet::TargetFileSize(v) => vec![("target_file_size".into(), v.to_string())],
            OptSet::NumLevels(v) => vec![("num_levels".into(), v.to_string())],
            OptSet::LevelSizeRatio(v) => vec![("level_size_ratio".into(), v.to_string())],
            OptSet::TombstoneRatio(v) => vec![("tombstone_ratio_trigger".into(), v.to_string())],
            OptSet::MaxOpenFiles(v) => vec![("max_open_files".into(), v.to_string())],
            OptSet::MaxSubcompactions(v) => {
                let v = small(u64::from(*v), u64::from(*v), 0, 4);
                vec![("max_subcompactions".into(), v.to_string())]
            }
            OptSet::MaxBackgroundCompactions(v) => {
                let v = small(u64::from(*v), u64::from(*v), 0, 4);
                vec![("max_background_compactions".into(), v.to_string())]
            }
            OptSet::Raw(index, text) => {
                if !any {
                    return;
                }
                let option = riptide_option_at(usize::from(*index) % (riptide_option_count() + 1));
                let name = if option.is_null() {
                    "no_such_option".to_string()
                } else {
                    // SAFETY: a non-NULL entry of the option table lives for the process, its
                    // name NUL-terminated.
                    unsafe { CStr::from_ptr((*option).name) }
                        .to_string_lossy()
                        .into_owned()
                };
                vec![(name, text.replace('\0', ""))]
            }
        };
        for (name, value) in settings {
            let (name, value) = (CString::new(name).unwrap(), CString::new(value).unwrap());
            let st = self.call("riptide_options_set_by_name", |e| {
                // SAFETY: `target` is NULL or a live options handle; the strings are
                // NUL-terminated; `e` is NULL or writable.
                unsafe { riptide_options_set_by_name(target, name.as_ptr(), value.as_ptr(), e) }
            });
            if target.is_null() {
                assert_eq!(
                    st,
                    riptide_status_t::RIPTIDE_INVALID_ARGUMENT,
                    "set on NULL options"
                );
            }
        }
    }

    fn step(&mut self, op: &Op) {
        let what = format!("{op:?}");
        let db = self.db;
        match op {
            Op::SetOption(which, o) => self.set_option(*which, o),
            Op::Open(p, null_opts) => {
                if !db.is_null() {
                    return;
                }
                let path = self.path(*p);
                let opts = if *null_opts {
                    null()
                } else {
                    self.opts.cast_const()
                };
                let mut out: *mut riptide_db_t = null_mut();
                let st = self.call(&what, |e| {
                    // SAFETY: the path is NULL or NUL-terminated; options NULL or live.
                    unsafe {
                        riptide_db_open(
                            path.as_ref().map_or(null(), |p| p.as_ptr()),
                            opts,
                            &mut out,
                            e,
                        )
                    }
                });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!out.is_null(), "open succeeded without a handle");
                    self.db = out;
                } else {
                    assert!(out.is_null(), "failed open left a handle");
                }
                if matches!(p, PathArg::Null) {
                    assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
                }
            }
            Op::Close => {
                let st = self.call(&what, |e| {
                    // SAFETY: `db` is NULL or live.
                    unsafe { riptide_db_close(db, e) }
                });
                if db.is_null() {
                    assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
                }
            }
            Op::Destroy => self.destroy_db(),
            Op::CfCreate(name) | Op::CfGet(name) => {
                if self.cfs.len() >= MAX_HANDLES {
                    return;
                }
                let owned = name.owned();
                let c = match (name, &owned) {
                    (Bytes::Null | Bytes::NullWithLen(_), _) => None,
                    (_, Some(v)) => Some(
                        CString::new(v.iter().copied().filter(|&b| b != 0).collect::<Vec<u8>>())
                            .unwrap_or_default(),
                    ),
                    _ => None,
                };
                let mut out: *mut riptide_cf_t = null_mut();
                let create = matches!(op, Op::CfCreate(_));
                let st = self.call(&what, |e| {
                    let n = c.as_ref().map_or(null(), |c| c.as_ptr());
                    // SAFETY: `db` NULL or live; name NULL or NUL-terminated.
                    unsafe {
                        if create {
                            riptide_cf_create(db, n, &mut out, e)
                        } else {
                            riptide_cf_get(db, n, &mut out, e)
                        }
                    }
                });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!out.is_null());
                    self.cfs.push(out);
                }
                if db.is_null() || c.is_none() {
                    assert_ne!(st, riptide_status_t::RIPTIDE_OK);
                }
            }
            Op::CfDefault => {
                if self.cfs.len() >= MAX_HANDLES {
                    return;
                }
                let mut out: *mut riptide_cf_t = null_mut();
                // SAFETY: `db` NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_cf_default(db, &mut out, e) });
                if st == riptide_status_t::RIPTIDE_OK {
                    self.cfs.push(out);
                }
                // A NULL out-parameter must be refused.
                // SAFETY: `db` NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_cf_default(db, null_mut(), e) });
                assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
            }
            Op::CfDrop(p) => {
                let cf = self.cf(*p);
                // SAFETY: `db`, `cf` NULL or live.
                self.call(&what, |e| unsafe { riptide_cf_drop(db, cf, e) });
            }
            Op::CfDestroy(p) => {
                if let Some(c) = take(&mut self.cfs, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_cf_destroy(c) };
                }
            }
            Op::CfInfo(p) => {
                let cf = self.cf(*p);
                let mut len = 0usize;
                // SAFETY: `cf` NULL or live; `len` writable.
                let name = unsafe { riptide_cf_name(cf, &mut len) };
                if !name.is_null() {
                    // SAFETY: the name is NUL-terminated, `len` bytes before the NUL.
                    let s = unsafe { CStr::from_ptr(name) };
                    assert_eq!(s.to_bytes().len(), len, "cf name length");
                }
                // SAFETY: as above, with a NULL length pointer.
                let _ = unsafe { riptide_cf_name(cf, null_mut()) };
                // SAFETY: `cf` NULL or live.
                let _ = unsafe { riptide_cf_id(cf) };
            }
            Op::CfList => {
                let mut names: *mut *mut c_char = null_mut();
                let mut count = 0usize;
                // SAFETY: `db` NULL or live; out-parameters writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_cf_list(db, &mut names, &mut count, e)
                });
                if st == riptide_status_t::RIPTIDE_OK {
                    for i in 0..count {
                        // SAFETY: `count` NUL-terminated names.
                        let n = unsafe { CStr::from_ptr(*names.add(i)) };
                        std::hint::black_box(n);
                    }
                }
                // SAFETY: the list the library made, freed once.
                unsafe { riptide_free_string_list(names, count) };
                // SAFETY: NULL out-parameters.
                let st = self.call(&what, |e| unsafe {
                    riptide_cf_list(db, null_mut(), null_mut(), e)
                });
                assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
            }
            Op::Put(c, k, v) => {
                let (ko, vo) = (k.owned(), v.owned());
                let ((kp, kl), (vp, vl)) = (k.arg(&ko), v.arg(&vo));
                let cf = self.cf(*c);
                // SAFETY: handles NULL or live; byte pairs per contract (or NULL with length).
                let st = self.call(&what, |e| unsafe { riptide_put(db, cf, kp, kl, vp, vl, e) });
                self.expect_refused(st, db.is_null() || k.is_bad() || v.is_bad(), &what);
            }
            Op::Get(c, s, k, nulls) => {
                let ko = k.owned();
                let (kp, kl) = k.arg(&ko);
                let cf = self.cf(*c);
                let snap = pick(&self.snapshots, *s).map_or(null(), |p| p.cast_const());
                let mut out = ValueOut::default();
                let (vp, lp, fp) = out.ptrs(*nulls);
                // SAFETY: handles NULL or live; out-parameters NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_get(db, cf, snap, kp, kl, vp, lp, fp, e)
                });
                std::hint::black_box(out.take(st));
                self.expect_refused(st, db.is_null() || k.is_bad() || nulls & 7 != 0, &what);
            }
            Op::Delete(c, k) | Op::SingleDelete(c, k) => {
                let ko = k.owned();
                let (kp, kl) = k.arg(&ko);
                let cf = self.cf(*c);
                let single = matches!(op, Op::SingleDelete(..));
                let st = self.call(&what, |e| {
                    // SAFETY: handles NULL or live; byte pair per contract.
                    unsafe {
                        if single {
                            riptide_single_delete(db, cf, kp, kl, e)
                        } else {
                            riptide_delete(db, cf, kp, kl, e)
                        }
                    }
                });
                self.expect_refused(st, db.is_null() || k.is_bad(), &what);
            }
            Op::DeleteRange(c, a, b) | Op::CompactRange(c, a, b) => {
                let (ao, bo) = (a.owned(), b.owned());
                let ((ap, al), (bp, bl)) = (a.arg(&ao), b.arg(&bo));
                let cf = self.cf(*c);
                let compact = matches!(op, Op::CompactRange(..));
                let st = self.call(&what, |e| {
                    // SAFETY: handles NULL or live; byte pairs per contract.
                    unsafe {
                        if compact {
                            riptide_compact_range(db, cf, ap, al, bp, bl, e)
                        } else {
                            riptide_delete_range(db, cf, ap, al, bp, bl, e)
                        }
                    }
                });
                self.expect_refused(st, db.is_null() || a.is_bad() || b.is_bad(), &what);
            }
            Op::Flush => {
                // SAFETY: `db` NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_flush(db, e) });
                self.expect_refused(st, db.is_null(), &what);
            }
            Op::LatestSeqno(null_out) => {
                let mut s = 0u64;
                let out: *mut u64 = if *null_out { null_mut() } else { &mut s };
                // SAFETY: `db` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe { riptide_latest_seqno(db, out, e) });
                self.expect_refused(st, db.is_null() || *null_out, &what);
            }
            Op::BatchCreate => {
                if self.batches.len() < MAX_HANDLES {
                    let b = riptide_batch_create();
                    assert!(!b.is_null());
                    self.batches.push(b);
                }
            }
            Op::BatchDestroy(p) => {
                if let Some(b) = take(&mut self.batches, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_batch_destroy(b) };
                }
            }
            Op::BatchPut(b, c, k, v) => {
                let batch = pick(&self.batches, *b).unwrap_or(null_mut());
                let (ko, vo) = (k.owned(), v.owned());
                let ((kp, kl), (vp, vl)) = (k.arg(&ko), v.arg(&vo));
                let cf = self.cf(*c);
                // SAFETY: handles NULL or live; byte pairs per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_batch_put(batch, cf, kp, kl, vp, vl, e)
                });
                self.expect_refused(st, batch.is_null() || k.is_bad() || v.is_bad(), &what);
            }
            Op::BatchDelete(b, c, k) | Op::BatchSingleDelete(b, c, k) => {
                let batch = pick(&self.batches, *b).unwrap_or(null_mut());
                let ko = k.owned();
                let (kp, kl) = k.arg(&ko);
                let cf = self.cf(*c);
                let single = matches!(op, Op::BatchSingleDelete(..));
                let st = self.call(&what, |e| {
                    // SAFETY: handles NULL or live; byte pair per contract.
                    unsafe {
                        if single {
                            riptide_batch_single_delete(batch, cf, kp, kl, e)
                        } else {
                            riptide_batch_delete(batch, cf, kp, kl, e)
                        }
                    }
                });
                self.expect_refused(st, batch.is_null() || k.is_bad(), &what);
            }
            Op::BatchDeleteRange(b, c, x, y) => {
                let batch = pick(&self.batches, *b).unwrap_or(null_mut());
                let (xo, yo) = (x.owned(), y.owned());
                let ((xp, xl), (yp, yl)) = (x.arg(&xo), y.arg(&yo));
                let cf = self.cf(*c);
                // SAFETY: handles NULL or live; byte pairs per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_batch_delete_range(batch, cf, xp, xl, yp, yl, e)
                });
                self.expect_refused(st, batch.is_null() || x.is_bad() || y.is_bad(), &what);
            }
            Op::BatchClear(b) => {
                let batch = pick(&self.batches, *b).unwrap_or(null_mut());
                // SAFETY: `batch` NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_batch_clear(batch, e) });
                self.expect_refused(st, batch.is_null(), &what);
                if !batch.is_null() {
                    // SAFETY: live.
                    assert_eq!(unsafe { riptide_batch_count(batch) }, 0);
                }
            }
            Op::BatchInfo(b) => {
                let batch = pick(&self.batches, *b).unwrap_or(null_mut());
                // SAFETY: `batch` NULL or live.
                let (n, size) = unsafe {
                    (
                        riptide_batch_count(batch),
                        riptide_batch_size_in_bytes(batch),
                    )
                };
                if batch.is_null() {
                    assert_eq!((n, size), (0, 0));
                }
            }
            Op::Write(b) => {
                let batch = pick(&self.batches, *b).unwrap_or(null_mut());
                // SAFETY: handles NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_write(db, batch, e) });
                self.expect_refused(st, db.is_null() || batch.is_null(), &what);
                if !batch.is_null() && !db.is_null() {
                    // The batch is empty afterwards, success or not.
                    // SAFETY: live.
                    assert_eq!(
                        unsafe { riptide_batch_count(batch) },
                        0,
                        "write left entries in the batch"
                    );
                }
            }
            Op::SnapshotCreate(null_out) => {
                if self.snapshots.len() >= MAX_HANDLES {
                    return;
                }
                let mut s: *mut riptide_snapshot_t = null_mut();
                let out: *mut *mut riptide_snapshot_t = if *null_out { null_mut() } else { &mut s };
                // SAFETY: `db` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe { riptide_snapshot_create(db, out, e) });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!s.is_null());
                    self.snapshots.push(s);
                }
                self.expect_refused(st, db.is_null() || *null_out, &what);
            }
            Op::SnapshotRelease(p) => {
                if let Some(s) = take(&mut self.snapshots, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_snapshot_release(s) };
                }
            }
            Op::SnapshotSeqno(p) => {
                let s = pick(&self.snapshots, *p).map_or(null(), |s| s.cast_const());
                // SAFETY: NULL or live.
                let _ = unsafe { riptide_snapshot_seqno(s) };
            }
            Op::IterCreate(c, s, lo, hi, null_out) => {
                if self.iters.len() >= MAX_HANDLES {
                    return;
                }
                let cf = self.cf(*c);
                let snap = pick(&self.snapshots, *s).map_or(null(), |p| p.cast_const());
                let (loo, hio) = (
                    lo.as_ref().and_then(Bytes::owned),
                    hi.as_ref().and_then(Bytes::owned),
                );
                let (lp, ll) = lo.as_ref().map_or((null(), 0), |b| b.arg(&loo));
                let (hp, hl) = hi.as_ref().map_or((null(), 0), |b| b.arg(&hio));
                let mut it: *mut riptide_iter_t = null_mut();
                let out: *mut *mut riptide_iter_t = if *null_out { null_mut() } else { &mut it };
                // SAFETY: handles NULL or live; bounds NULL or per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_iter_create(db, cf, snap, lp, ll, hp, hl, out, e)
                });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!it.is_null());
                    self.iters.push(it);
                }
                let bad = lo.as_ref().is_some_and(Bytes::is_bad)
                    || hi.as_ref().is_some_and(Bytes::is_bad);
                self.expect_refused(st, db.is_null() || *null_out || bad, &what);
            }
            Op::IterDestroy(p) => {
                if let Some(it) = take(&mut self.iters, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_iter_destroy(it) };
                }
            }
            Op::IterMove(p, how, target) => {
                let it = pick(&self.iters, *p).unwrap_or(null_mut());
                let to = target.owned();
                let (tp, tl) = target.arg(&to);
                let st = self.call(&what, |e| {
                    // SAFETY: `it` NULL or live; target per contract.
                    unsafe {
                        match how % 6 {
                            0 => riptide_iter_seek_to_first(it, e),
                            1 => riptide_iter_seek_to_last(it, e),
                            2 => riptide_iter_seek(it, tp, tl, e),
                            3 => riptide_iter_seek_for_prev(it, tp, tl, e),
                            4 => riptide_iter_next(it, e),
                            _ => riptide_iter_prev(it, e),
                        }
                    }
                });
                self.expect_refused(
                    st,
                    it.is_null() || (how % 6 / 2 == 1 && target.is_bad()),
                    &what,
                );
                // SAFETY: `it` NULL or live.
                unsafe {
                    read_cursor(
                        riptide_iter_valid(it),
                        |l| riptide_iter_key(it, l),
                        |l| riptide_iter_value(it, l),
                    )
                };
            }
            Op::TxnOptSet(null_opts, which, v, ms) => {
                let o = if *null_opts {
                    null_mut()
                } else {
                    self.txn_opts
                };
                let st = self.call(&what, |e| {
                    // SAFETY: `o` NULL or live.
                    unsafe {
                        match which % 4 {
                            0 => riptide_txn_options_set_isolation(o, *v, e),
                            1 => riptide_txn_options_set_concurrency(o, *v, e),
                            // Keep lock waits short: the fuzzer runs one thread.
                            2 => riptide_txn_options_set_lock_timeout_ms(o, u64::from(*ms % 4), e),
                            _ => riptide_txn_options_set_snapshot_at_begin(o, *v & 1 == 1, e),
                        }
                    }
                });
                self.expect_refused(st, o.is_null(), &what);
            }
            Op::TxnBegin(default_opts) => {
                if self.txns.len() >= MAX_HANDLES || self.default_txn_alive {
                    return;
                }
                if *default_opts && (!self.txns.is_empty() || self.prepared_count() > 0) {
                    return;
                }
                let o = if *default_opts {
                    null()
                } else {
                    self.txn_opts.cast_const()
                };
                let mut t: *mut riptide_txn_t = null_mut();
                // SAFETY: `db`, `o` NULL or live; `t` writable.
                let st = self.call(&what, |e| unsafe { riptide_txn_begin(db, o, &mut t, e) });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!t.is_null());
                    self.txns.push((t, *default_opts));
                    self.default_txn_alive |= *default_opts;
                }
                self.expect_refused(st, db.is_null(), &what);
            }
            Op::TxnDestroy(p) => {
                if self.txns.is_empty() {
                    return;
                }
                let (t, default_opts) = self.txns.remove(usize::from(p.0) % self.txns.len());
                let (mine, rest): (Vec<_>, Vec<_>) =
                    self.txn_iters.drain(..).partition(|(_, owner)| *owner == t);
                self.txn_iters = rest;
                for (it, _) in mine {
                    // SAFETY: live, removed from the list, before its transaction.
                    unsafe { riptide_txn_iter_destroy(it) };
                }
                // SAFETY: live, removed from the list, its iterators freed.
                unsafe { riptide_txn_destroy(t) };
                if default_opts {
                    self.default_txn_alive = false;
                }
            }
            Op::TxnGet(p, c, k, for_update, exclusive, nulls) => {
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let ko = k.owned();
                let (kp, kl) = k.arg(&ko);
                let cf = self.cf(*c);
                let mut out = ValueOut::default();
                let (vp, lp, fp) = out.ptrs(*nulls);
                let st = self.call(&what, |e| {
                    // SAFETY: handles NULL or live; out-parameters NULL or writable.
                    unsafe {
                        if *for_update {
                            riptide_txn_get_for_update(t, cf, kp, kl, *exclusive, vp, lp, fp, e)
                        } else {
                            riptide_txn_get(t, cf, kp, kl, vp, lp, fp, e)
                        }
                    }
                });
                std::hint::black_box(out.take(st));
                self.expect_refused(st, t.is_null() || k.is_bad() || nulls & 7 != 0, &what);
            }
            Op::TxnPut(p, c, k, v) => {
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let (ko, vo) = (k.owned(), v.owned());
                let ((kp, kl), (vp, vl)) = (k.arg(&ko), v.arg(&vo));
                let cf = self.cf(*c);
                // SAFETY: handles NULL or live; byte pairs per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_txn_put(t, cf, kp, kl, vp, vl, e)
                });
                self.expect_refused(st, t.is_null() || k.is_bad() || v.is_bad(), &what);
            }
            Op::TxnDelete(p, c, k) | Op::TxnSingleDelete(p, c, k) => {
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let ko = k.owned();
                let (kp, kl) = k.arg(&ko);
                let cf = self.cf(*c);
                let single = matches!(op, Op::TxnSingleDelete(..));
                let st = self.call(&what, |e| {
                    // SAFETY: handles NULL or live; byte pair per contract.
                    unsafe {
                        if single {
                            riptide_txn_single_delete(t, cf, kp, kl, e)
                        } else {
                            riptide_txn_delete(t, cf, kp, kl, e)
                        }
                    }
                });
                self.expect_refused(st, t.is_null() || k.is_bad(), &what);
            }
            Op::TxnSavepoint(p, how) => {
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let st = self.call(&what, |e| {
                    // SAFETY: `t` NULL or live.
                    unsafe {
                        match how % 3 {
                            0 => riptide_txn_set_savepoint(t, e),
                            1 => riptide_txn_rollback_to_savepoint(t, e),
                            _ => riptide_txn_release_savepoint(t, e),
                        }
                    }
                });
                self.expect_refused(st, t.is_null(), &what);
                // SAFETY: NULL or live.
                let _ = unsafe { riptide_txn_id(t) };
            }
            Op::TxnPrepare(p, fid, g, b) => {
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let (go, bo) = (g.owned(), b.owned());
                let ((gp, gl), (bp, bl)) = (g.arg(&go), b.arg(&bo));
                // SAFETY: `t` NULL or live; byte pairs per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_txn_prepare(t, *fid % 4, gp, gl, bp, bl, e)
                });
                self.expect_refused(
                    st,
                    t.is_null() || g.is_bad() || b.is_bad() || gl == 0,
                    &what,
                );
            }
            Op::TxnCommit(p) | Op::TxnRollback(p) => {
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let commit = matches!(op, Op::TxnCommit(_));
                let st = self.call(&what, |e| {
                    // SAFETY: `t` NULL or live.
                    unsafe {
                        if commit {
                            riptide_txn_commit(t, e)
                        } else {
                            riptide_txn_rollback(t, e)
                        }
                    }
                });
                self.expect_refused(st, t.is_null(), &what);
            }
            Op::TxnIterCreate(p, c, lo, hi) => {
                if self.txn_iters.len() >= MAX_HANDLES {
                    return;
                }
                let t = pick(&self.txns, *p).map_or(null_mut(), |(t, _)| t);
                let cf = self.cf(*c);
                let (loo, hio) = (
                    lo.as_ref().and_then(Bytes::owned),
                    hi.as_ref().and_then(Bytes::owned),
                );
                let (lp, ll) = lo.as_ref().map_or((null(), 0), |b| b.arg(&loo));
                let (hp, hl) = hi.as_ref().map_or((null(), 0), |b| b.arg(&hio));
                let mut it: *mut riptide_txn_iter_t = null_mut();
                // SAFETY: handles NULL or live; bounds NULL or per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_txn_iter_create(t, cf, lp, ll, hp, hl, &mut it, e)
                });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!it.is_null());
                    self.txn_iters.push((it, t));
                }
                let bad = lo.as_ref().is_some_and(Bytes::is_bad)
                    || hi.as_ref().is_some_and(Bytes::is_bad);
                self.expect_refused(st, t.is_null() || bad, &what);
            }
            Op::TxnIterDestroy(p) => {
                if let Some((it, _)) = take(&mut self.txn_iters, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_txn_iter_destroy(it) };
                }
            }
            Op::TxnIterMove(p, how, target) => {
                let it = pick(&self.txn_iters, *p).map_or(null_mut(), |(i, _)| i);
                let to = target.owned();
                let (tp, tl) = target.arg(&to);
                let st = self.call(&what, |e| {
                    // SAFETY: `it` NULL or live; target per contract.
                    unsafe {
                        match how % 6 {
                            0 => riptide_txn_iter_seek_to_first(it, e),
                            1 => riptide_txn_iter_seek_to_last(it, e),
                            2 => riptide_txn_iter_seek(it, tp, tl, e),
                            3 => riptide_txn_iter_seek_for_prev(it, tp, tl, e),
                            4 => riptide_txn_iter_next(it, e),
                            _ => riptide_txn_iter_prev(it, e),
                        }
                    }
                });
                self.expect_refused(
                    st,
                    it.is_null() || (how % 6 / 2 == 1 && target.is_bad()),
                    &what,
                );
                // SAFETY: `it` NULL or live.
                unsafe {
                    read_cursor(
                        riptide_txn_iter_valid(it),
                        |l| riptide_txn_iter_key(it, l),
                        |l| riptide_txn_iter_value(it, l),
                    )
                };
            }
            Op::PreparedList(null_out) => {
                let mut xids: *mut riptide_xid_t = null_mut();
                let mut count = 0usize;
                let out: *mut *mut riptide_xid_t = if *null_out { null_mut() } else { &mut xids };
                // SAFETY: `db` NULL or live; out-parameters NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_prepared_list(db, out, &mut count, e)
                });
                if st == riptide_status_t::RIPTIDE_OK && count > 0 {
                    // SAFETY: the library returned `count` xids.
                    let xs = unsafe { std::slice::from_raw_parts(xids, count) };
                    for x in xs {
                        assert!(
                            (1..=64).contains(&x.gtrid_len) && x.bqual_len <= 64,
                            "listed xid out of range"
                        );
                    }
                }
                // SAFETY: NULL or the library's malloc'd array, freed once.
                unsafe { riptide_free(xids.cast()) };
                self.expect_refused(st, db.is_null() || *null_out, &what);
            }
            Op::FinishPrepared(commit, fid, g, b, listed) => {
                // Either the given xid, or one of the prepared ones.
                let mut parts = (*fid % 4, g.owned(), b.owned(), g.is_bad() || b.is_bad());
                if let Some(i) = listed
                    && let Some(x) = self.prepared_xid(usize::from(*i))
                {
                    parts = (x.0, Some(x.1), Some(x.2), false);
                }
                let (f, go, bo, bad) = parts;
                let (gp, gl) = match (&go, bad && g.is_bad()) {
                    (_, true) => (null(), 3),
                    (Some(v), _) => (v.as_ptr().cast::<c_char>(), v.len()),
                    (None, _) => (null(), 0),
                };
                let (bp, bl) = match (&bo, bad && b.is_bad()) {
                    (_, true) => (null(), 3),
                    (Some(v), _) => (v.as_ptr().cast::<c_char>(), v.len()),
                    (None, _) => (null(), 0),
                };
                let st = self.call(&what, |e| {
                    // SAFETY: `db` NULL or live; byte pairs per contract.
                    unsafe {
                        if *commit {
                            riptide_commit_prepared(db, f, gp, gl, bp, bl, e)
                        } else {
                            riptide_rollback_prepared(db, f, gp, gl, bp, bl, e)
                        }
                    }
                });
                self.expect_refused(st, db.is_null() || bad, &what);
            }
            Op::Stats(count) => {
                // Up to a few more values than there are statistics (those get 0); 0: NULL.
                let count = usize::from(*count) % (riptide_stat_count() + 4);
                let mut buf = vec![riptide_stat_value_t { integer: 1 }; count];
                let p = if count == 0 {
                    null_mut()
                } else {
                    buf.as_mut_ptr()
                };
                // SAFETY: `db` NULL or live; `p` NULL or `count` writable values.
                let st = self.call(&what, |e| unsafe { riptide_stats_fill(db, p, count, e) });
                self.expect_refused(st, db.is_null() || p.is_null(), &what);
                std::hint::black_box(&buf);
            }
            Op::StatsReport => {
                let mut report: *mut c_char = null_mut();
                // SAFETY: `db` NULL or live; `report` writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_stats_report(db, &mut report, e)
                });
                if st == riptide_status_t::RIPTIDE_OK {
                    assert!(!report.is_null());
                    // SAFETY: a NUL-terminated report.
                    std::hint::black_box(unsafe { CStr::from_ptr(report) });
                }
                // SAFETY: NULL or the library's malloc'd report, freed once.
                unsafe { riptide_free(report.cast()) };
                self.expect_refused(st, db.is_null(), &what);
            }
            Op::StatusName(code) => {
                let name = riptide_status_name(*code);
                assert!(!name.is_null());
                // SAFETY: a static NUL-terminated string.
                std::hint::black_box(unsafe { CStr::from_ptr(name) });
            }
            Op::ToggleErrmsg => self.errmsg_null = !self.errmsg_null,
        }
    }

    /// When `refused`, the call must have failed.
    fn expect_refused(&self, st: riptide_status_t, refused: bool, what: &str) {
        if refused {
            assert_ne!(
                st,
                riptide_status_t::RIPTIDE_OK,
                "{what}: accepted a NULL handle or NULL data with a length"
            );
        }
    }

    /// The number of prepared transactions (0 without a database).
    fn prepared_count(&self) -> usize {
        if self.db.is_null() {
            return 0;
        }
        let mut xids: *mut riptide_xid_t = null_mut();
        let mut count = 0usize;
        // SAFETY: `db` live; out-parameters writable; the array is freed once.
        unsafe {
            let _ = riptide_prepared_list(self.db, &mut xids, &mut count, null_mut());
            riptide_free(xids.cast());
        }
        count
    }

    /// The `i`-th prepared xid (modulo their number), as its parts.
    fn prepared_xid(&self, i: usize) -> Option<(i32, Vec<u8>, Vec<u8>)> {
        if self.db.is_null() {
            return None;
        }
        let mut xids: *mut riptide_xid_t = null_mut();
        let mut count = 0usize;
        // SAFETY: `db` live; out-parameters writable.
        unsafe {
            let _ = riptide_prepared_list(self.db, &mut xids, &mut count, null_mut());
        }
        let out = (count > 0).then(|| {
            // SAFETY: the library returned `count` xids.
            let x = unsafe { &*xids.add(i % count) };
            (
                x.format_id,
                x.gtrid[..(x.gtrid_len as usize).min(64)].to_vec(),
                x.bqual[..(x.bqual_len as usize).min(64)].to_vec(),
            )
        });
        // SAFETY: NULL or the library's malloc'd array, freed once.
        unsafe { riptide_free(xids.cast()) };
        out
    }
}

/// Reads the current entry of a cursor (key and value, with and without a length pointer),
/// so an out-of-bounds pointer shows under the address sanitizer.
///
/// # Safety
///
/// The closures call the accessors on a NULL or live cursor.
unsafe fn read_cursor(
    valid: bool,
    key: impl Fn(*mut usize) -> *const c_char,
    value: impl Fn(*mut usize) -> *const c_char,
) {
    for f in [&key as &dyn Fn(*mut usize) -> *const c_char, &value] {
        let mut len = usize::MAX;
        let p = f(&mut len);
        if valid {
            assert!(!p.is_null() || len == 0, "valid cursor without an entry");
        } else {
            assert!(p.is_null() && len == 0, "invalid cursor with an entry");
        }
        if !p.is_null() {
            // SAFETY: the accessor returned `len` readable bytes at `p`.
            let s = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
            std::hint::black_box(s.iter().map(|&b| u32::from(b)).sum::<u32>());
        }
        let _ = f(null_mut());
    }
}

fn run(ops: &[Op]) {
    let dir = temp_dir();
    let opts = riptide_options_create();
    let scratch_opts = riptide_options_create();
    let txn_opts = riptide_txn_options_create();
    assert!(!opts.is_null() && !scratch_opts.is_null() && !txn_opts.is_null());
    // SAFETY: live handles; NULL errmsg.
    unsafe {
        set_small_options(opts);
        riptide_txn_options_set_lock_timeout_ms(txn_opts, 1, null_mut());
    }
    let mut st = State {
        dir,
        opts,
        scratch_opts,
        txn_opts,
        default_txn_alive: false,
        db: null_mut(),
        cfs: Vec::new(),
        batches: Vec::new(),
        snapshots: Vec::new(),
        iters: Vec::new(),
        txns: Vec::new(),
        txn_iters: Vec::new(),
        errmsg_null: false,
    };
    // Start with an open database most of the time.
    st.step(&Op::Open(PathArg::Good, false));
    for op in ops.iter().take(128) {
        st.step(op);
    }
    st.destroy_db();
    // SAFETY: live handles, freed once; NULL is a no-op.
    unsafe {
        riptide_options_destroy(st.opts);
        riptide_options_destroy(st.scratch_opts);
        riptide_txn_options_destroy(st.txn_opts);
        riptide_options_destroy(null_mut());
        riptide_txn_options_destroy(null_mut());
        riptide_free(null_mut());
        riptide_free_value(null_mut(), 0);
        riptide_free_string_list(null_mut(), 3);
    }
    assert_eq!(riptide_abi_version(), RIPTIDE_ABI_VERSION);
    // SAFETY: a static NUL-terminated string.
    std::hint::black_box(unsafe { CStr::from_ptr(riptide_version()) });
}

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        (0u8..8)
            .map(|i| {
                let bytes: Vec<u8> = (0..600u32).map(|j| (j * 37 + u32::from(i) * 11) as u8).collect();
                (format!("calls-{i}"), bytes)
            })
            .collect()
    }),
    |data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(ops) = Vec::<Op>::arbitrary(&mut u) else {
        return;
    };
    run(&ops);
}
);
