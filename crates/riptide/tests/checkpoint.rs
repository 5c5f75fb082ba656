//! Checkpoints (`Db::create_checkpoint`): a consistent copy of an open database.
//!
//! - every column family at one sequence number (flushed tables, memtable rows, a range
//!   delete), hard-linked tables, nothing written after it, the source unaffected;
//! - under load: writers commit transfers (transactions and write batches, a ledger entry
//!   and two balances each) while compactions run; each checkpoint holds every commit
//!   acknowledged before it started, no commit by half, and survives the source deleting
//!   its files;
//! - a transaction prepared at the checkpoint is prepared in it, and can be committed there;
//! - refused targets; an I/O failure at each step fails the checkpoint and leaves nothing;
//!   tables copied where they cannot be linked.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use riptide::fs::{
    CreateMode, DirEntry, Fault, FaultFs, FaultRule, FileLock, FileSystem, FsOp, Metadata,
    RandomAccessFile, WritableFile,
};
use riptide::{
    CheckpointInfo, ColumnFamily, Concurrency, Db, ErrorKind, IsolationLevel, Options, ReadOptions,
    SyncMode, TransactionOptions, WriteBatch, Xid,
};

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(64 << 10)
}

/// A column family's rows, in key order.
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Every (key, value) of `cf`, in order.
fn scan(db: &Db, cf: &ColumnFamily) -> Rows {
    let mut it = db.iter_cf(cf, ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

/// Every column family's rows, by name.
fn scan_all(db: &Db) -> BTreeMap<String, Rows> {
    db.list_cfs()
        .into_iter()
        .map(|name| {
            let cf = db.cf(&name).unwrap();
            (name, scan(db, &cf))
        })
        .collect()
}

/// The names of the files in `dir` ending with `ext`.
fn files_ending(dir: &Path, ext: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    names.sort();
    names
}

fn staging_of(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap().to_os_string();
    name.push(".checkpoint-tmp");
    target.with_file_name(name)
}

fn check_stall(info: &CheckpointInfo) {
    assert!(info.writer_stall > Duration::ZERO, "{info:?}");
    assert!(info.writer_stall < info.total, "{info:?}");
}

#[test]
fn a_checkpoint_holds_every_column_family_at_one_point() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("db");
    let db = Db::open(&src, options()).unwrap();
    let default = db.default_cf();
    let a = db.create_cf("a").unwrap();
    let b = db.create_cf("b").unwrap();
    for i in 0..400u32 {
        db.put(format!("d{i:04}").as_bytes(), &[1u8; 64]).unwrap();
        db.put_cf(&a, format!("a{i:04}").as_bytes(), &[2u8; 64])
            .unwrap();
    }
    db.flush().unwrap();
    // Only in memtables and the WAL from here on.
    for i in 0..100u32 {
        db.put_cf(&b, format!("b{i:04}").as_bytes(), b"memtable")
            .unwrap();
        db.put(format!("d{i:04}").as_bytes(), b"overwritten")
            .unwrap();
    }
    db.delete_range_cf(&a, b"a0100", b"a0200").unwrap();
    db.delete(b"d0399").unwrap();
    let mut batch = WriteBatch::new();
    batch
        .put_cf(&a, b"a9999", b"batch")
        .put_cf(&b, b"b9999", b"batch");
    db.write(batch).unwrap();
    let expected = scan_all(&db);
    let seqno = db.latest_seqno();

    let target = tmp.path().join("ckpt");
    let info = db.create_checkpoint(&target).unwrap();
    assert_eq!(info.seqno, seqno);
    check_stall(&info);

    // Tables are hard links of the source's files (same inode), never copies.
    let tables = files_ending(&target, ".sst");
    assert!(!tables.is_empty());
    assert_eq!(info.tables_linked, tables.len() as u64);
    assert_eq!(info.tables_copied, 0);
    let mut linked_bytes = 0;
    for t in &tables {
        let ours = std::fs::metadata(target.join(t)).unwrap();
        let theirs = std::fs::metadata(src.join(t)).unwrap();
        assert_eq!(ours.ino(), theirs.ino(), "{t} is not a hard link");
        linked_bytes += ours.len();
    }
    assert_eq!(info.bytes_linked, linked_bytes);
    // The WAL and the manifest are copies; no lock file, no staging directory left.
    let logs = files_ending(&target, ".log");
    assert_eq!(info.wal_segments, logs.len() as u64);
    assert!(!logs.is_empty());
    let copied: u64 = logs
        .iter()
        .chain(std::iter::once(&"MANIFEST".to_string()))
        .map(|n| std::fs::metadata(target.join(n)).unwrap().len())
        .sum();
    assert_eq!(info.bytes_copied, copied);
    for n in &logs {
        let ours = std::fs::metadata(target.join(n)).unwrap();
        if let Ok(theirs) = std::fs::metadata(src.join(n)) {
            assert_ne!(ours.ino(), theirs.ino(), "{n} must be a copy");
        }
    }
    assert!(!target.join("LOCK").exists());
    assert!(!staging_of(&target).exists());

    // Writes after the checkpoint.
    db.put(b"after", b"x").unwrap();
    db.put_cf(&b, b"b0000", b"changed after").unwrap();
    db.delete_cf(&a, b"a0000").unwrap();

    let ck = Db::open(&target, options()).unwrap();
    assert_eq!(ck.latest_seqno(), seqno);
    assert_eq!(ck.list_cfs(), db.list_cfs());
    assert_eq!(scan_all(&ck), expected);
    assert_eq!(ck.get(b"after").unwrap(), None);
    assert_eq!(
        ck.get_cf(&ck.cf("b").unwrap(), b"b0000").unwrap(),
        Some(b"memtable".to_vec())
    );
    assert_eq!(
        ck.get_cf(&ck.cf("a").unwrap(), b"a0150").unwrap(),
        None,
        "range-deleted"
    );
    assert_eq!(
        ck.get_cf(&ck.cf("a").unwrap(), b"a0000").unwrap(),
        Some(vec![2u8; 64])
    );

    // The checkpoint is a database of its own: writes there do not reach the source, and
    // the source goes on (writes, flush, compaction deleting the files it shares).
    ck.put(b"only-in-checkpoint", b"1").unwrap();
    ck.flush().unwrap();
    assert_eq!(db.get(b"only-in-checkpoint").unwrap(), None);
    db.put(b"after2", b"y").unwrap();
    db.flush().unwrap();
    for cf in [&default, &a, &b] {
        db.compact_range(cf, None).unwrap();
    }
    assert!(
        tables.iter().any(|t| !src.join(t).exists()),
        "the source's compaction removed none of the shared files"
    );
    assert_eq!(db.get(b"after").unwrap(), Some(b"x".to_vec()));
    assert_eq!(db.get(b"d0000").unwrap(), Some(b"overwritten".to_vec()));
    assert_eq!(db.get_cf(&a, b"a0000").unwrap(), None);
    drop(ck);
    let ck = Db::open(&target, options()).unwrap();
    let mut with_own_write = expected;
    with_own_write
        .get_mut("default")
        .unwrap()
        .push((b"only-in-checkpoint".to_vec(), b"1".to_vec()));
    with_own_write.get_mut("default").unwrap().sort();
    assert_eq!(scan_all(&ck), with_own_write);

    // A second checkpoint of the same database, and one of the checkpoint.
    let again = db.create_checkpoint(tmp.path().join("ckpt2")).unwrap();
    assert!(again.seqno > info.seqno);
    ck.create_checkpoint(tmp.path().join("ckpt-of-ckpt"))
        .unwrap();
    drop(ck);
    let ckck = Db::open(tmp.path().join("ckpt-of-ckpt"), options()).unwrap();
    assert_eq!(
        ckck.get(b"only-in-checkpoint").unwrap(),
        Some(b"1".to_vec())
    );
    db.close().unwrap();
}

// ---- under load ----------------------------------------------------------------------

const ACCOUNTS: usize = 16;
const INITIAL: u64 = 1_000;
/// The batch writer's own two accounts (nobody else writes them).
const PRIVATE: [usize; 2] = [100, 101];
const TXN_WRITERS: usize = 2;
const WRITERS: usize = TXN_WRITERS + 1;
const CHECKPOINTS: usize = 6;

fn account(i: usize) -> Vec<u8> {
    format!("acct/{i:03}").into_bytes()
}

fn enc(v: u64) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

fn dec(v: &[u8]) -> u64 {
    u64::from_be_bytes(v.try_into().unwrap())
}

/// Ledger key of commit `seq` (0, 1, 2...) of `writer`.
fn ledger_key(writer: usize, seq: u64) -> Vec<u8> {
    format!("w{writer}/{seq:08}").into_bytes()
}

/// A ledger entry: from, to, amount, and padding so memtables fill and compactions run.
fn ledger_value(from: usize, to: usize, amount: u64) -> Vec<u8> {
    let mut v = vec![from as u8, to as u8];
    v.extend_from_slice(&amount.to_be_bytes());
    v.extend_from_slice(&[0x5a; 150]);
    v
}

fn retryable(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Conflict | ErrorKind::Deadlock | ErrorKind::TimedOut
    )
}

/// Transaction writer `id`: moves a random amount between two shared accounts and writes
/// its ledger entry, in one pessimistic transaction, until `stop`. `acked` counts the
/// commits acknowledged (commit `n` is ledger entry `n - 1`).
fn txn_writer(db: &Db, id: usize, stop: &AtomicBool, acked: &AtomicU64) {
    let balances = db.default_cf();
    let ledger = db.cf("ledger").unwrap();
    let mut rng = StdRng::seed_from_u64(id as u64);
    while !stop.load(Ordering::Relaxed) {
        let from = rng.random_range(0..ACCOUNTS);
        let to = (from + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.random_range(1..=50u64);
        let seq = acked.load(Ordering::Relaxed);
        loop {
            let attempt = || -> riptide::Result<()> {
                let txn = db.begin_transaction(
                    TransactionOptions::default()
                        .isolation(IsolationLevel::RepeatableRead)
                        .concurrency(Concurrency::Pessimistic)
                        .lock_timeout(Duration::from_secs(5)),
                )?;
                // Lock in key order: no deadlock between the writers.
                let (lo, hi) = (from.min(to), from.max(to));
                let lo_v = dec(&txn.get_for_update(&balances, &account(lo), true)?.unwrap());
                let hi_v = dec(&txn.get_for_update(&balances, &account(hi), true)?.unwrap());
                let (from_v, to_v) = if from == lo {
                    (lo_v, hi_v)
                } else {
                    (hi_v, lo_v)
                };
                // Balances may go "negative" in u64 terms only if amount > balance: skip.
                let amount = amount.min(from_v);
                txn.put(&balances, &account(from), &enc(from_v - amount))?;
                txn.put(&balances, &account(to), &enc(to_v + amount))?;
                txn.put(
                    &ledger,
                    &ledger_key(id, seq),
                    &ledger_value(from, to, amount),
                )?;
                txn.commit()
            };
            match attempt() {
                Ok(()) => break,
                Err(e) if retryable(e.kind()) => continue,
                Err(e) => panic!("writer {id}: {e}"),
            }
        }
        acked.fetch_add(1, Ordering::SeqCst);
    }
}

/// The batch writer: moves amounts between its two private accounts with write batches
/// (balances in the default column family, the ledger entry in `ledger`, one batch).
fn batch_writer(db: &Db, id: usize, stop: &AtomicBool, acked: &AtomicU64) {
    let balances = db.default_cf();
    let ledger = db.cf("ledger").unwrap();
    let mut rng = StdRng::seed_from_u64(id as u64);
    let mut held = [INITIAL, INITIAL];
    while !stop.load(Ordering::Relaxed) {
        let f = rng.random_range(0..2usize);
        let t = 1 - f;
        let amount = rng.random_range(0..=held[f].min(50));
        held[f] -= amount;
        held[t] += amount;
        let seq = acked.load(Ordering::Relaxed);
        let mut batch = WriteBatch::new();
        batch
            .put_cf(&balances, &account(PRIVATE[f]), &enc(held[f]))
            .put_cf(&balances, &account(PRIVATE[t]), &enc(held[t]))
            .put_cf(
                &ledger,
                &ledger_key(id, seq),
                &ledger_value(PRIVATE[f], PRIVATE[t], amount),
            );
        db.write(batch).unwrap();
        acked.fetch_add(1, Ordering::SeqCst);
    }
}

/// Checks the checkpoint at `path` against what the writers had acknowledged before it
/// started (`floor`) and after it returned (`ceil`); returns how many commits it holds.
fn verify_loaded(path: &Path, info: &CheckpointInfo, floor: &[u64], ceil: &[u64]) -> u64 {
    let ck = Db::open(path, options()).unwrap();
    assert_eq!(
        ck.latest_seqno(),
        info.seqno,
        "{}: the WAL copy goes past the cut",
        path.display()
    );
    let ledger = scan(&ck, &ck.cf("ledger").unwrap());
    // Replayed in key order, not commit order: intermediate sums may go below zero.
    let mut balances: BTreeMap<usize, i64> = (0..ACCOUNTS)
        .chain(PRIVATE)
        .map(|i| (i, INITIAL as i64))
        .collect();
    let mut per_writer = [0u64; WRITERS];
    for (key, value) in &ledger {
        let key = String::from_utf8(key.clone()).unwrap();
        let (w, seq) = key[1..].split_once('/').unwrap();
        let (w, seq): (usize, u64) = (w.parse().unwrap(), seq.parse().unwrap());
        // Each writer commits in order: its entries are a prefix 0, 1, 2...
        assert_eq!(
            seq,
            per_writer[w],
            "{}: writer {w} has a gap",
            path.display()
        );
        per_writer[w] += 1;
        let (from, to) = (usize::from(value[0]), usize::from(value[1]));
        let amount = i64::try_from(u64::from_be_bytes(value[2..10].try_into().unwrap())).unwrap();
        *balances.get_mut(&from).unwrap() -= amount;
        *balances.get_mut(&to).unwrap() += amount;
    }
    for w in 0..WRITERS {
        assert!(
            per_writer[w] >= floor[w],
            "{}: writer {w} acknowledged {} commits before the checkpoint, it holds {}",
            path.display(),
            floor[w],
            per_writer[w]
        );
        // One commit may be published but not yet acknowledged when the call returns.
        assert!(per_writer[w] <= ceil[w] + 1, "{}", path.display());
    }
    // The ledger replayed from the initial balances gives the stored balances: no commit
    // is in by half (a ledger entry without its balances, or the reverse).
    let stored: BTreeMap<usize, i64> = scan(&ck, &ck.default_cf())
        .into_iter()
        .map(|(k, v)| {
            let k = String::from_utf8(k).unwrap();
            (
                k["acct/".len()..].parse().unwrap(),
                i64::try_from(dec(&v)).unwrap(),
            )
        })
        .collect();
    assert_eq!(stored, balances, "{}", path.display());
    let shared: i64 = (0..ACCOUNTS).map(|i| stored[&i]).sum();
    assert_eq!(shared, ACCOUNTS as i64 * INITIAL as i64);
    assert_eq!(
        stored[&PRIVATE[0]] + stored[&PRIVATE[1]],
        2 * INITIAL as i64,
        "{}",
        path.display()
    );
    per_writer.iter().sum()
}

#[test]
fn checkpoints_under_load_hold_every_acknowledged_commit_and_no_half_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("db");
    let opts = options()
        .write_buffer_size(32 << 10)
        .l0_compaction_trigger(2)
        .target_file_size(32 << 10);
    let db = Db::open(&src, opts).unwrap();
    db.create_cf("ledger").unwrap();
    for i in (0..ACCOUNTS).chain(PRIVATE) {
        db.put(&account(i), &enc(INITIAL)).unwrap();
    }
    let stop = AtomicBool::new(false);
    let acked: Vec<AtomicU64> = (0..WRITERS).map(|_| AtomicU64::new(0)).collect();
    let load = |acked: &[AtomicU64]| -> Vec<u64> {
        acked.iter().map(|a| a.load(Ordering::SeqCst)).collect()
    };
    let mut taken = Vec::new();
    std::thread::scope(|s| {
        for id in 0..WRITERS {
            let (db, stop, acked) = (&db, &stop, &acked[id]);
            s.spawn(move || {
                if id < TXN_WRITERS {
                    txn_writer(db, id, stop, acked);
                } else {
                    batch_writer(db, id, stop, acked);
                }
            });
        }
        std::thread::sleep(Duration::from_millis(300));
        for n in 0..CHECKPOINTS {
            let path = tmp.path().join(format!("ckpt{n}"));
            let floor = load(&acked);
            let info = db.create_checkpoint(&path).unwrap();
            let ceil = load(&acked);
            taken.push((path, info, floor, ceil));
            std::thread::sleep(Duration::from_millis(150));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let stats = db.statistics();
    assert!(
        stats.compactions + stats.compaction_files_moved > 0,
        "no compaction ran during the load: {stats:?}"
    );

    // The source compacts everything, deleting most of the files the checkpoints share.
    db.flush().unwrap();
    for name in ["default", "ledger"] {
        db.compact_range(&db.cf(name).unwrap(), None).unwrap();
    }
    let mut deleted_in_source = 0;
    for (path, ..) in &taken {
        deleted_in_source += files_ending(path, ".sst")
            .iter()
            .filter(|t| !src.join(t).exists())
            .count();
    }
    assert!(deleted_in_source > 0, "the test deleted no shared file");

    let mut stalls = Vec::new();
    let mut previous = 0;
    for (path, info, floor, ceil) in &taken {
        check_stall(info);
        assert!(info.tables_linked > 0, "{info:?}");
        let commits = verify_loaded(path, info, floor, ceil);
        assert!(
            commits >= previous,
            "a later checkpoint holds fewer commits"
        );
        previous = commits;
        stalls.push(info.writer_stall);
        eprintln!(
            "{}: seqno {}, {} commits, {} tables linked, {} WAL segments, {} bytes copied, \
             writers held off {:?}, {:?} in all",
            path.display(),
            info.seqno,
            commits,
            info.tables_linked,
            info.wal_segments,
            info.bytes_copied,
            info.writer_stall,
            info.total
        );
    }
    stalls.sort();
    eprintln!(
        "writer stall over {} checkpoints: min {:?}, median {:?}, max {:?}",
        stalls.len(),
        stalls[0],
        stalls[stalls.len() / 2],
        stalls[stalls.len() - 1]
    );
    // The source itself is intact.
    let final_commits = verify_loaded_source(&db);
    assert!(final_commits >= previous);
    db.close().unwrap();
}

/// The source after the load: a checkpoint of it, verified like the others, holding every
/// commit (the writers have stopped). Returns how many.
fn verify_loaded_source(db: &Db) -> u64 {
    let ledger = scan(db, &db.cf("ledger").unwrap());
    let all: Vec<u64> = (0..WRITERS)
        .map(|w| {
            let prefix = format!("w{w}/");
            ledger
                .iter()
                .filter(|(k, _)| k.starts_with(prefix.as_bytes()))
                .count() as u64
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("final");
    let info = db.create_checkpoint(&path).unwrap();
    let commits = verify_loaded(&path, &info, &all, &all);
    assert_eq!(commits, all.iter().sum::<u64>());
    commits
}

// ---- two-phase commit ------------------------------------------------------------------

#[test]
fn a_transaction_prepared_at_the_checkpoint_can_be_committed_there() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), options()).unwrap();
    let cf = db.default_cf();
    let begin = || {
        db.begin_transaction(TransactionOptions::default().concurrency(Concurrency::Pessimistic))
            .unwrap()
    };
    let x1 = Xid::from_name("x1").unwrap();
    let prepared = begin();
    prepared.put(&cf, b"k1", b"from x1").unwrap();
    prepared.prepare(&x1).unwrap();
    // Committed before the checkpoint: its rows are in it, it is not listed.
    let x2 = Xid::from_name("x2").unwrap();
    let done = begin();
    done.put(&cf, b"k2", b"from x2").unwrap();
    done.prepare(&x2).unwrap();
    done.commit().unwrap();
    // Memtable switches: x1's prepare record is logged again in each new segment, and the
    // segment it was first logged in goes.
    for i in 0..3u32 {
        db.put(format!("filler{i}").as_bytes(), &[0u8; 100])
            .unwrap();
        db.flush().unwrap();
    }

    let target = tmp.path().join("ckpt");
    db.create_checkpoint(&target).unwrap();
    // Prepared after the checkpoint: not in it.
    let x3 = Xid::from_name("x3").unwrap();
    let later = begin();
    later.put(&cf, b"k3", b"from x3").unwrap();
    later.prepare(&x3).unwrap();

    let ck = Db::open(&target, options()).unwrap();
    assert_eq!(ck.prepared_transactions(), vec![x1.clone()]);
    assert_eq!(ck.get(b"k1").unwrap(), None, "prepared, not committed");
    assert_eq!(ck.get(b"k2").unwrap(), Some(b"from x2".to_vec()));
    assert_eq!(ck.get(b"k3").unwrap(), None);
    ck.commit_prepared(&x1).unwrap();
    assert_eq!(ck.get(b"k1").unwrap(), Some(b"from x1".to_vec()));
    assert!(ck.prepared_transactions().is_empty());

    // The source still has x1 prepared; rolling it back there leaves the checkpoint's commit.
    let mut listed = db.prepared_transactions();
    listed.sort();
    assert_eq!(listed, vec![x1.clone(), x3.clone()]);
    assert_eq!(db.get(b"k1").unwrap(), None);
    prepared.rollback().unwrap();
    later.commit().unwrap();
    assert_eq!(db.get(b"k1").unwrap(), None);
    assert_eq!(db.get(b"k3").unwrap(), Some(b"from x3".to_vec()));
    drop(ck);
    let ck = Db::open(&target, options()).unwrap();
    assert_eq!(ck.get(b"k1").unwrap(), Some(b"from x1".to_vec()));
    assert_eq!(ck.get(b"k3").unwrap(), None);
}

// ---- refused targets and I/O failures ------------------------------------------------

#[test]
fn an_existing_target_a_missing_parent_or_a_leftover_staging_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), options()).unwrap();
    db.put(b"k", b"v").unwrap();

    let existing = tmp.path().join("existing");
    std::fs::create_dir(&existing).unwrap();
    std::fs::write(existing.join("mine"), b"keep me").unwrap();
    let e = db.create_checkpoint(&existing).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("existing"), "{e}");
    assert!(e.to_string().contains("already exists"), "{e}");
    assert_eq!(std::fs::read(existing.join("mine")).unwrap(), b"keep me");
    assert!(!staging_of(&existing).exists());

    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = db.create_checkpoint(&file).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");

    let orphan = tmp.path().join("no-such-parent").join("ckpt");
    let e = db.create_checkpoint(&orphan).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains("no-such-parent"), "{e}");
    assert!(!orphan.exists() && !tmp.path().join("no-such-parent").exists());

    let under_file = file.join("ckpt");
    assert!(db.create_checkpoint(&under_file).is_err());

    // A staging directory nobody removed (a crash, or another checkpoint writing it): not
    // touched, and the target is not made.
    let target = tmp.path().join("ckpt");
    let staging = staging_of(&target);
    std::fs::create_dir(&staging).unwrap();
    std::fs::write(staging.join("someone-elses"), b"x").unwrap();
    let e = db.create_checkpoint(&target).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    assert!(e.to_string().contains("ckpt.checkpoint-tmp"), "{e}");
    assert!(staging.join("someone-elses").exists());
    assert!(!target.exists());
    std::fs::remove_dir_all(&staging).unwrap();

    // After all that, it works.
    db.create_checkpoint(&target).unwrap();
    assert_eq!(
        Db::open(&target, options()).unwrap().get(b"k").unwrap(),
        Some(b"v".to_vec())
    );
}

/// Every operation a checkpoint makes, failed once at each of its calls in turn (`EIO`, a
/// short write): the checkpoint fails with an I/O error naming the checkpoint, nothing is
/// left at the target or in its staging directory, and the source stays writable. Once the
/// fault lands past the last call, the checkpoint succeeds and holds every row.
#[test]
fn an_io_failure_at_any_step_fails_the_checkpoint_and_leaves_nothing() {
    let fs = FaultFs::new(11);
    let opts = options().file_system(fs.as_dyn());
    let db = Db::open("/db", opts.clone()).unwrap();
    let t = db.create_cf("t").unwrap();
    for i in 0..300u32 {
        db.put_cf(&t, format!("k{i:04}").as_bytes(), &[3u8; 64])
            .unwrap();
    }
    db.flush().unwrap();
    for i in 300..350u32 {
        db.put_cf(&t, format!("k{i:04}").as_bytes(), &[4u8; 64])
            .unwrap();
    }
    let expected = scan(&db, &t);

    let mut made = 0;
    let cases = [
        (FsOp::Metadata, Fault::Eio),
        (FsOp::CreateDir, Fault::Eio),
        (FsOp::Link, Fault::Eio),
        (FsOp::OpenRead, Fault::Eio),
        (FsOp::Read, Fault::Eio),
        (FsOp::Create, Fault::NoSpace),
        (FsOp::Append, Fault::ShortWrite),
        (FsOp::Sync, Fault::Eio),
        (FsOp::SyncDir, Fault::Eio),
        (FsOp::Rename, Fault::Eio),
    ];
    for (op, fault) in cases {
        let mut failures = 0;
        for skip in 0.. {
            assert!(skip < 100, "{op:?}: never got past the fault");
            made += 1;
            let target = PathBuf::from(format!("/ckpt{made}"));
            let before = fs.injected_faults();
            fs.add_rule(FaultRule::new(op, fault).after(skip).times(1));
            let result = db.create_checkpoint(&target);
            fs.clear_rules();
            let fired = fs.injected_faults() > before;
            assert!(!fs.exists(&staging_of(&target)).unwrap(), "{op:?} #{skip}");
            if fired {
                let e = result.expect_err("a checkpoint whose I/O failed succeeded");
                assert_eq!(e.kind(), ErrorKind::Io, "{op:?} #{skip}: {e}");
                assert!(e.to_string().contains(&format!("/ckpt{made}")), "{e}");
                assert!(!fs.exists(&target).unwrap(), "{op:?} #{skip}: {e}");
                failures += 1;
                continue;
            }
            result.unwrap();
            let ck = Db::open(&target, opts.clone()).unwrap();
            let found = scan(&ck, &ck.cf("t").unwrap());
            assert!(found == expected, "{op:?}: {} rows", found.len());
            break;
        }
        assert!(failures > 0, "{op:?}: no call of the checkpoint was failed");
        db.put(b"still", b"writable").unwrap();
    }
}

/// A file system that makes no hard links across "devices" (as between two mounts).
#[derive(Debug)]
struct NoLinks(FaultFs);

impl FileSystem for NoLinks {
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>> {
        self.0.create(path, mode)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        self.0.open_read(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.0.truncate(path, len)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        self.0.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.0.create_dir_all(dir)
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.0.metadata(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.0.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.0.lock_file(path)
    }
    fn hard_link(&self, _: &Path, _: &Path) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::CrossesDevices))
    }
    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        self.0.create_dir(dir)
    }
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        self.0.remove_dir(dir)
    }
}

#[test]
fn tables_are_copied_where_they_cannot_be_linked() {
    let fault = FaultFs::new(3);
    let opts = options().file_system(Arc::new(NoLinks(fault.clone())));
    let db = Db::open("/db", opts.clone()).unwrap();
    for i in 0..500u32 {
        db.put(format!("k{i:04}").as_bytes(), &[5u8; 64]).unwrap();
    }
    db.flush().unwrap();
    db.put(b"late", b"in the WAL").unwrap();
    let info = db.create_checkpoint("/ckpt").unwrap();
    assert_eq!(info.tables_linked, 0);
    assert_eq!(info.bytes_linked, 0);
    assert!(info.tables_copied > 0, "{info:?}");
    let table_bytes: u64 = fault
        .file_names(Path::new("/ckpt"))
        .iter()
        .filter(|n| n.ends_with(".sst"))
        .map(|n| {
            fault
                .file_content(&Path::new("/ckpt").join(n))
                .unwrap()
                .len() as u64
        })
        .sum();
    assert!(info.bytes_copied > table_bytes, "{info:?}");
    let ck = Db::open("/ckpt", opts).unwrap();
    assert_eq!(scan(&ck, &ck.default_cf()), scan(&db, &db.default_cf()));
}
