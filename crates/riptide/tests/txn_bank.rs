//! The bank test: writer threads move random amounts between accounts in transactions while
//! reader threads sum every account in a snapshot and check that the total never changes.
//! Every transfer also writes a marker row (from, to, amount) in the same transaction, so at
//! the end the markers replayed from the initial balances must give the final balances
//! exactly: no transfer half-applied, none lost, none applied twice.
//!
//! Run in both concurrency modes in-process, and in a crash-restart variant: a child process
//! (this binary again, with `RIPTIDE_BANK_CHILD` set) runs the bank with `SyncMode::Full`, the
//! parent SIGKILLs it at a random moment, reopens the database and checks the invariants and
//! that every transfer the child acknowledged is there.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng, rngs::StdRng};
use riptide::{
    ColumnFamily, Concurrency, Db, ErrorKind, IsolationLevel, Options, ReadOptions, Result,
    SyncMode, TransactionOptions,
};

const ACCOUNTS: usize = 20;
const INITIAL: u64 = 1000;
const TOTAL: u64 = ACCOUNTS as u64 * INITIAL;
const WRITERS: usize = 4;
const READERS: usize = 2;
const RUN_FOR: Duration = Duration::from_secs(2);

fn options(sync: SyncMode) -> Options {
    Options::default()
        .sync_mode(sync)
        .write_buffer_size(64 * 1024)
        .l0_compaction_trigger(3)
}

fn account(i: usize) -> Vec<u8> {
    format!("acct/{i:02}").into_bytes()
}

fn enc(v: u64) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

fn dec(v: Option<Vec<u8>>) -> u64 {
    u64::from_be_bytes(v.expect("account exists").try_into().unwrap())
}

/// The marker row of transfer `seq` of writer `writer` in round `round`.
fn marker(round: u32, writer: usize, seq: u64) -> Vec<u8> {
    format!("xfer/{round:02}/{writer:02}/{seq:010}").into_bytes()
}

#[derive(Debug, Clone, Copy)]
struct Transfer {
    from: usize,
    to: usize,
    amount: u64,
}

impl Transfer {
    fn random(rng: &mut StdRng) -> Transfer {
        let from = rng.random_range(0..ACCOUNTS);
        let to = (from + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
        Transfer {
            from,
            to,
            amount: rng.random_range(1..=200),
        }
    }

    fn encode(self) -> Vec<u8> {
        let mut v = vec![self.from as u8, self.to as u8];
        v.extend_from_slice(&self.amount.to_be_bytes());
        v
    }

    fn decode(v: &[u8]) -> Transfer {
        Transfer {
            from: usize::from(v[0]),
            to: usize::from(v[1]),
            amount: u64::from_be_bytes(v[2..10].try_into().unwrap()),
        }
    }
}

fn init(db: &Db) {
    for i in 0..ACCOUNTS {
        db.put(&account(i), &enc(INITIAL)).unwrap();
    }
}

/// One attempt at `t`, writing `marker_key` in the same transaction. Ok(false): not enough
/// money (nothing written).
fn attempt(
    db: &Db,
    cf: &ColumnFamily,
    opts: TransactionOptions,
    for_update: bool,
    t: Transfer,
    marker_key: &[u8],
) -> Result<bool> {
    let txn = db.begin_transaction(opts)?;
    let read = |i: usize| -> Result<u64> {
        let v = if for_update {
            txn.get_for_update(cf, &account(i), true)?
        } else {
            txn.get(cf, &account(i))?
        };
        Ok(dec(v))
    };
    let from = read(t.from)?;
    let to = read(t.to)?;
    if from < t.amount {
        txn.rollback()?;
        return Ok(false);
    }
    txn.put(cf, &account(t.from), &enc(from - t.amount))?;
    txn.put(cf, &account(t.to), &enc(to + t.amount))?;
    txn.put(cf, marker_key, &t.encode())?;
    txn.commit()?;
    Ok(true)
}

fn retryable(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Conflict | ErrorKind::Deadlock | ErrorKind::TimedOut
    )
}

#[derive(Debug, Default)]
struct Counters {
    committed: AtomicU64,
    aborted: AtomicU64,
    scans: AtomicU64,
}

/// What the writer and reader threads of one run share.
#[derive(Clone, Copy)]
struct Shared<'a> {
    db: &'a Db,
    mode: Concurrency,
    stop: &'a AtomicBool,
    counters: &'a Counters,
}

/// A writer: random transfers until `stop`, each retried until it commits or turns out
/// impossible. Calls `acked(seq)` after each commit.
fn writer(run: Shared<'_>, round: u32, id: usize, seed: u64, mut acked: impl FnMut(u64)) {
    let Shared {
        db,
        mode,
        stop,
        counters,
    } = run;
    let cf = db.default_cf();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let t = Transfer::random(&mut rng);
        let level = if rng.random_bool(0.5) {
            IsolationLevel::RepeatableRead
        } else {
            IsolationLevel::Serializable
        };
        let opts = TransactionOptions::default()
            .isolation(level)
            .concurrency(mode)
            .lock_timeout(Duration::from_secs(5));
        // Pessimistic transactions lock what they read; optimistic ones read either way.
        let for_update = mode == Concurrency::Pessimistic || rng.random_bool(0.5);
        loop {
            match attempt(
                db,
                &cf,
                opts.clone(),
                for_update,
                t,
                &marker(round, id, seq),
            ) {
                Ok(true) => {
                    counters.committed.fetch_add(1, Ordering::Relaxed);
                    acked(seq);
                    seq += 1;
                    break;
                }
                Ok(false) => break,
                Err(e) if retryable(e.kind()) => {
                    counters.aborted.fetch_add(1, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                Err(e) => panic!("writer {id}: {t:?}: {e}"),
            }
        }
    }
}

/// The balances as of one consistent view, read three ways in turn.
fn read_balances(db: &Db, cf: &ColumnFamily, how: u64) -> Vec<u64> {
    let accounts = ReadOptions::default()
        .lower_bound("acct/")
        .upper_bound("acct0");
    match how % 3 {
        0 => {
            // A repeatable-read transaction's scan.
            let txn = db
                .begin_transaction(
                    TransactionOptions::default().concurrency(Concurrency::Optimistic),
                )
                .unwrap();
            let mut it = txn.iter(cf, accounts).unwrap();
            it.seek_to_first().unwrap();
            let mut out = Vec::new();
            while it.valid() {
                out.push(dec(Some(it.value().to_vec())));
                it.next().unwrap();
            }
            txn.commit().unwrap();
            out
        }
        1 => {
            // A repeatable-read pessimistic transaction's point reads (no locks).
            let txn = db.begin_transaction(TransactionOptions::default()).unwrap();
            let out = (0..ACCOUNTS)
                .map(|i| dec(txn.get(cf, &account(i)).unwrap()))
                .collect();
            txn.commit().unwrap();
            out
        }
        _ => {
            // A database snapshot.
            let snap = db.snapshot();
            let mut it = db.iter(accounts.snapshot(&snap)).unwrap();
            it.seek_to_last().unwrap();
            let mut out = Vec::new();
            while it.valid() {
                out.push(dec(Some(it.value().to_vec())));
                it.prev().unwrap();
            }
            out
        }
    }
}

fn reader(db: &Db, stop: &AtomicBool, counters: &Counters) {
    let cf = db.default_cf();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let balances = read_balances(db, &cf, n);
        assert_eq!(balances.len(), ACCOUNTS, "read {n}: accounts missing");
        let total: u64 = balances.iter().sum();
        assert_eq!(total, TOTAL, "read {n} (kind {}): {balances:?}", n % 3);
        counters.scans.fetch_add(1, Ordering::Relaxed);
        n += 1;
    }
}

/// Checks the final state: the total, and that replaying every marker from the initial
/// balances gives the balances. Returns the markers found.
fn check_state(db: &Db) -> BTreeSet<Vec<u8>> {
    let cf = db.default_cf();
    let balances = read_balances(db, &cf, 0);
    assert_eq!(balances.len(), ACCOUNTS);
    assert_eq!(balances.iter().sum::<u64>(), TOTAL, "{balances:?}");
    let mut replayed = vec![INITIAL as i64; ACCOUNTS];
    let mut markers = BTreeSet::new();
    let mut it = db
        .iter(
            ReadOptions::default()
                .lower_bound("xfer/")
                .upper_bound("xfer0"),
        )
        .unwrap();
    it.seek_to_first().unwrap();
    while it.valid() {
        let t = Transfer::decode(it.value());
        replayed[t.from] -= t.amount as i64;
        replayed[t.to] += t.amount as i64;
        markers.insert(it.key().to_vec());
        it.next().unwrap();
    }
    let replayed: Vec<u64> = replayed.into_iter().map(|b| b as u64).collect();
    assert_eq!(
        balances,
        replayed,
        "the balances are not the initial ones plus the {} recorded transfers",
        markers.len()
    );
    markers
}

fn bank(mode: Concurrency, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(SyncMode::None)).unwrap();
    init(&db);
    let stop = AtomicBool::new(false);
    let counters = Counters::default();
    let shared = Shared {
        db: &db,
        mode,
        stop: &stop,
        counters: &counters,
    };
    std::thread::scope(|s| {
        for id in 0..WRITERS {
            s.spawn(move || writer(shared, 0, id, seed + id as u64, |_| {}));
        }
        for _ in 0..READERS {
            s.spawn(|| reader(&db, &stop, &counters));
        }
        let started = Instant::now();
        while started.elapsed() < RUN_FOR {
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let committed = counters.committed.load(Ordering::Relaxed);
    let markers = check_state(&db);
    assert_eq!(markers.len() as u64, committed, "{mode:?}");
    assert!(committed > 0, "{mode:?}: no transfer committed");
    assert!(
        counters.scans.load(Ordering::Relaxed) > 0,
        "{mode:?}: no read"
    );
    eprintln!(
        "bank {mode:?}: {committed} transfers, {} aborted attempts, {} consistent reads",
        counters.aborted.load(Ordering::Relaxed),
        counters.scans.load(Ordering::Relaxed)
    );
}

#[test]
fn bank_pessimistic() {
    bank(Concurrency::Pessimistic, 100);
}

#[test]
fn bank_optimistic() {
    bank(Concurrency::Optimistic, 200);
}

/// Child of the crash test: runs optimistic writers until killed, acknowledging each
/// committed transfer on stdout as `ack <writer> <seq>`.
fn child(dir: &str, round: u32) {
    let db = Db::open(dir, options(SyncMode::Full)).expect("child open");
    let stop = AtomicBool::new(false);
    let counters = Counters::default();
    let out = std::sync::Mutex::new(std::io::stdout());
    let shared = Shared {
        db: &db,
        mode: Concurrency::Optimistic,
        stop: &stop,
        counters: &counters,
    };
    std::thread::scope(|s| {
        for id in 0..WRITERS {
            let out = &out;
            s.spawn(move || {
                let seed = u64::from(round) * 1000 + id as u64;
                writer(shared, round, id, seed, |seq| {
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {id} {seq}").unwrap();
                    o.flush().unwrap();
                });
            });
        }
    });
}

#[test]
#[ignore = "run by bank_survives_kill_and_restart as its child process"]
fn bank_crash_child() {
    let Ok(dir) = std::env::var("RIPTIDE_BANK_CHILD") else {
        return;
    };
    let round: u32 = std::env::var("RIPTIDE_BANK_ROUND")
        .unwrap()
        .parse()
        .unwrap();
    child(&dir, round);
}

/// Three rounds of: run the bank in a child process, SIGKILL it after 300-800 ms, reopen.
/// After each: the total is unchanged, the markers replay to the balances, and every
/// acknowledged transfer (sync `Full`) is there.
#[test]
fn bank_survives_kill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    {
        let db = Db::open(&path, options(SyncMode::Full)).unwrap();
        init(&db);
        db.close().unwrap();
    }
    let mut rng = StdRng::seed_from_u64(7);
    let exe = std::env::current_exe().unwrap();
    let mut total_acked = 0usize;
    for round in 0..3u32 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "bank_crash_child",
                "--nocapture",
                "--include-ignored",
                "--test-threads=1",
            ])
            .env("RIPTIDE_BANK_CHILD", &path)
            .env("RIPTIDE_BANK_ROUND", round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let collector = std::thread::spawn(move || {
            let mut acked = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // libtest may print its "test ... " prefix before the first one.
                let Some(at) = line.find("ack ") else {
                    continue;
                };
                let mut parts = line[at..].split_whitespace().skip(1);
                let id: usize = parts.next().unwrap().parse().unwrap();
                let seq: u64 = parts.next().unwrap().parse().unwrap();
                acked.push(marker(round, id, seq));
            }
            acked
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(300..=800)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let acked = collector.join().unwrap();

        let db = Db::open(&path, options(SyncMode::Full)).unwrap();
        let markers = check_state(&db);
        for m in &acked {
            assert!(
                markers.contains(m),
                "round {round}: acknowledged transfer {} is missing",
                String::from_utf8_lossy(m)
            );
        }
        let this_round = format!("xfer/{round:02}/").into_bytes();
        let recorded = markers
            .iter()
            .filter(|m| m.starts_with(&this_round))
            .count();
        assert!(recorded >= acked.len(), "round {round}");
        eprintln!(
            "bank crash round {round}: {} acknowledged, {recorded} recorded",
            acked.len()
        );
        total_acked += acked.len();
        db.close().unwrap();
    }
    assert!(
        total_acked > 0,
        "the child never acknowledged a transfer: the test checked nothing"
    );
}
