//! `model`: random operations on a `riptide::Db` with tiny memtables and tables, checked
//! against a `BTreeMap` after every operation and after every reopen.
//!
//! Operations: put, delete, single delete (only where its contract holds: the key was put
//! exactly once since it was fresh or single-deleted, and not deleted since, as in the crash
//! test), delete range, batches mixing them, flush, compact range, snapshots (read later
//! through the snapshot against the model's copy), scans with bounds in both directions, and
//! close + reopen. Any error, or any difference from the model, is a bug.

#![no_main]

use std::collections::BTreeMap;
use std::ops::Bound;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use riptide::{Compression, Db, DbIterator, Options, ReadOptions, Snapshot, SyncMode, WriteBatch};
use riptide_fuzz::temp_dir;

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

#[derive(Default)]
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

fn open(dir: &std::path::Path, input: &Input) -> Db {
    let opts = Options::default()
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
        .sync_mode(SyncMode::None);
    match Db::open(dir, opts) {
        Ok(db) => db,
        Err(e) => panic!("open failed: {e}"),
    }
}

/// Reads every entry of `it` between the bounds, forward or backward.
fn collect(mut it: DbIterator, forward: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let r = if forward {
        it.seek_to_first()
    } else {
        it.seek_to_last()
    };
    if let Err(e) = r {
        panic!("iterator positioning failed: {e}");
    }
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        let r = if forward { it.next() } else { it.prev() };
        if let Err(e) = r {
            panic!("iterator step failed: {e}");
        }
    }
    if !forward {
        out.reverse();
    }
    out
}

fn check_all(db: &Db, model: &Map, snapshot: Option<&Snapshot>, what: &str) {
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for forward in [true, false] {
        let mut ro = ReadOptions::default();
        if let Some(s) = snapshot {
            ro = ro.snapshot(s);
        }
        let it = match db.iter(ro) {
            Ok(it) => it,
            Err(e) => panic!("{what}: iter failed: {e}"),
        };
        let got = collect(it, forward);
        assert!(
            got == want,
            "{what}: scan (forward {forward}) differs:\n got {got:?}\nwant {want:?}"
        );
    }
}

fn check_key(db: &Db, model: &Map, k: &[u8], what: &str) {
    match db.get(k) {
        Ok(got) => assert_eq!(got.as_ref(), model.get(k), "{what}: get({k:?})"),
        Err(e) => panic!("{what}: get({k:?}) failed: {e}"),
    }
}

fn run(input: &Input) {
    let dir = temp_dir();
    let mut db = open(dir.path(), input);
    let mut model = Model::default();
    let mut snapshots: Vec<(Snapshot, Map)> = Vec::new();
    for (i, op) in input.ops.iter().take(64).enumerate() {
        let what = format!("op {i} {op:?}");
        match op {
            Op::Write(w) => {
                let Some((w, v)) = model.apply(*w) else {
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
                if let Err(e) = r {
                    panic!("{what}: failed: {e}");
                }
                if let Write::Put(k, _) | Write::Delete(k) | Write::SingleDelete(k) = w {
                    check_key(&db, &model.map, &k.bytes(), &what);
                }
            }
            Op::Batch(ws) => {
                let mut b = WriteBatch::new();
                for w in ws.iter().take(16) {
                    if let Some((w, v)) = model.apply(*w) {
                        add_to_batch(&mut b, w, &v);
                    }
                }
                if let Err(e) = db.write(b) {
                    panic!("{what}: failed: {e}");
                }
            }
            Op::Flush => {
                if let Err(e) = db.flush() {
                    panic!("{what}: failed: {e}");
                }
            }
            Op::CompactAll => {
                if let Err(e) = db.compact_range(&db.default_cf(), None) {
                    panic!("{what}: failed: {e}");
                }
            }
            Op::CompactRange(a, b) => {
                let (s, e) = range_bounds(*a, *b);
                if let Err(e) = db.compact_range(&db.default_cf(), Some((&s, &e))) {
                    panic!("{what}: failed: {e}");
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
                let it = match db.iter(ro) {
                    Ok(it) => it,
                    Err(e) => panic!("{what}: iter failed: {e}"),
                };
                let got = collect(it, *forward);
                let want: Vec<(Vec<u8>, Vec<u8>)> = model
                    .map
                    .iter()
                    .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l))
                    .filter(|(k, _)| hi.as_ref().is_none_or(|h| *k < h))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert!(
                    got == want,
                    "{what}: bounded scan differs:\n got {got:?}\nwant {want:?}"
                );
            }
            Op::Reopen => {
                snapshots.clear();
                if let Err(e) = db.close() {
                    panic!("{what}: close failed: {e}");
                }
                db = open(dir.path(), input);
            }
        }
        check_all(&db, &model.map, None, &what);
        for (n, (s, m)) in snapshots.iter().enumerate() {
            check_all(&db, m, Some(s), &format!("{what}, snapshot {n}"));
        }
    }
    snapshots.clear();
    if let Err(e) = db.close() {
        panic!("final close failed: {e}");
    }
    let db = open(dir.path(), input);
    check_all(&db, &model.map, None, "after the final reopen");
    for k in model.map.keys() {
        check_key(&db, &model.map, k, "after the final reopen");
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
