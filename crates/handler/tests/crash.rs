//! Auto-increment values and hidden row ids are never handed out twice, also when the process
//! is killed: a child process (this test binary, re-run with `RIPTIDE_HANDLER_CRASH_CHILD`)
//! reserves values and prints each one; the parent kills it with SIGKILL, reopens the
//! database and checks that the next values are above every printed one. A clean close
//! continues without a gap.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::*;

const TABLE: &[u8] = b"./db/crash";

#[test]
fn counters_are_never_reused_after_a_kill() {
    if std::env::var("RIPTIDE_HANDLER_CRASH_CHILD").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    {
        let (db, engine) = open(dir.path());
        engine.create_table(TABLE, &[hidden()], 1).unwrap();
        close(db, engine);
    }
    let exe = std::env::current_exe().unwrap();
    let mut max_auto = 0u64;
    let mut max_row = 0u64;
    for round in 0..4u32 {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("RIPTIDE_HANDLER_CRASH_CHILD", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        // Let it hand out a few thousand values (several reservations), then kill it.
        let want = 1500 + round * 1700;
        let mut seen = 0;
        while seen < want {
            let Some(Ok(line)) = lines.next() else { break };
            let mut parts = line.split_whitespace();
            match (
                parts.next(),
                parts.next().and_then(|v| v.parse::<u64>().ok()),
            ) {
                (Some("a"), Some(v)) => {
                    assert!(v > max_auto, "round {round}: auto-increment {v} reused");
                    max_auto = v;
                    seen += 1;
                }
                (Some("r"), Some(v)) => {
                    assert!(v > max_row, "round {round}: row id {v} reused");
                    max_row = v;
                }
                _ => {}
            }
        }
        assert_eq!(seen, want, "round {round}: the child stopped early");
        child.kill().unwrap();
        // Values printed after we stopped reading were handed out too.
        for line in lines.map_while(Result::ok) {
            let mut parts = line.split_whitespace();
            let (tag, v) = (
                parts.next(),
                parts.next().and_then(|v| v.parse::<u64>().ok()),
            );
            match (tag, v) {
                (Some("a"), Some(v)) => max_auto = max_auto.max(v),
                (Some("r"), Some(v)) => max_row = max_row.max(v),
                _ => {}
            }
        }
        child.wait().unwrap();
        let (db, engine) = open(dir.path());
        let t = engine.open_table(TABLE).unwrap().unwrap();
        assert!(t.autoinc_next() > max_auto, "round {round}");
        drop(t);
        // Dropped without `engine.close()`: as after a crash, the reserved ranges are skipped.
        drop(engine);
        Arc_close(db);
    }
    // A clean close keeps the exact next values.
    let (db, engine) = open(dir.path());
    let t = engine.open_table(TABLE).unwrap().unwrap();
    let a = t.reserve_autoinc(1, 1, 1).unwrap();
    let r = t.next_hidden_row_id().unwrap();
    assert!(a > max_auto && r > max_row);
    drop(t);
    close(db, engine);
    let (db, engine) = open(dir.path());
    let t = engine.open_table(TABLE).unwrap().unwrap();
    assert_eq!(t.reserve_autoinc(1, 1, 1).unwrap(), a + 1);
    assert_eq!(t.next_hidden_row_id().unwrap(), r + 1);
    drop(t);
    close(db, engine);
}

#[allow(non_snake_case)]
fn Arc_close(db: std::sync::Arc<riptide::Db>) {
    std::sync::Arc::try_unwrap(db).unwrap().close().unwrap();
}

/// The child: reserves values forever, printing each one after it was handed out.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var("RIPTIDE_HANDLER_CRASH_CHILD") else {
        return;
    };
    let (_db, engine) = open(std::path::Path::new(&dir));
    let t = engine.open_table(TABLE).unwrap().unwrap();
    let mut out = std::io::stdout().lock();
    loop {
        let a = t.reserve_autoinc(1, 1, 1).unwrap();
        let r = t.next_hidden_row_id().unwrap();
        writeln!(out, "a {a}\nr {r}").unwrap();
        out.flush().unwrap();
    }
}
