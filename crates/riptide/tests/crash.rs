//! Crash test: a child process writes and reports every acknowledged write on stdout; the
//! parent kills it with SIGKILL at a random moment, reopens the database and checks that
//!
//! - every acknowledged write is there (sync `Full`: the WAL was fsynced before the ack;
//!   sync `None`: the record was handed to the OS before the ack, which survives a process
//!   crash though not a power loss), and
//! - the state is exactly a prefix of each writer's sequence of operations (nothing torn,
//!   nothing reordered, no batch half-applied).
//!
//! The child is this same test binary, re-run with `RIPTIDE_CRASH_CHILD` set. Small memtables
//! make flushes and L0 merges run during the kills. Rounds continue on the same database.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use riptide::{Db, Options, ReadOptions, SyncMode, WriteBatch};

const WRITERS: u64 = 2;

fn options(sync: &str) -> Options {
    let sync = match sync {
        "full" => SyncMode::Full,
        _ => SyncMode::None,
    };
    Options::default()
        .sync_mode(sync)
        .write_buffer_size(32 * 1024)
        .l0_compaction_trigger(3)
        .target_file_size(64 * 1024)
}

fn key(writer: u64, i: u64) -> Vec<u8> {
    format!("w{writer}-{i:010}").into_bytes()
}

fn value(writer: u64, i: u64) -> Vec<u8> {
    let len = 20 + (i * 37 % 200) as usize;
    let mut v = format!("value-{writer}-{i}-").into_bytes();
    v.resize(len, b'a' + (i % 26) as u8);
    v
}

/// Operation `i` of a writer: put key i; every 7th op (i % 7 == 3) also deletes key i-3, in
/// the same atomic batch.
fn op(writer: u64, i: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    b.put(&key(writer, i), &value(writer, i));
    if i % 7 == 3 {
        b.delete(&key(writer, i - 3));
    }
    b
}

/// The expected contents of one writer's keys after ops `0..n` (n ops applied).
fn expected_after(writer: u64, n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..n {
        m.insert(key(writer, i), value(writer, i));
        if i % 7 == 3 {
            m.remove(&key(writer, i - 3));
        }
    }
    m
}

/// Child: write forever from the given starting op of each writer, printing acks.
fn child(dir: &str, sync: &str, starts: &[u64]) {
    let db = Arc::new(Db::open(dir, options(sync)).expect("child open"));
    let out = Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            let out = Arc::clone(&out);
            let start = starts[w as usize];
            std::thread::spawn(move || {
                use std::io::Write;
                for i in start.. {
                    db.write(op(w, i)).expect("child write");
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {w} {i}").unwrap();
                    o.flush().unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Finds how many ops of `writer` the database holds and checks it is an exact prefix.
fn applied_prefix(db: &Db, writer: u64) -> u64 {
    let prefix = format!("w{writer}-").into_bytes();
    let mut upper = prefix.clone();
    *upper.last_mut().unwrap() += 1;
    let mut it = db
        .iter(
            ReadOptions::default()
                .lower_bound(prefix)
                .upper_bound(upper),
        )
        .unwrap();
    it.seek_to_first().unwrap();
    let mut actual = BTreeMap::new();
    while it.valid() {
        actual.insert(it.key().to_vec(), it.value().to_vec());
        it.next().unwrap();
    }
    // Key n-1 is live after n ops (it is only ever deleted by op n+2), so the largest key
    // present names the prefix length.
    let n = actual
        .keys()
        .next_back()
        .map(|k| {
            let s = std::str::from_utf8(&k[prefix_len(writer)..]).unwrap();
            s.parse::<u64>().unwrap() + 1
        })
        .unwrap_or(0);
    assert_eq!(
        actual,
        expected_after(writer, n),
        "writer {writer}: database is not the prefix of {n} operations"
    );
    n
}

fn prefix_len(writer: u64) -> usize {
    format!("w{writer}-").len()
}

fn crash_rounds(sync: &str, rounds: u32, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut starts = vec![0u64; WRITERS as usize];
    let exe = std::env::current_exe().unwrap();
    let mut total_acked = 0u64;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_child",
                "--nocapture",
                "--include-ignored",
                "--test-threads=1",
            ])
            .env("RIPTIDE_CRASH_CHILD", &path)
            .env("RIPTIDE_CRASH_SYNC", sync)
            .env(
                "RIPTIDE_CRASH_STARTS",
                starts
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut acked: BTreeMap<u64, u64> = BTreeMap::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split_whitespace();
                if parts.next() != Some("ack") {
                    continue;
                }
                let w: u64 = parts.next().unwrap().parse().unwrap();
                let i: u64 = parts.next().unwrap().parse().unwrap();
                let e = acked.entry(w).or_insert(0);
                *e = (*e).max(i + 1);
            }
            acked
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(100..700)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let acked = reader.join().unwrap();

        let db = Db::open(&path, options(sync)).unwrap();
        for w in 0..WRITERS {
            let n = applied_prefix(&db, w);
            let acked_n = acked.get(&w).copied().unwrap_or(0);
            assert!(
                n >= acked_n,
                "round {round} ({sync}): writer {w} has {n} ops but {acked_n} were acknowledged"
            );
            assert!(
                n >= starts[w as usize],
                "round {round}: writer {w} went backwards"
            );
            total_acked += acked_n.saturating_sub(starts[w as usize]);
            starts[w as usize] = n;
        }
        db.close().unwrap();
    }
    assert!(
        total_acked > 0,
        "the child never acknowledged a write: the test checked nothing"
    );
    eprintln!("crash test ({sync}): {rounds} kills, {total_acked} acknowledged ops verified");
}

#[test]
#[ignore = "run by the crash tests as their child process"]
fn crash_child() {
    let Ok(dir) = std::env::var("RIPTIDE_CRASH_CHILD") else {
        return;
    };
    let sync = std::env::var("RIPTIDE_CRASH_SYNC").unwrap();
    let starts: Vec<u64> = std::env::var("RIPTIDE_CRASH_STARTS")
        .unwrap()
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    child(&dir, &sync, &starts);
}

#[test]
fn kill_during_writes_with_sync_full_loses_no_acknowledged_write() {
    crash_rounds("full", 12, 1);
}

#[test]
fn kill_during_writes_with_sync_none_leaves_a_consistent_prefix() {
    crash_rounds("none", 12, 2);
}
