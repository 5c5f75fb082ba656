#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `Db::background_jobs`: the flushes and compactions of a database, what
//! `information_schema.RIPTIDE_COMPACTIONS` shows: each finished one with its kind, column
//! family, reason, levels, files and bytes in and out, and timing.

use riptide::{Db, JobKind, JobState, Options, SyncMode};

#[test]
fn flushes_and_compactions_are_listed_with_their_levels_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options::default()
            .sync_mode(SyncMode::None)
            .write_buffer_size(64 << 10),
    )
    .unwrap();
    assert!(db.background_jobs().is_empty());
    for i in 0..20_000u32 {
        db.put(&i.to_be_bytes(), &[7u8; 64]).unwrap();
    }
    db.flush().unwrap();
    let cf = db.default_cf();
    db.compact_range(&cf, None).unwrap();

    let jobs = db.background_jobs();
    let flushes: Vec<_> = jobs.iter().filter(|j| j.kind == JobKind::Flush).collect();
    assert!(!flushes.is_empty(), "{jobs:?}");
    for f in &flushes {
        assert_eq!(f.state, JobState::Done);
        assert_eq!(f.cf, "default");
        assert_eq!(f.reason, "frozen memtable");
        assert!(f.input_bytes > 0 && f.output_bytes.unwrap() > 0, "{f:?}");
        assert!(f.duration.unwrap() <= f.age, "{f:?}");
    }
    let manual: Vec<_> = jobs
        .iter()
        .filter(|j| j.kind == JobKind::Compaction && j.reason == "manual")
        .collect();
    assert!(!manual.is_empty(), "{jobs:?}");
    let m = manual[0];
    assert_eq!(m.state, JobState::Done);
    assert!(m.input_files > 0 && m.input_bytes > 0, "{m:?}");
    assert!(!m.input_levels.is_empty());
    assert!(
        m.output_level >= *m.input_levels.iter().max().unwrap(),
        "{m:?}"
    );
    // Nothing runs once compact_range has returned and the flushes are done; every job is
    // listed once (in the order they finished: parallel jobs finish out of id order).
    assert!(jobs.iter().all(|j| j.state != JobState::Running));
    let mut ids: Vec<u64> = jobs.iter().map(|j| j.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), jobs.len());
}
