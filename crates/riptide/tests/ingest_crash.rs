//! Crash test of ingests: a child process runs ingests one after the other (each a range
//! of its own, fed through the external sort) while a writer thread writes with `SyncMode::Full`;
//! it reports every finished ingest and acknowledged write on stdout. The parent kills it
//! with SIGKILL at a random moment, reopens the database and checks that
//!
//! - every ingest is all or nothing: its range holds all of its keys with their values, or
//!   none of them (no half-installed ingest, whatever the moment of the kill: writing the
//!   files, the manifest edit, or after);
//! - every ingest reported finished is there, and so is every acknowledged write.
//!
//! (An ingest killed before its install leaves table files no manifest names; the open
//! deletes them. Counting files here would race with the compactions the open starts, so
//! that is checked where nothing else runs: `ingest.rs`,
//! `files_of_an_ingest_that_never_installed_are_gone_after_a_restart`.)
//!
//! The child is this same test binary, re-run with `RIPTIDE_INGEST_CRASH_CHILD` set.
//! Rounds continue on the same database.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use riptide::{Db, Options, ReadOptions, SyncMode};

/// Keys per ingest.
const KEYS: u64 = 3_000;

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::Full)
        .write_buffer_size(64 * 1024)
        .l0_compaction_trigger(3)
        .target_file_size(32 * 1024)
        .sort_buffer_size(1 << 20)
}

fn ingest_key(n: u64, j: u64) -> Vec<u8> {
    format!("i{n:06}-{j:06}").into_bytes()
}

fn ingest_value(n: u64, j: u64) -> Vec<u8> {
    format!("ingest-{n}-{j}-{}", "v".repeat((j % 50) as usize)).into_bytes()
}

fn write_key(i: u64) -> Vec<u8> {
    format!("w{i:010}").into_bytes()
}

fn child(dir: &str, next_ingest: u64, next_write: u64) {
    let db = Arc::new(Db::open(dir, options()).expect("child open"));
    let out = Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let writer = {
        let (db, out) = (Arc::clone(&db), Arc::clone(&out));
        std::thread::spawn(move || {
            for i in next_write.. {
                db.put(&write_key(i), b"w").expect("child write");
                let mut o = out.lock().unwrap();
                writeln!(o, "write {i}").unwrap();
                o.flush().unwrap();
            }
        })
    };
    for n in next_ingest.. {
        let mut sorter = db.external_sorter();
        for j in 0..KEYS {
            // Out of order, so the sort has work to do.
            let j = (j * 1_009) % KEYS;
            sorter.add(&ingest_key(n, j), &ingest_value(n, j)).unwrap();
        }
        let mut sorted = sorter.finish().unwrap();
        let mut w = db.ingest_writer(&db.default_cf()).unwrap();
        while let Some((k, v)) = sorted.next().unwrap() {
            w.add(k, v).unwrap();
        }
        w.finish().expect("child ingest");
        let mut o = out.lock().unwrap();
        writeln!(o, "ingest {n}").unwrap();
        o.flush().unwrap();
    }
    writer.join().unwrap();
}

/// The keys of ingest `n` the database holds: all of them (true), none (false), or a
/// failed assertion.
fn ingest_present(db: &Db, n: u64) -> bool {
    let lo = format!("i{n:06}-").into_bytes();
    let hi = format!("i{n:06}.").into_bytes();
    let mut it = db
        .iter(ReadOptions::default().lower_bound(lo).upper_bound(hi))
        .unwrap();
    it.seek_to_first().unwrap();
    let mut j = 0;
    while it.valid() {
        assert_eq!(it.key(), ingest_key(n, j).as_slice(), "ingest {n}: key {j}");
        assert_eq!(
            it.value(),
            ingest_value(n, j).as_slice(),
            "ingest {n}: value {j}"
        );
        j += 1;
        it.next().unwrap();
    }
    assert!(
        j == 0 || j == KEYS,
        "ingest {n} is half there: {j} of {KEYS} keys"
    );
    j == KEYS
}

#[test]
fn kill_during_ingests_leaves_each_whole_or_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let mut rng = StdRng::seed_from_u64(19);
    let exe = std::env::current_exe().unwrap();
    let (mut next_ingest, mut next_write) = (0u64, 0u64);
    let (mut ingests_verified, mut unreported) = (0u64, 0u64);
    for round in 0..10 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "ingest_crash_child",
                "--nocapture",
                "--include-ignored",
                "--test-threads=1",
            ])
            .env("RIPTIDE_INGEST_CRASH_CHILD", &path)
            .env(
                "RIPTIDE_INGEST_CRASH_STARTS",
                format!("{next_ingest},{next_write}"),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let (mut ingested, mut written) = (None::<u64>, None::<u64>);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split_whitespace();
                match (
                    parts.next(),
                    parts.next().and_then(|n| n.parse::<u64>().ok()),
                ) {
                    (Some("ingest"), Some(n)) => ingested = Some(n),
                    (Some("write"), Some(i)) => written = Some(i),
                    _ => {}
                }
            }
            (ingested, written)
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(200..900)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (ingested, written) = reader.join().unwrap();

        let db = Db::open(&path, options()).unwrap();
        // Ingests before the first unreported one must all be there.
        let mut n = next_ingest;
        while ingest_present(&db, n) {
            n += 1;
        }
        if let Some(last) = ingested {
            assert!(
                n > last,
                "round {round}: ingest {last} was reported but is absent"
            );
        }
        // The one the kill interrupted (absent) is followed by nothing.
        for later in n + 1..n + 3 {
            assert!(
                !ingest_present(&db, later),
                "round {round}: ingest {later} after a gap"
            );
        }
        if ingested.map_or(n > next_ingest, |last| n > last + 1) {
            // The kill came after an install but before its report.
            unreported += 1;
        }
        ingests_verified += n - next_ingest;
        // The next child redoes the interrupted one, in its range freed by the open.
        next_ingest = n;
        if let Some(i) = written {
            assert_eq!(
                db.get(&write_key(i)).unwrap(),
                Some(b"w".to_vec()),
                "round {round}: acknowledged write {i} is lost"
            );
            next_write = i + 1;
        }
        db.close().unwrap();
    }
    assert!(
        ingests_verified > 0,
        "no ingest finished: the test checked nothing"
    );
    eprintln!(
        "ingest crash test: 10 kills, {ingests_verified} ingests verified whole \
         ({unreported} installed but unreported at the kill)"
    );
}

#[test]
#[ignore = "run by the ingest crash test as its child process"]
fn ingest_crash_child() {
    let Ok(dir) = std::env::var("RIPTIDE_INGEST_CRASH_CHILD") else {
        return;
    };
    let starts: Vec<u64> = std::env::var("RIPTIDE_INGEST_CRASH_STARTS")
        .unwrap()
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    child(&dir, starts[0], starts[1]);
}
