//! Fault injection, randomized: over many seeds, random writes, reads, flushes and
//! compactions on a `FaultFs` armed with random faults (EIO, ENOSPC, short writes, corrupted
//! reads, on any kind of call and file), ended by a simulated power loss or a close, then a
//! reopen without faults, checked against a `BTreeMap` of the acknowledged writes.
//!
//! The rules checked:
//! - an acknowledged write is never lost (sync mode `Full`; with `None`, rounds end with a
//!   close, never a crash, since unsynced writes may die with the power);
//! - a write that failed with an I/O error may or may not be present after the reopen, but
//!   wholly (a batch is atomic); one refused for another reason never is;
//! - after a write fails with an I/O error the database is read-only: no later write of the
//!   session succeeds;
//! - a read never returns a wrong answer: it returns the model's value, or an error of kind
//!   `Corruption` or `Io`;
//! - no failure is a caught panic (`Internal`), and a reopen without faults always succeeds
//!   (also after an open that failed because of a fault, corrupted reads of the WAL
//!   during its replay included).
//!
//! `RIPTIDE_FAULT_SEEDS=N` runs seeds `0..N` (default 200); `RIPTIDE_FAULT_SEED=S` runs one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide::{Compression, Db, Error, ErrorKind, Options, ReadOptions, SyncMode, WriteBatch};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// One write of a batch: a key and its new value (`None`: deleted).
type Change = (Vec<u8>, Option<Vec<u8>>);

const KEYS: u32 = 300;

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

fn apply(map: &mut Map, changes: &[Change]) {
    for (k, v) in changes {
        match v {
            Some(v) => map.insert(k.clone(), v.clone()),
            None => map.remove(k),
        };
    }
}

fn options(fs: &FaultFs, rng: &mut StdRng) -> (Options, SyncMode) {
    let sync = if rng.random_bool(0.75) {
        SyncMode::Full
    } else {
        SyncMode::None
    };
    let opts = Options::default()
        .file_system(fs.as_dyn())
        .sync_mode(sync)
        .write_buffer_size(rng.random_range(2usize..24) << 10)
        .target_file_size(rng.random_range(4u64..16) << 10)
        .block_size(rng.random_range(256usize..2048))
        .l0_compaction_trigger(rng.random_range(2usize..5))
        .max_subcompactions(rng.random_range(1usize..3))
        .young_space_bound(rng.random_bool(0.5))
        .compression(if rng.random_bool(0.3) {
            Compression::Zstd { level: 1 }
        } else {
            Compression::None
        })
        .block_cache_size(rng.random_range(16u64..256) << 10)
        .max_open_files(rng.random_range(4usize..32));
    (opts, sync)
}

/// A random fault rule; the first `0..max_skip` matching calls go through.
fn random_rule(rng: &mut StdRng, with_reads: bool, max_skip: u64) -> FaultRule {
    let mut ops = vec![
        FsOp::Append,
        FsOp::Append,
        FsOp::Sync,
        FsOp::Sync,
        FsOp::SyncDir,
        FsOp::Create,
        FsOp::Rename,
        FsOp::Remove,
        FsOp::OpenRead,
        FsOp::Truncate,
        FsOp::List,
        FsOp::Metadata,
    ];
    if with_reads {
        ops.extend([FsOp::Read, FsOp::Read]);
    }
    let op = ops[rng.random_range(0..ops.len())];
    let fault = match op {
        FsOp::Append => [Fault::Eio, Fault::NoSpace, Fault::ShortWrite][rng.random_range(0..3)],
        FsOp::Read => [Fault::Eio, Fault::CorruptRead][rng.random_range(0..2)],
        _ => [Fault::Eio, Fault::NoSpace][rng.random_range(0..2)],
    };
    let mut rule = FaultRule::new(op, fault)
        .after(rng.random_range(0..max_skip))
        .probability(rng.random_range(0.02..0.3));
    match rng.random_range(0..5) {
        0 => rule = rule.on_files_ending_with(".log"),
        1 => rule = rule.on_files_ending_with(".sst"),
        2 => rule = rule.on_files_ending_with("MANIFEST.tmp"),
        _ => {}
    }
    if rng.random_bool(0.5) {
        rule = rule.times(rng.random_range(1..4));
    }
    rule
}

/// With `RIPTIDE_FAULT_TRACE` set, prints what the test does.
fn trace(msg: impl FnOnce() -> String) {
    if std::env::var_os("RIPTIDE_FAULT_TRACE").is_some() {
        eprintln!("{}", msg());
    }
}

fn check_not_a_bug(e: &Error, what: &str) {
    trace(|| format!("{what}: error: {e}"));
    assert_ne!(e.kind(), ErrorKind::Internal, "{what}: {e}");
    assert!(!e.to_string().contains("panicked"), "{what}: {e}");
}

/// Reads everything with a forward scan (no faults are armed).
fn scan_all(db: &Db, what: &str) -> Map {
    let mut it = db
        .iter(ReadOptions::default())
        .unwrap_or_else(|e| panic!("{what}: iter: {e}"));
    it.seek_to_first()
        .unwrap_or_else(|e| panic!("{what}: seek: {e}"));
    let mut out = Map::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next().unwrap_or_else(|e| panic!("{what}: next: {e}"));
    }
    out
}

/// Checks the reopened database against `model`, or `model` plus the write whose outcome
/// was unknown; returns the state found.
fn verify(db: &Db, model: &Map, pending: Option<&[Change]>, what: &str) -> Map {
    let got = scan_all(db, what);
    if got == *model {
        return got;
    }
    if let Some(p) = pending {
        let mut with = model.clone();
        apply(&mut with, p);
        if got == with {
            return got;
        }
    }
    let missing: Vec<_> = model
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(*v))
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .take(10)
        .collect();
    let extra: Vec<_> = got
        .iter()
        .filter(|(k, v)| model.get(*k) != Some(*v))
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .take(10)
        .collect();
    panic!(
        "{what}: the database holds {} keys, the model {}; wrong or missing: {missing:?}; \
         unexpected: {extra:?}; pending write: {pending:?}",
        got.len(),
        model.len()
    );
}

/// Opens the database, maybe with faults armed during the open (a failed open is fine;
/// then it is retried without faults, maybe after a crash if `can_crash`: sync mode `Full`). Returns the database and the
/// file system it runs on.
fn open(
    mut fs: FaultFs,
    rng: &mut StdRng,
    opts: &dyn Fn(&FaultFs) -> Options,
    can_crash: bool,
) -> (Db, FaultFs) {
    if rng.random_bool(0.3) {
        // Reads too: a corrupted read of the WAL during replay must not be taken for a
        // torn tail (and cut acknowledged records off).
        let rule = random_rule(rng, true, 8);
        trace(|| format!("open with {rule:?}"));
        fs.add_rule(rule);
        match Db::open(Path::new("/db"), opts(&fs)) {
            Ok(db) => {
                fs.clear_rules();
                return (db, fs);
            }
            Err(e) => {
                check_not_a_bug(&e, "open with faults");
                fs.clear_rules();
                if can_crash && rng.random_bool(0.5) {
                    trace(|| format!("crash after the failed open:\n{}", fs.describe()));
                    fs = fs.crash();
                }
            }
        }
    }
    match Db::open(Path::new("/db"), opts(&fs)) {
        Ok(db) => (db, fs),
        Err(e) => panic!("open without faults failed: {e}"),
    }
}

fn run_seed(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut fs = FaultFs::new(seed);
    let (base, sync) = options(&fs, &mut rng);
    let opts = move |fs: &FaultFs| base.clone().file_system(fs.as_dyn());
    let mut model = Map::new();
    let mut pending: Option<Vec<Change>> = None;
    let mut serial = 0u64;
    for round in 0..5 {
        let what = format!("seed {seed} round {round}");
        let (db, f) = open(fs, &mut rng, &opts, sync == SyncMode::Full);
        fs = f;
        model = verify(
            &db,
            &model,
            pending.as_deref(),
            &format!("{what}: reopened"),
        );
        pending = None;

        let with_reads = rng.random_bool(0.5);
        for _ in 0..rng.random_range(1..4) {
            let rule = random_rule(&mut rng, with_reads, 40);
            trace(|| format!("{what}: rule {rule:?}"));
            fs.add_rule(rule);
        }
        for step in 0..rng.random_range(50..300) {
            let what = format!("{what} step {step}");
            serial += 1;
            let value = |rng: &mut StdRng| {
                let len = rng.random_range(0..200);
                let mut v = serial.to_le_bytes().to_vec();
                v.resize(8 + len, b'v');
                v
            };
            let dice = rng.random_range(0..100);
            let changes: Vec<Change> = match dice {
                0..55 => vec![(key(rng.random_range(0..KEYS)), Some(value(&mut rng)))],
                55..70 => vec![(key(rng.random_range(0..KEYS)), None)],
                70..80 => (0..rng.random_range(1..7))
                    .map(|_| {
                        let k = key(rng.random_range(0..KEYS));
                        let v = rng.random_bool(0.7).then(|| value(&mut rng));
                        (k, v)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            if !changes.is_empty() {
                let res = match changes.as_slice() {
                    [(k, Some(v))] if dice < 55 => db.put(k, v),
                    [(k, None)] if dice < 70 => db.delete(k),
                    _ => {
                        let mut b = WriteBatch::new();
                        for (k, v) in &changes {
                            match v {
                                Some(v) => b.put(k, v),
                                None => b.delete(k),
                            };
                        }
                        db.write(b)
                    }
                };
                match res {
                    Ok(()) => {
                        assert!(
                            pending.is_none(),
                            "{what}: a write succeeded after a write failed with an I/O error"
                        );
                        apply(&mut model, &changes);
                    }
                    Err(e) => {
                        check_not_a_bug(&e, &what);
                        if e.kind() == ErrorKind::Io {
                            assert!(
                                pending.is_none(),
                                "{what}: a second write failed with an I/O error: {e}"
                            );
                            pending = Some(changes);
                        } else {
                            assert_eq!(e.kind(), ErrorKind::Closed, "{what}: {e}");
                            assert!(e.to_string().contains("read-only"), "{what}: {e}");
                        }
                    }
                }
                continue;
            }
            match dice {
                80..85 => {
                    if let Err(e) = db.flush() {
                        check_not_a_bug(&e, &what);
                    }
                }
                85..88 => {
                    if let Err(e) = db.compact_range(&db.default_cf(), None) {
                        check_not_a_bug(&e, &what);
                    }
                }
                88..96 => {
                    let k = key(rng.random_range(0..KEYS));
                    match db.get(&k) {
                        Ok(v) => assert_eq!(v.as_ref(), model.get(&k), "{what}: get {k:?}"),
                        Err(e) => {
                            check_not_a_bug(&e, &what);
                            assert!(
                                matches!(e.kind(), ErrorKind::Corruption | ErrorKind::Io),
                                "{what}: get: {e}"
                            );
                        }
                    }
                }
                _ => {
                    let from = key(rng.random_range(0..KEYS));
                    let want: Vec<_> = model.range(from.clone()..).take(20).collect();
                    let res = (|| -> riptide::Result<Vec<(Vec<u8>, Vec<u8>)>> {
                        let mut it = db.iter(ReadOptions::default().lower_bound(from.clone()))?;
                        it.seek_to_first()?;
                        let mut got = Vec::new();
                        while it.valid() && got.len() < 20 {
                            got.push((it.key().to_vec(), it.value().to_vec()));
                            it.next()?;
                        }
                        Ok(got)
                    })();
                    match res {
                        Ok(got) => {
                            let got: Vec<_> = got.iter().map(|(k, v)| (k, v)).collect();
                            assert_eq!(got, want, "{what}: scan from {from:?}");
                        }
                        Err(e) => {
                            check_not_a_bug(&e, &what);
                            assert!(
                                matches!(e.kind(), ErrorKind::Corruption | ErrorKind::Io),
                                "{what}: scan: {e}"
                            );
                        }
                    }
                }
            }
        }
        let crash = sync == SyncMode::Full && rng.random_bool(0.6);
        trace(|| {
            format!(
                "{what}: ends with a {}",
                if crash { "crash" } else { "close" }
            )
        });
        if crash {
            trace(|| format!("crash:\n{}", fs.describe()));
            let crashed = fs.crash();
            drop(db);
            fs = crashed;
        } else {
            if let Err(e) = db.close() {
                check_not_a_bug(&e, &format!("{what}: close"));
            }
            fs.clear_rules();
        }
    }
    let (db, _fs) = open(fs, &mut rng, &opts, sync == SyncMode::Full);
    verify(
        &db,
        &model,
        pending.as_deref(),
        &format!("seed {seed}: final reopen"),
    );
    db.close().unwrap();
}

#[test]
fn random_faults_never_lose_acknowledged_writes() {
    let seeds: Vec<u64> = match std::env::var("RIPTIDE_FAULT_SEED") {
        Ok(s) => vec![s.parse().expect("RIPTIDE_FAULT_SEED is a number")],
        Err(_) => {
            let n = std::env::var("RIPTIDE_FAULT_SEEDS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(200u64);
            (0..n).collect()
        }
    };
    for seed in seeds {
        let outcome = std::panic::catch_unwind(|| run_seed(seed));
        if let Err(panic) = outcome {
            eprintln!(
                "fault_random failed with seed {seed}: replay with RIPTIDE_FAULT_SEED={seed}"
            );
            std::panic::resume_unwind(panic);
        }
    }
}
