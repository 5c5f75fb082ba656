//! Property test: random sequences of writes, batches, snapshots, reads, iteration, flushes
//! and close/reopen, checked against a `BTreeMap` model after every read.
//!
//! Tiny memtables and an L0 trigger of 2 make flushes and L0 merges happen all the time, with
//! snapshots held across them.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use riptide::{Db, Options, ReadOptions, Snapshot, SyncMode, WriteBatch};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// A value described compactly (so failing cases print small): `len` bytes from `seed`.
#[derive(Debug, Clone, Copy)]
struct Val {
    seed: u8,
    len: u16,
}

impl Val {
    fn bytes(self) -> Vec<u8> {
        (0..self.len)
            .map(|i| self.seed.wrapping_add((i % 251) as u8))
            .collect()
    }
}

#[derive(Debug, Clone)]
enum Write {
    Put(u8, Val),
    Delete(u8),
    /// A single delete where the model says it is allowed (the key was put once since its
    /// last delete); otherwise a plain delete.
    SingleDelete(u8),
}

#[derive(Debug, Clone)]
enum Op {
    Write(Write),
    Batch(Vec<Write>),
    Get(u8),
    TakeSnapshot,
    ReadSnapshot(usize),
    ReleaseSnapshot(usize),
    Scan { from: Option<u8>, to: Option<u8> },
    SeekForPrev(u8),
    Flush,
    Reopen,
}

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn write_strategy() -> impl Strategy<Value = Write> {
    prop_oneof![
        4 => (0u8..40, any::<u8>(), 0u16..300)
            .prop_map(|(k, seed, len)| Write::Put(k, Val { seed, len })),
        1 => (0u8..40).prop_map(Write::Delete),
        1 => (0u8..40).prop_map(Write::SingleDelete),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => write_strategy().prop_map(Op::Write),
        4 => proptest::collection::vec(write_strategy(), 1..20).prop_map(Op::Batch),
        6 => (0u8..45).prop_map(Op::Get),
        2 => Just(Op::TakeSnapshot),
        3 => any::<usize>().prop_map(Op::ReadSnapshot),
        1 => any::<usize>().prop_map(Op::ReleaseSnapshot),
        2 => (proptest::option::of(0u8..45), proptest::option::of(0u8..45))
            .prop_map(|(from, to)| Op::Scan { from, to }),
        2 => (0u8..45).prop_map(Op::SeekForPrev),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(4096)
        .max_immutable_memtables(2)
        .l0_compaction_trigger(2)
        .target_file_size(8192)
        .block_size(512)
        // A tiny tree with several levels, so leveled compaction moves data down all the time.
        .max_bytes_for_level_base(16 * 1024)
        .level_size_ratio(4.0)
        .num_levels(5)
        .tombstone_min_entries(20)
        // Runs of two deleted keys already become range tombstones at flush.
        .tombstone_coalesce_min_run(2)
        // Far fewer open files than tables: tables are evicted and reopened all the time.
        .max_open_files(4)
}

/// Tracks each key's writes since its last single delete, to know when another single
/// delete keeps the contract (exactly one put since the previous single delete, never mixed
/// with a delete: RocksDB's `SingleDelete` contract).
#[derive(Default)]
struct SingleDeleteGuard {
    contract: common::SingleDeleteContract,
}

impl SingleDeleteGuard {
    /// Applies `w` to the model and to `batch`, turning unsafe single deletes into deletes.
    fn apply(&mut self, w: &Write, model: &mut Model, batch: &mut WriteBatch) {
        match w {
            Write::Put(k, v) => {
                self.contract.put(&key(*k));
                model.insert(key(*k), v.bytes());
                batch.put(&key(*k), &v.bytes());
            }
            Write::Delete(k) => {
                self.contract.delete(&key(*k));
                model.remove(&key(*k));
                batch.delete(&key(*k));
            }
            Write::SingleDelete(k) => {
                model.remove(&key(*k));
                if self.contract.single_delete(&key(*k)) {
                    batch.single_delete(&key(*k));
                } else {
                    batch.delete(&key(*k));
                }
            }
        }
    }
}

fn scan_both_ways(db: &Db, opts: impl Fn() -> ReadOptions<'static>) -> (Entries, Entries) {
    let mut fwd = Vec::new();
    let mut it = db.iter(opts()).unwrap();
    it.seek_to_first().unwrap();
    while it.valid() {
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    let mut bwd = Vec::new();
    let mut it = db.iter(opts()).unwrap();
    it.seek_to_last().unwrap();
    while it.valid() {
        bwd.push((it.key().to_vec(), it.value().to_vec()));
        it.prev().unwrap();
    }
    bwd.reverse();
    (fwd, bwd)
}

/// Asserts two scans are equal, reporting only the keys that differ.
fn assert_same(actual: &[(Vec<u8>, Vec<u8>)], expected: &[(Vec<u8>, Vec<u8>)], what: &str) {
    if actual == expected {
        return;
    }
    let a: BTreeMap<_, _> = actual.iter().cloned().collect();
    let e: BTreeMap<_, _> = expected.iter().cloned().collect();
    let mut diffs = Vec::new();
    for k in a
        .keys()
        .chain(e.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (x, y) = (a.get(k), e.get(k));
        if x != y {
            diffs.push(format!(
                "{}: got {:?} expected {:?}",
                String::from_utf8_lossy(k),
                x.map(|v| v.len()),
                y.map(|v| v.len())
            ));
        }
    }
    panic!(
        "{what}: {} entries vs {} expected; differing keys (value lengths): {diffs:?}; order ok: {}",
        actual.len(),
        expected.len(),
        a.len() == actual.len()
    );
}

fn check_snapshot_view(db: &Db, snap: &Snapshot, model: &Model) {
    for k in 0u8..45 {
        let got = db
            .get_cf_opt(
                &db.default_cf(),
                &key(k),
                &ReadOptions::default().snapshot(snap),
            )
            .unwrap();
        if got.as_ref() != model.get(&key(k)) {
            eprintln!(
                "versions of key {k}: {:#?}",
                db.key_versions(&db.default_cf(), &key(k))
            );
        }
        assert!(
            got.as_ref() == model.get(&key(k)),
            "snapshot get of key {k}: got {:?} expected {:?}",
            got.map(|v| v.len()),
            model.get(&key(k)).map(|v| v.len())
        );
    }
    let mut it = db.iter(ReadOptions::default().snapshot(snap)).unwrap();
    it.seek_to_first().unwrap();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_same(&seen, &expected, "snapshot iteration");
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Some(Db::open(dir.path(), options()).unwrap());
    let mut model = Model::new();
    let mut guard = SingleDeleteGuard::default();
    // Snapshots must drop before their database closes; keep them with their model.
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();

    let trace = std::env::var_os("RIPTIDE_MODEL_TRACE").is_some();
    for op in ops {
        let d = db.as_ref().unwrap();
        if trace {
            eprintln!("seq {} op {op:?}", d.latest_seqno());
            if let Ok(k) = std::env::var("RIPTIDE_MODEL_TRACE_KEY") {
                let k: u8 = k.parse().unwrap();
                let v = d.key_versions(&d.default_cf(), &key(k)).unwrap();
                let v: Vec<String> = v
                    .iter()
                    .map(|v| format!("{}:{}{:?}", v.source, v.seqno, v.kind))
                    .collect();
                eprintln!(
                    "  key {k}: {v:?} snapshots {:?}",
                    snapshots.iter().map(|(s, _)| s.seqno()).collect::<Vec<_>>()
                );
            }
        }
        match op {
            Op::Write(w) => {
                let mut b = WriteBatch::new();
                guard.apply(&w, &mut model, &mut b);
                d.write(b).unwrap();
            }
            Op::Batch(ws) => {
                let mut b = WriteBatch::new();
                for w in &ws {
                    guard.apply(w, &mut model, &mut b);
                }
                d.write(b).unwrap();
            }
            Op::Get(k) => {
                let got = d.get(&key(k)).unwrap();
                assert!(
                    got.as_ref() == model.get(&key(k)),
                    "get {k}: got {:?} expected {:?}",
                    got.map(|v| v.len()),
                    model.get(&key(k)).map(|v| v.len())
                );
            }
            Op::TakeSnapshot => {
                let s = d.snapshot();
                if trace {
                    eprintln!("  snapshot at {}", s.seqno());
                }
                snapshots.push((s, model.clone()));
            }
            Op::ReadSnapshot(i) => {
                if !snapshots.is_empty() {
                    let (s, m) = &snapshots[i % snapshots.len()];
                    if trace {
                        eprintln!("  reading snapshot {}", s.seqno());
                    }
                    check_snapshot_view(d, s, m);
                }
            }
            Op::ReleaseSnapshot(i) => {
                if !snapshots.is_empty() {
                    let n = snapshots.len();
                    snapshots.remove(i % n);
                }
            }
            Op::Scan { from, to } => {
                let lo = from.map(key);
                let hi = to.map(key);
                let opts = || {
                    let mut o = ReadOptions::default();
                    if let Some(l) = lo.clone() {
                        o = o.lower_bound(l);
                    }
                    if let Some(h) = hi.clone() {
                        o = o.upper_bound(h);
                    }
                    o
                };
                let expected: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l))
                    .filter(|(k, _)| hi.as_ref().is_none_or(|h| *k < h))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let (fwd, bwd) = scan_both_ways(d, opts);
                assert_same(&fwd, &expected, &format!("forward scan {from:?}..{to:?}"));
                assert_same(&bwd, &expected, &format!("backward scan {from:?}..{to:?}"));
            }
            Op::SeekForPrev(k) => {
                let mut it = d.iter(ReadOptions::default()).unwrap();
                it.seek_for_prev(&key(k)).unwrap();
                let expected = model.range(..=key(k)).next_back();
                assert_eq!(
                    it.valid().then(|| (it.key().to_vec(), it.value().to_vec())),
                    expected.map(|(k, v)| (k.clone(), v.clone())),
                    "seek_for_prev {k}"
                );
                // Then walk both ways from there and compare one step.
                if it.valid() {
                    it.next().unwrap();
                    let after = model.range(key(k)..).find(|(kk, _)| **kk > key(k));
                    assert_eq!(
                        it.valid().then(|| it.key().to_vec()),
                        after.map(|(k, _)| k.clone())
                    );
                }
                let mut it = d.iter(ReadOptions::default()).unwrap();
                it.seek(&key(k)).unwrap();
                let at_or_after = model.range(key(k)..).next();
                assert_eq!(
                    it.valid().then(|| it.key().to_vec()),
                    at_or_after.map(|(k, _)| k.clone())
                );
                if it.valid() {
                    it.prev().unwrap();
                    let before = model.range(..key(k)).next_back();
                    assert_eq!(
                        it.valid().then(|| it.key().to_vec()),
                        before.map(|(k, _)| k.clone())
                    );
                }
            }
            Op::Flush => d.flush().unwrap(),
            Op::Reopen => {
                snapshots.clear();
                db.take().unwrap().close().unwrap();
                db = Some(Db::open(dir.path(), options()).unwrap());
            }
        }
    }
    let d = db.as_ref().unwrap();
    let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let (fwd, bwd) = scan_both_ways(d, ReadOptions::default);
    assert_same(&fwd, &expected, "final forward scan");
    assert_same(&bwd, &expected, "final backward scan");
    snapshots.clear();
    db.take().unwrap().close().unwrap();
    // And once more after a final reopen.
    let d = Db::open(dir.path(), options()).unwrap();
    let (fwd, _) = scan_both_ways(&d, ReadOptions::default);
    assert_same(&fwd, &expected, "after final reopen");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("RIPTIDE_MODEL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48), max_shrink_iters: 2000, .. ProptestConfig::default() })]

    #[test]
    fn engine_matches_btreemap_model(ops in proptest::collection::vec(op_strategy(), 1..300)) {
        run(ops);
    }
}

/// Regression: a case found by the property test (kept verbatim). Its history of key 25 was
/// put, put, delete, put, single delete: it broke the single-delete contract, which the
/// guard now enforces, so this replays the same operations under the contract.
#[test]
fn regression_put_put_delete_put_single_delete_history() {
    use Op::{
        Batch, Flush, Get, ReadSnapshot, ReleaseSnapshot, Reopen, Scan, SeekForPrev, TakeSnapshot,
    };
    use Write::{Delete, Put, SingleDelete};
    run(vec![
        Flush,
        Op::Write(Put(
            20,
            Val {
                seed: 103,
                len: 241,
            },
        )),
        Op::Write(SingleDelete(37)),
        Op::Write(Put(27, Val { seed: 49, len: 30 })),
        Reopen,
        Op::Write(Put(17, Val { seed: 44, len: 270 })),
        Get(37),
        Op::Write(Put(20, Val { seed: 159, len: 55 })),
        Op::Write(Put(
            5,
            Val {
                seed: 116,
                len: 272,
            },
        )),
        Op::Write(Put(27, Val { seed: 30, len: 63 })),
        Op::Write(Delete(32)),
        Get(25),
        Op::Write(Put(39, Val { seed: 89, len: 115 })),
        ReadSnapshot(6429350879155405751),
        ReadSnapshot(4168946797957584444),
        Op::Write(Put(18, Val { seed: 24, len: 140 })),
        Get(25),
        Op::Write(Put(23, Val { seed: 220, len: 66 })),
        ReadSnapshot(5418786343708222178),
        ReleaseSnapshot(1058960574956641795),
        Op::Write(SingleDelete(37)),
        Op::Write(Put(21, Val { seed: 96, len: 231 })),
        Op::Write(Put(21, Val { seed: 205, len: 51 })),
        Flush,
        Op::Write(Put(
            29,
            Val {
                seed: 209,
                len: 269,
            },
        )),
        TakeSnapshot,
        Op::Write(Delete(26)),
        Scan {
            from: Some(39),
            to: None,
        },
        Flush,
        Get(41),
        Scan {
            from: Some(35),
            to: None,
        },
        Op::Write(Put(19, Val { seed: 227, len: 49 })),
        SeekForPrev(8),
        Op::Write(Put(25, Val { seed: 84, len: 106 })),
        Op::Write(Delete(2)),
        Op::Write(Delete(27)),
        Op::Write(SingleDelete(12)),
        Scan {
            from: Some(34),
            to: Some(28),
        },
        Op::Write(Put(
            14,
            Val {
                seed: 106,
                len: 214,
            },
        )),
        Op::Write(Delete(14)),
        Op::Write(Put(
            14,
            Val {
                seed: 136,
                len: 119,
            },
        )),
        Op::Write(Put(36, Val { seed: 14, len: 158 })),
        ReadSnapshot(7266143355618866753),
        Op::Write(Put(29, Val { seed: 23, len: 203 })),
        Op::Write(Delete(37)),
        ReadSnapshot(3116173247774718962),
        Op::Write(SingleDelete(38)),
        ReadSnapshot(11995291465143730920),
        Op::Write(Put(20, Val { seed: 78, len: 10 })),
        ReadSnapshot(837727890270198634),
        Get(38),
        Op::Write(Put(20, Val { seed: 52, len: 73 })),
        Op::Write(Put(5, Val { seed: 140, len: 43 })),
        Op::Write(Put(
            11,
            Val {
                seed: 254,
                len: 215,
            },
        )),
        Flush,
        Op::Write(Put(9, Val { seed: 11, len: 183 })),
        Get(9),
        Op::Write(Put(
            18,
            Val {
                seed: 144,
                len: 241,
            },
        )),
        ReadSnapshot(12055048254790085387),
        Op::Write(Delete(32)),
        Scan {
            from: Some(34),
            to: None,
        },
        Op::Write(Put(
            23,
            Val {
                seed: 158,
                len: 168,
            },
        )),
        Op::Write(Put(2, Val { seed: 189, len: 79 })),
        Op::Write(Put(
            21,
            Val {
                seed: 208,
                len: 126,
            },
        )),
        Get(20),
        Batch(vec![
            SingleDelete(32),
            SingleDelete(14),
            Put(6, Val { seed: 253, len: 58 }),
            SingleDelete(23),
            Put(6, Val { seed: 12, len: 208 }),
            Put(27, Val { seed: 98, len: 257 }),
            Put(18, Val { seed: 247, len: 90 }),
            Delete(36),
            Put(29, Val { seed: 91, len: 144 }),
            Put(24, Val { seed: 49, len: 85 }),
            Put(
                19,
                Val {
                    seed: 107,
                    len: 222,
                },
            ),
            Put(15, Val { seed: 52, len: 32 }),
            Delete(12),
            Put(
                5,
                Val {
                    seed: 125,
                    len: 240,
                },
            ),
            Put(34, Val { seed: 24, len: 9 }),
            Put(
                28,
                Val {
                    seed: 107,
                    len: 295,
                },
            ),
            Put(30, Val { seed: 82, len: 169 }),
            SingleDelete(5),
        ]),
        Op::Write(Put(
            13,
            Val {
                seed: 163,
                len: 112,
            },
        )),
        Op::Write(SingleDelete(24)),
        Op::Write(Put(31, Val { seed: 80, len: 6 })),
        Op::Write(Put(
            1,
            Val {
                seed: 209,
                len: 257,
            },
        )),
        Op::Write(Put(
            25,
            Val {
                seed: 125,
                len: 216,
            },
        )),
        Batch(vec![
            SingleDelete(27),
            Delete(2),
            Put(26, Val { seed: 4, len: 154 }),
            Put(
                4,
                Val {
                    seed: 138,
                    len: 101,
                },
            ),
            Put(
                4,
                Val {
                    seed: 252,
                    len: 276,
                },
            ),
            Delete(36),
            SingleDelete(9),
            Put(
                32,
                Val {
                    seed: 180,
                    len: 164,
                },
            ),
            Put(23, Val { seed: 27, len: 184 }),
            Put(35, Val { seed: 246, len: 92 }),
            Put(
                10,
                Val {
                    seed: 202,
                    len: 101,
                },
            ),
            Put(31, Val { seed: 81, len: 255 }),
            Put(24, Val { seed: 137, len: 19 }),
            SingleDelete(25),
        ]),
        Get(15),
        Op::Write(Put(
            28,
            Val {
                seed: 254,
                len: 136,
            },
        )),
        Op::Write(Put(
            20,
            Val {
                seed: 208,
                len: 230,
            },
        )),
        Op::Write(Put(1, Val { seed: 207, len: 8 })),
        Batch(vec![
            Put(
                23,
                Val {
                    seed: 168,
                    len: 216,
                },
            ),
            Delete(20),
            Put(5, Val { seed: 120, len: 28 }),
            SingleDelete(0),
            Put(
                18,
                Val {
                    seed: 173,
                    len: 290,
                },
            ),
            Put(39, Val { seed: 209, len: 19 }),
            Delete(39),
            Delete(31),
            Put(34, Val { seed: 2, len: 147 }),
            Put(
                4,
                Val {
                    seed: 218,
                    len: 223,
                },
            ),
            Put(11, Val { seed: 145, len: 58 }),
            SingleDelete(5),
            Put(25, Val { seed: 70, len: 219 }),
        ]),
        Op::Write(Put(
            18,
            Val {
                seed: 129,
                len: 108,
            },
        )),
        Scan {
            from: Some(6),
            to: None,
        },
        ReadSnapshot(1381805138349427397),
        Get(37),
        Op::Write(Put(
            37,
            Val {
                seed: 191,
                len: 282,
            },
        )),
        Op::Write(Put(
            1,
            Val {
                seed: 130,
                len: 203,
            },
        )),
        ReadSnapshot(8362062615706603732),
        SeekForPrev(40),
        TakeSnapshot,
        ReleaseSnapshot(9698997992042489751),
        ReadSnapshot(10341403725135193527),
        Op::Write(SingleDelete(29)),
        Op::Write(Delete(10)),
        Scan {
            from: Some(10),
            to: Some(34),
        },
        SeekForPrev(3),
        Get(21),
        Op::Write(Put(7, Val { seed: 4, len: 140 })),
        ReadSnapshot(16013789611820419018),
        ReadSnapshot(3028924482400768955),
        Op::Write(SingleDelete(16)),
        Get(10),
        Op::Write(Put(28, Val { seed: 30, len: 91 })),
        Op::Write(SingleDelete(12)),
        Get(6),
        Op::Write(Put(35, Val { seed: 76, len: 147 })),
        Op::Write(SingleDelete(36)),
        Scan {
            from: Some(0),
            to: Some(43),
        },
        Batch(vec![
            Put(
                29,
                Val {
                    seed: 145,
                    len: 194,
                },
            ),
            Put(15, Val { seed: 57, len: 275 }),
            Delete(39),
            Put(1, Val { seed: 7, len: 286 }),
            Put(
                5,
                Val {
                    seed: 251,
                    len: 126,
                },
            ),
            Put(39, Val { seed: 199, len: 50 }),
            Put(13, Val { seed: 56, len: 80 }),
            Put(
                6,
                Val {
                    seed: 104,
                    len: 130,
                },
            ),
            Delete(16),
        ]),
        Op::Write(SingleDelete(0)),
        Op::Write(Put(28, Val { seed: 111, len: 60 })),
        Op::Write(Put(34, Val { seed: 254, len: 71 })),
        Op::Write(SingleDelete(15)),
        Op::Write(Put(11, Val { seed: 59, len: 26 })),
        Op::Write(Put(
            15,
            Val {
                seed: 128,
                len: 246,
            },
        )),
        Batch(vec![
            Put(13, Val { seed: 57, len: 283 }),
            SingleDelete(25),
            Put(8, Val { seed: 27, len: 22 }),
            Put(
                4,
                Val {
                    seed: 252,
                    len: 298,
                },
            ),
        ]),
        TakeSnapshot,
        Op::Write(Put(
            15,
            Val {
                seed: 165,
                len: 242,
            },
        )),
        Op::Write(Put(
            35,
            Val {
                seed: 177,
                len: 219,
            },
        )),
        Op::Write(Put(36, Val { seed: 151, len: 82 })),
        Get(43),
        Op::Write(Delete(0)),
        Get(9),
        SeekForPrev(22),
        Op::Write(Delete(16)),
        TakeSnapshot,
        Op::Write(Put(24, Val { seed: 39, len: 78 })),
        Op::Write(Put(17, Val { seed: 132, len: 65 })),
        Op::Write(Put(11, Val { seed: 102, len: 65 })),
        Op::Write(Put(
            4,
            Val {
                seed: 223,
                len: 130,
            },
        )),
        Op::Write(Put(29, Val { seed: 82, len: 151 })),
        Op::Write(Delete(10)),
        Op::Write(Put(33, Val { seed: 231, len: 56 })),
        Batch(vec![
            SingleDelete(1),
            Put(
                37,
                Val {
                    seed: 252,
                    len: 159,
                },
            ),
            Put(
                16,
                Val {
                    seed: 226,
                    len: 163,
                },
            ),
            Delete(38),
            Delete(5),
            Put(
                0,
                Val {
                    seed: 222,
                    len: 142,
                },
            ),
            Put(
                6,
                Val {
                    seed: 230,
                    len: 296,
                },
            ),
            SingleDelete(11),
            Delete(29),
            Put(
                31,
                Val {
                    seed: 146,
                    len: 253,
                },
            ),
            Delete(12),
            Put(
                13,
                Val {
                    seed: 249,
                    len: 252,
                },
            ),
            Put(
                11,
                Val {
                    seed: 224,
                    len: 129,
                },
            ),
            Put(
                10,
                Val {
                    seed: 130,
                    len: 283,
                },
            ),
            Put(8, Val { seed: 78, len: 279 }),
            Put(3, Val { seed: 17, len: 77 }),
            Delete(1),
            Put(
                9,
                Val {
                    seed: 116,
                    len: 113,
                },
            ),
            SingleDelete(37),
        ]),
        Get(24),
        Op::Write(Put(
            1,
            Val {
                seed: 219,
                len: 175,
            },
        )),
        ReadSnapshot(9059947410197453171),
        ReadSnapshot(8051174778521057980),
        SeekForPrev(20),
        Op::Write(Put(38, Val { seed: 58, len: 18 })),
        Op::Write(Put(5, Val { seed: 249, len: 39 })),
        Op::Write(Put(0, Val { seed: 221, len: 28 })),
        SeekForPrev(22),
        Op::Write(Put(
            25,
            Val {
                seed: 200,
                len: 223,
            },
        )),
        ReadSnapshot(7397293310403719686),
        Op::Write(Put(
            3,
            Val {
                seed: 246,
                len: 182,
            },
        )),
        Op::Write(Put(37, Val { seed: 168, len: 83 })),
        SeekForPrev(23),
        TakeSnapshot,
        Scan {
            from: None,
            to: Some(8),
        },
        Op::Write(Put(
            21,
            Val {
                seed: 161,
                len: 254,
            },
        )),
        Op::Write(Put(8, Val { seed: 132, len: 86 })),
        Batch(vec![
            Put(12, Val { seed: 15, len: 196 }),
            Put(30, Val { seed: 43, len: 199 }),
        ]),
        Scan {
            from: Some(44),
            to: None,
        },
        Op::Write(SingleDelete(28)),
        Op::Write(SingleDelete(37)),
        Op::Write(Put(
            14,
            Val {
                seed: 221,
                len: 163,
            },
        )),
        Op::Write(SingleDelete(30)),
        Scan {
            from: None,
            to: Some(41),
        },
        Flush,
        Op::Write(SingleDelete(39)),
        Get(5),
        ReadSnapshot(13588308001985048021),
        Batch(vec![
            Put(
                21,
                Val {
                    seed: 200,
                    len: 230,
                },
            ),
            Put(24, Val { seed: 25, len: 210 }),
            SingleDelete(37),
        ]),
        SeekForPrev(25),
        Op::Write(Put(20, Val { seed: 71, len: 89 })),
        Flush,
        Scan {
            from: Some(4),
            to: None,
        },
        Op::Write(Delete(31)),
        Get(1),
        Op::Write(Put(
            7,
            Val {
                seed: 101,
                len: 200,
            },
        )),
        Get(1),
        ReadSnapshot(12036394568998581422),
        Op::Write(Put(
            9,
            Val {
                seed: 210,
                len: 146,
            },
        )),
        Batch(vec![
            Put(
                16,
                Val {
                    seed: 238,
                    len: 257,
                },
            ),
            Put(
                36,
                Val {
                    seed: 126,
                    len: 224,
                },
            ),
            Put(35, Val { seed: 224, len: 81 }),
            SingleDelete(36),
            Put(
                11,
                Val {
                    seed: 102,
                    len: 159,
                },
            ),
            Put(
                16,
                Val {
                    seed: 242,
                    len: 174,
                },
            ),
            Put(
                15,
                Val {
                    seed: 209,
                    len: 186,
                },
            ),
            Put(0, Val { seed: 96, len: 214 }),
        ]),
        Get(34),
        Op::Write(Put(
            15,
            Val {
                seed: 118,
                len: 152,
            },
        )),
        Op::Write(Put(9, Val { seed: 69, len: 149 })),
        Op::Write(Put(
            25,
            Val {
                seed: 167,
                len: 242,
            },
        )),
        Get(42),
        Op::Write(SingleDelete(22)),
        Op::Write(Put(34, Val { seed: 248, len: 26 })),
        Get(10),
        Get(35),
        ReadSnapshot(886871193595347913),
        SeekForPrev(40),
        Op::Write(Delete(26)),
        Op::Write(Put(20, Val { seed: 115, len: 6 })),
        Batch(vec![
            Put(
                39,
                Val {
                    seed: 212,
                    len: 199,
                },
            ),
            SingleDelete(6),
            Put(24, Val { seed: 88, len: 39 }),
            Put(0, Val { seed: 32, len: 84 }),
            Put(
                32,
                Val {
                    seed: 251,
                    len: 168,
                },
            ),
            Put(30, Val { seed: 71, len: 298 }),
            Put(11, Val { seed: 2, len: 97 }),
            SingleDelete(13),
        ]),
        Op::Write(Put(22, Val { seed: 90, len: 101 })),
        Scan {
            from: Some(25),
            to: Some(29),
        },
        Op::Write(SingleDelete(34)),
        Op::Write(SingleDelete(31)),
        TakeSnapshot,
        Op::Write(SingleDelete(28)),
        SeekForPrev(15),
        Op::Write(SingleDelete(28)),
        Flush,
        Op::Write(Delete(30)),
        ReadSnapshot(11669374642887722388),
        Op::Write(Delete(10)),
        Op::Write(Delete(7)),
        Op::Write(Delete(12)),
        Op::Write(SingleDelete(29)),
        Op::Write(Put(
            24,
            Val {
                seed: 116,
                len: 152,
            },
        )),
        Op::Write(SingleDelete(12)),
        ReadSnapshot(4832203599844096087),
        Op::Write(Put(
            15,
            Val {
                seed: 194,
                len: 243,
            },
        )),
        Op::Write(Delete(4)),
        Op::Write(Delete(9)),
        Op::Write(Put(14, Val { seed: 44, len: 131 })),
        Op::Write(Put(2, Val { seed: 83, len: 103 })),
        Op::Write(Delete(35)),
        Op::Write(Put(37, Val { seed: 60, len: 218 })),
        Op::Write(Delete(2)),
        Op::Write(Delete(14)),
        Op::Write(Delete(13)),
        Get(11),
        SeekForPrev(2),
        Op::Write(Put(36, Val { seed: 230, len: 65 })),
        Op::Write(Put(2, Val { seed: 88, len: 155 })),
        Op::Write(Delete(16)),
        Op::Write(SingleDelete(23)),
        Op::Write(SingleDelete(12)),
        Op::Write(Delete(29)),
        Op::Write(Put(39, Val { seed: 86, len: 211 })),
        Batch(vec![SingleDelete(9)]),
        Op::Write(Put(33, Val { seed: 67, len: 217 })),
        Get(9),
        Op::Write(Put(6, Val { seed: 19, len: 72 })),
        Batch(vec![
            Put(19, Val { seed: 41, len: 201 }),
            SingleDelete(14),
            Put(30, Val { seed: 3, len: 14 }),
            Delete(32),
            Put(
                2,
                Val {
                    seed: 135,
                    len: 237,
                },
            ),
            SingleDelete(22),
            Put(30, Val { seed: 27, len: 186 }),
            Put(
                37,
                Val {
                    seed: 222,
                    len: 157,
                },
            ),
            Put(4, Val { seed: 218, len: 10 }),
            Put(8, Val { seed: 160, len: 21 }),
            Put(28, Val { seed: 95, len: 216 }),
            Put(20, Val { seed: 99, len: 182 }),
            Put(35, Val { seed: 70, len: 292 }),
            Put(23, Val { seed: 56, len: 166 }),
            Put(
                4,
                Val {
                    seed: 202,
                    len: 117,
                },
            ),
            Put(
                27,
                Val {
                    seed: 111,
                    len: 270,
                },
            ),
        ]),
        TakeSnapshot,
        Get(15),
        Get(0),
        SeekForPrev(37),
        SeekForPrev(44),
        Get(26),
        ReadSnapshot(7661776553686590650),
        Reopen,
        Op::Write(SingleDelete(26)),
        Op::Write(Put(
            2,
            Val {
                seed: 131,
                len: 155,
            },
        )),
        Op::Write(Delete(20)),
        SeekForPrev(42),
        Scan {
            from: Some(1),
            to: Some(31),
        },
    ]);
}

/// Regression: put, single delete, put, single delete of one key (within the contract). A
/// flush dropped the first single delete as shadowed by the second put; the second single
/// delete then cancelled that put and the first put reappeared. Timing-dependent (it needs the
/// flush to run between the writes), so the compaction crate's multi-pass GC test covers the
/// rule deterministically.
#[test]
fn regression_put_single_delete_cycles() {
    use Op::{Batch, Flush, ReadSnapshot, ReleaseSnapshot, TakeSnapshot};
    use Write::{Delete, Put, SingleDelete};
    run(vec![
        Batch(vec![Put(21, Val { seed: 0, len: 0 })]),
        Op::Write(Put(0, Val { seed: 0, len: 0 })),
        Op::Write(Put(0, Val { seed: 0, len: 0 })),
        TakeSnapshot,
        Batch(vec![
            Put(16, Val { seed: 11, len: 194 }),
            Put(
                9,
                Val {
                    seed: 188,
                    len: 142,
                },
            ),
            Put(9, Val { seed: 46, len: 273 }),
            Put(9, Val { seed: 55, len: 299 }),
            Put(13, Val { seed: 172, len: 99 }),
            Put(
                22,
                Val {
                    seed: 214,
                    len: 215,
                },
            ),
            SingleDelete(14),
        ]),
        Batch(vec![
            SingleDelete(21),
            SingleDelete(6),
            Put(
                21,
                Val {
                    seed: 247,
                    len: 182,
                },
            ),
            Put(
                14,
                Val {
                    seed: 185,
                    len: 239,
                },
            ),
            Put(
                1,
                Val {
                    seed: 187,
                    len: 180,
                },
            ),
            Put(29, Val { seed: 19, len: 61 }),
            Put(15, Val { seed: 15, len: 129 }),
            Put(1, Val { seed: 129, len: 33 }),
            Delete(31),
            Put(
                3,
                Val {
                    seed: 161,
                    len: 231,
                },
            ),
            Put(6, Val { seed: 247, len: 14 }),
            Put(
                4,
                Val {
                    seed: 163,
                    len: 164,
                },
            ),
            Put(37, Val { seed: 0, len: 231 }),
            SingleDelete(28),
            SingleDelete(18),
            Put(
                0,
                Val {
                    seed: 151,
                    len: 174,
                },
            ),
        ]),
        TakeSnapshot,
        ReleaseSnapshot(9973040581321116659),
        Batch(vec![
            SingleDelete(17),
            Put(
                0,
                Val {
                    seed: 107,
                    len: 139,
                },
            ),
            Put(32, Val { seed: 98, len: 214 }),
            Put(16, Val { seed: 105, len: 42 }),
            Put(
                19,
                Val {
                    seed: 228,
                    len: 154,
                },
            ),
            Put(
                19,
                Val {
                    seed: 227,
                    len: 247,
                },
            ),
            SingleDelete(33),
            SingleDelete(0),
            SingleDelete(21),
            Put(24, Val { seed: 160, len: 80 }),
            Put(
                14,
                Val {
                    seed: 237,
                    len: 262,
                },
            ),
            Put(27, Val { seed: 2, len: 20 }),
            Delete(3),
            Put(14, Val { seed: 6, len: 294 }),
            Put(32, Val { seed: 31, len: 257 }),
            SingleDelete(34),
            Delete(1),
        ]),
        TakeSnapshot,
        Flush,
        TakeSnapshot,
        Batch(vec![
            Delete(5),
            Put(
                23,
                Val {
                    seed: 127,
                    len: 238,
                },
            ),
            Put(
                21,
                Val {
                    seed: 138,
                    len: 183,
                },
            ),
            Put(3, Val { seed: 179, len: 65 }),
            Put(
                32,
                Val {
                    seed: 207,
                    len: 102,
                },
            ),
            Put(12, Val { seed: 46, len: 111 }),
            Put(25, Val { seed: 60, len: 180 }),
            Put(1, Val { seed: 47, len: 206 }),
            Put(
                3,
                Val {
                    seed: 198,
                    len: 241,
                },
            ),
            Delete(12),
            Delete(25),
            Put(7, Val { seed: 77, len: 141 }),
            Delete(25),
            Delete(34),
            Delete(18),
            Put(33, Val { seed: 74, len: 112 }),
            Put(19, Val { seed: 73, len: 252 }),
            Put(15, Val { seed: 10, len: 176 }),
            Put(36, Val { seed: 251, len: 69 }),
        ]),
        Flush,
        TakeSnapshot,
        ReadSnapshot(13826947038924872877),
    ]);
}
