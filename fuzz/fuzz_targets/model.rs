//! `model`: random operations on a `riptide::Db` with tiny memtables and tables, on the
//! fault-injecting in-memory file system (`riptide::fs::FaultFs`), checked against a
//! `BTreeMap` after every operation and after every reopen.
//!
//! Operations: put, delete, single delete (only where its contract holds: the key was put
//! exactly once since it was fresh or single-deleted, and not deleted since, as in the crash
//! test), delete range, batches mixing them, flush, compact range, snapshots (read later
//! through the snapshot against the model's copy), scans with bounds in both directions,
//! close + reopen, arming a fault (EIO, ENOSPC, short write, corrupted read on some kind of
//! call and file), and a crash (everything not fsynced is lost) + reopen.
//!
//! Without faults, any error or any difference from the model is a bug. With faults armed:
//! a write that fails with an I/O error may or may not be there after the next reopen (the
//! model keeps it pending), and every later write of that session must be refused; reads
//! may fail (`Corruption` or `Io`) but never answer wrongly; no error is `Internal` (a caught
//! panic); after a crash every acknowledged write is there (sync mode `Full`); a reopen
//! without faults always succeeds.

#![no_main]

use std::collections::BTreeMap;
use std::ops::Bound;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use riptide::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide::{
    Compression, Db, DbIterator, Error, ErrorKind, Options, ReadOptions, Snapshot, SyncMode,
    WriteBatch,
};

/// The expected contents of the database.
type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// A key from a small space, so operations meet: one to three bytes from a few letters.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Key(u8, u8);

impl Key {
    fn bytes(self) -> Vec<u8> {
        let letters = b"abcdefgh";
        let mut k = vec![letters[usize::from(self.0 % 8)]];
        match self.1 % 4 {
            0 => {}
            1 => k.push(letters[usize::from(self.1 / 4 % 8)]),
            2 => k.extend_from_slice(&[letters[usize::from(self.1 / 4 % 8)], b'x']),
            _ => k.push(self.1),
        }
        k
    }
}

/// A value: short, or long enough that a few of them fill a memtable.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Value(u8, bool);

impl Value {
    fn bytes(self, serial: u32) -> Vec<u8> {
        let len = if self.1 {
            300 + usize::from(self.0) * 2
        } else {
            usize::from(self.0 % 16)
        };
        let mut v = serial.to_le_bytes().to_vec();
        v.resize(4 + len, self.0);
        v
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Write {
    Put(Key, Value),
    Delete(Key),
    SingleDelete(Key),
    DeleteRange(Key, Key),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Write(Write),
    Batch(Vec<Write>),
    Flush,
    CompactAll,
    CompactRange(Key, Key),
    Snapshot,
    DropSnapshot,
    Scan(Option<Key>, Option<Key>, bool),
    Reopen,
    Fault(FaultSpec),
    Crash,
}

/// A fault to arm: which calls (`op`, `file`), what happens, after how many matching calls
/// and how many times.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct FaultSpec {
    op: u8,
    fault: u8,
    file: u8,
    after: u8,
    times: u8,
}

impl FaultSpec {
    /// The rule, and whether it can make reads fail.
    fn rule(self) -> (FaultRule, bool) {
        let ops = [
            FsOp::Append,
            FsOp::Sync,
            FsOp::SyncDir,
            FsOp::Create,
            FsOp::Rename,
            FsOp::Remove,
            FsOp::Read,
            FsOp::OpenRead,
            FsOp::Metadata,
        ];
        let op = ops[usize::from(self.op) % ops.len()];
        let fault = match (op, self.fault % 3) {
            (FsOp::Append, 2) => Fault::ShortWrite,
            (FsOp::Read, 2) => Fault::CorruptRead,
            (_, 1) => Fault::NoSpace,
            _ => Fault::Eio,
        };
        let mut rule = FaultRule::new(op, fault)
            .after(u64::from(self.after % 32))
            .times(1 + u64::from(self.times % 3));
        match self.file % 4 {
            1 => rule = rule.on_files_ending_with(".log"),
            2 => rule = rule.on_files_ending_with(".sst"),
            3 => rule = rule.on_files_ending_with("MANIFEST.tmp"),
            _ => {}
        }
        let reads = matches!(op, FsOp::Read | FsOp::OpenRead | FsOp::Metadata);
        (rule, reads)
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    write_buffer: u8,
    block_size: u8,
    target_file: u8,
    zstd: bool,
    bloom: bool,
    l0_trigger: u8,
    young: bool,
    ops: Vec<Op>,
}

/// What single delete's contract allows for one key (as in `tools/stress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum SdState {
    /// Never written, or single-deleted since: the next put makes it `Once`.
    #[default]
    Clean,
    /// Put exactly once since `Clean`: a single delete is allowed.
    Once,
    /// Anything else: no single delete.
    Dirty,
}

#[derive(Default, Clone)]
struct Model {
    map: Map,
    sd: BTreeMap<Vec<u8>, SdState>,
    serial: u32,
}

impl Model {
    /// Applies `w` to the model; `None` if it is a single delete the contract forbids (the
    /// caller then skips it), else the write as it goes to the database.
    fn apply(&mut self, w: Write) -> Option<(Write, Vec<u8>)> {
        self.serial += 1;
        match w {
            Write::Put(k, v) => {
                let (k, v) = (k.bytes(), v.bytes(self.serial));
                let s = self.sd.entry(k.clone()).or_default();
                *s = if *s == SdState::Clean && !self.map.contains_key(&k) {
                    SdState::Once
                } else {
                    SdState::Dirty
                };
                self.map.insert(k, v.clone());
                Some((w, v))
            }
            Write::Delete(k) => {
                let k = k.bytes();
                self.map.remove(&k);
                self.sd.insert(k, SdState::Dirty);
                Some((w, Vec::new()))
            }
            Write::SingleDelete(k) => {
                let k = k.bytes();
                if self.sd.get(&k).copied().unwrap_or_default() != SdState::Once {
                    return None;
                }
                self.map.remove(&k);
                self.sd.insert(k, SdState::Clean);
                Some((w, Vec::new()))
            }
            Write::DeleteRange(a, b) => {
                let (mut s, mut e) = (a.bytes(), b.bytes());
                if s > e {
                    std::mem::swap(&mut s, &mut e);
                }
                let doomed: Vec<Vec<u8>> = self
                    .map
                    .range::<Vec<u8>, _>((Bound::Included(&s), Bound::Excluded(&e)))
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in doomed {
                    self.map.remove(&k);
                    self.sd.insert(k, SdState::Dirty);
                }
                Some((w, Vec::new()))
            }
        }
    }
}

fn range_bounds(a: Key, b: Key) -> (Vec<u8>, Vec<u8>) {
    let (s, e) = (a.bytes(), b.bytes());
    if s <= e { (s, e) } else { (e, s) }
}

fn add_to_batch(b: &mut WriteBatch, w: Write, v: &[u8]) {
    match w {
        Write::Put(k, _) => b.put(&k.bytes(), v),
        Write::Delete(k) => b.delete(&k.bytes()),
        Write::SingleDelete(k) => b.single_delete(&k.bytes()),
        Write::DeleteRange(x, y) => {
            let (s, e) = range_bounds(x, y);
            b.delete_range(&s, &e)
        }
    };
}

const DIR: &str = "/db";

fn options(fs: &FaultFs, input: &Input) -> Options {
    Options::default()
        .file_system(fs.as_dyn())
        .write_buffer_size(4096 + usize::from(input.write_buffer) * 64)
        .block_size(256 + usize::from(input.block_size) * 4)
        .target_file_size(4096 + u64::from(input.target_file) * 64)
        .compression(if input.zstd {
            Compression::Zstd { level: 1 }
        } else {
            Compression::None
        })
        .bloom_bits_per_key(if input.bloom { 10 } else { 0 })
        .l0_compaction_trigger(2 + usize::from(input.l0_trigger % 4))
        .young_space_bound(input.young)
        .block_cache_size(64 << 10)
        .max_open_files(16)
        // Every acknowledged write must survive a crash (fsync is free in memory).
        .sync_mode(SyncMode::Full)
}

/// Opens the database with no fault armed: that must succeed.
fn open(fs: &FaultFs, input: &Input) -> Db {
    fs.clear_rules();
    match Db::open(DIR, options(fs, input)) {
        Ok(db) => db,
        Err(e) => panic!("open failed: {e}"),
    }
}

/// No error may be a caught panic.
fn not_a_bug(e: &Error, what: &str) {
    assert!(
        e.kind() != ErrorKind::Internal && !e.to_string().contains("panicked"),
        "{what}: {e}"
    );
}

/// A read error is fine only when a fault that can break reads is armed, and only of kind
/// `Corruption` or `Io`.
fn read_error(e: &Error, faulty_reads: bool, what: &str) {
    not_a_bug(e, what);
    assert!(
        faulty_reads && matches!(e.kind(), ErrorKind::Corruption | ErrorKind::Io),
        "{what}: read failed: {e}"
    );
}

/// Reads every entry of `it` between the bounds, forward or backward.
fn collect(mut it: DbIterator, forward: bool) -> Result<Vec<(Vec<u8>, Vec<u8>)>, Error> {
    let mut out = Vec::new();
    if forward {
        it.seek_to_first()?;
    } else {
        it.seek_to_last()?;
    }
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        if forward {
            it.next()?;
        } else {
            it.prev()?;
        }
    }
    if !forward {
        out.reverse();
    }
    Ok(out)
}

fn scan(db: &Db, ro: ReadOptions<'_>, forward: bool) -> Result<Vec<(Vec<u8>, Vec<u8>)>, Error> {
    collect(db.iter(ro)?, forward)
}

fn check_all(db: &Db, model: &Map, snapshot: Option<&Snapshot>, faulty_reads: bool, what: &str) {
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for forward in [true, false] {
        let mut ro = ReadOptions::default();
        if let Some(s) = snapshot {
            ro = ro.snapshot(s);
        }
        match scan(db, ro, forward) {
            Ok(got) => assert!(
                got == want,
                "{what}: scan (forward {forward}) differs:\n got {got:?}\nwant {want:?}"
            ),
            Err(e) => read_error(&e, faulty_reads, what),
        }
    }
}

fn check_key(db: &Db, model: &Map, k: &[u8], faulty_reads: bool, what: &str) {
    match db.get(k) {
        Ok(got) => assert_eq!(got.as_ref(), model.get(k), "{what}: get({k:?})"),
        Err(e) => read_error(&e, faulty_reads, what),
    }
}

/// After a reopen: the database holds `model`, or `model` with the write whose outcome was
/// unknown (`pending`: the model as it would be with it). Returns the state found.
fn resolve(db: &Db, model: &Model, pending: Option<Model>, what: &str) -> Model {
    let got = match scan(db, ReadOptions::default(), true) {
        Ok(got) => got,
        Err(e) => panic!("{what}: scan after reopen failed: {e}"),
    };
    let as_vec = |m: &Map| -> Vec<(Vec<u8>, Vec<u8>)> {
        m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    if got == as_vec(&model.map) {
        return model.clone();
    }
    if let Some(p) = pending {
        if got == as_vec(&p.map) {
            return p;
        }
        panic!(
            "{what}: after reopen\n got {got:?}\nwant {:?}\n  or {:?}",
            model.map, p.map
        );
    }
    panic!("{what}: after reopen\n got {got:?}\nwant {:?}", model.map);
}

/// The state of one session (open to close or crash) as far as faults go.
#[derive(Default)]
struct Session {
    /// A fault is armed (or was, this session): background work may fail.
    faults: bool,
    /// An armed fault can make reads fail.
    faulty_reads: bool,
    /// The model with the write that failed with an I/O error (outcome unknown).
    pending: Option<Model>,
}

impl Session {
    /// Records a write's outcome: `with` is the model including the write.
    fn write_outcome(&mut self, r: Result<(), Error>, model: &mut Model, with: Model, what: &str) {
        match r {
            Ok(()) => {
                assert!(
                    self.pending.is_none(),
                    "{what}: a write succeeded after one failed with an I/O error"
                );
                *model = with;
            }
            Err(e) => {
                not_a_bug(&e, what);
                assert!(self.faults, "{what}: failed without a fault: {e}");
                match e.kind() {
                    ErrorKind::Io => {
                        assert!(
                            self.pending.is_none(),
                            "{what}: a second write failed with an I/O error: {e}"
                        );
                        self.pending = Some(with);
                    }
                    ErrorKind::Closed => {}
                    _ => panic!("{what}: unexpected error: {e}"),
                }
            }
        }
    }
}

fn run(input: &Input) {
    let mut fs = FaultFs::new(u64::from(input.write_buffer) << 8 | u64::from(input.block_size));
    let mut db = open(&fs, input);
    let mut model = Model::default();
    let mut session = Session::default();
    let mut snapshots: Vec<(Snapshot, Map)> = Vec::new();
    for (i, op) in input.ops.iter().take(64).enumerate() {
        let what = format!("op {i} {op:?}");
        match op {
            Op::Write(w) => {
                let mut with = Model {
                    map: model.map.clone(),
                    sd: model.sd.clone(),
                    serial: model.serial,
                };
                let Some((w, v)) = with.apply(*w) else {
                    model.serial = with.serial;
                    continue;
                };
                let r = match w {
                    Write::Put(k, _) => db.put(&k.bytes(), &v),
                    Write::Delete(k) => db.delete(&k.bytes()),
                    Write::SingleDelete(k) => db.single_delete(&k.bytes()),
                    Write::DeleteRange(a, b) => {
                        let (s, e) = range_bounds(a, b);
                        db.delete_range(&s, &e)
                    }
                };
                session.write_outcome(r, &mut model, with, &what);
                if let Write::Put(k, _) | Write::Delete(k) | Write::SingleDelete(k) = w {
                    check_key(&db, &model.map, &k.bytes(), session.faulty_reads, &what);
                }
            }
            Op::Batch(ws) => {
                let mut with = Model {
                    map: model.map.clone(),
                    sd: model.sd.clone(),
                    serial: model.serial,
                };
                let mut b = WriteBatch::new();
                for w in ws.iter().take(16) {
                    if let Some((w, v)) = with.apply(*w) {
                        add_to_batch(&mut b, w, &v);
                    }
                }
                let r = db.write(b);
                session.write_outcome(r, &mut model, with, &what);
            }
            Op::Flush => {
                if let Err(e) = db.flush() {
                    not_a_bug(&e, &what);
                    assert!(session.faults, "{what}: failed: {e}");
                }
            }
            Op::CompactAll => {
                if let Err(e) = db.compact_range(&db.default_cf(), None) {
                    not_a_bug(&e, &what);
                    assert!(session.faults, "{what}: failed: {e}");
                }
            }
            Op::CompactRange(a, b) => {
                let (s, e) = range_bounds(*a, *b);
                if let Err(e) = db.compact_range(&db.default_cf(), Some((&s, &e))) {
                    not_a_bug(&e, &what);
                    assert!(session.faults, "{what}: failed: {e}");
                }
            }
            Op::Snapshot => {
                if snapshots.len() < 3 {
                    snapshots.push((db.snapshot(), model.map.clone()));
                }
            }
            Op::DropSnapshot => {
                if !snapshots.is_empty() {
                    snapshots.remove(0);
                }
            }
            Op::Scan(lo, hi, forward) => {
                let mut ro = ReadOptions::default();
                let lo = lo.map(Key::bytes);
                let hi = hi.map(Key::bytes);
                if let Some(l) = &lo {
                    ro = ro.lower_bound(l.clone());
                }
                if let Some(h) = &hi {
                    ro = ro.upper_bound(h.clone());
                }
                let want: Vec<(Vec<u8>, Vec<u8>)> = model
                    .map
                    .iter()
                    .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l))
                    .filter(|(k, _)| hi.as_ref().is_none_or(|h| *k < h))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                match scan(&db, ro, *forward) {
                    Ok(got) => assert!(
                        got == want,
                        "{what}: bounded scan differs:\n got {got:?}\nwant {want:?}"
                    ),
                    Err(e) => read_error(&e, session.faulty_reads, &what),
                }
            }
            Op::Fault(spec) => {
                let (rule, reads) = spec.rule();
                fs.add_rule(rule);
                session.faults = true;
                session.faulty_reads |= reads;
            }
            Op::Reopen | Op::Crash => {
                snapshots.clear();
                if matches!(op, Op::Crash) {
                    let crashed = fs.crash();
                    drop(db);
                    fs = crashed;
                } else if let Err(e) = db.close() {
                    not_a_bug(&e, &what);
                    assert!(session.faults, "{what}: close failed: {e}");
                }
                db = open(&fs, input);
                model = resolve(&db, &model, session.pending.take(), &what);
                session = Session::default();
            }
        }
        check_all(&db, &model.map, None, session.faulty_reads, &what);
        for (n, (s, m)) in snapshots.iter().enumerate() {
            check_all(
                &db,
                m,
                Some(s),
                session.faulty_reads,
                &format!("{what}, snapshot {n}"),
            );
        }
    }
    snapshots.clear();
    let crashed = fs.crash();
    drop(db);
    let db = open(&crashed, input);
    let model = resolve(&db, &model, session.pending.take(), "after the final crash");
    for k in model.map.keys() {
        check_key(&db, &model.map, k, false, "after the final crash");
    }
    if let Err(e) = db.close() {
        panic!("close after the final reopen failed: {e}");
    }
}

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        (0u8..8)
            .map(|i| {
                let bytes: Vec<u8> = (0..400u32).map(|j| (j * 31 + u32::from(i) * 17) as u8).collect();
                (format!("ops-{i}"), bytes)
            })
            .collect()
    }),
    |data: &[u8]| {
    let Ok(input) = Input::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    run(&input);
}
);
