//! In-place index changes (`HandlerEngine::begin_index_build`, `commit_index_build`,
//! `abort_index_build`): a built index holds every row's entry and is kept up to date
//! afterwards, a unique build finds a duplicate value (NULL parts excepted) and its abort
//! leaves nothing, a dropped index's entries go, a crash mid-build leaves nothing after the
//! next open, and the definition's version follows the table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::sync::Arc;

use common::*;
use riptide::{Db, Options};
use riptide_handler::{BuildCheck, HandlerEngine, IndexSlot, NewIndex, SessionOptions};

/// A table `t` (primary key + secondary `a`) with rows `pk` -> (a = `a<pk % 3>`, row
/// `r<pk>`) for pk in `0..n` (pk as 4 big-endian bytes).
fn table_with_rows(engine: &HandlerEngine, n: u32) -> Arc<riptide_handler::Table> {
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for pk in 0..n {
        let a = format!("a{}", pk % 3);
        s.insert(
            &t,
            &pk.to_be_bytes(),
            &[k(a.as_bytes())],
            format!("r{pk}").as_bytes(),
        )
        .unwrap();
    }
    s.commit().unwrap();
    t
}

fn new_index(name: &str, unique: bool, null_offsets: Vec<usize>) -> NewIndex {
    NewIndex {
        spec: secondary(name, unique),
        null_offsets,
    }
}

/// The key the new index `b` has for row `pk`: two bytes, a NULL-indicator (1: not NULL)
/// and `pk % modulus`.
fn b_key(pk: u32, modulus: u32) -> [u8; 2] {
    [1, u8::try_from(pk % modulus).unwrap()]
}

#[test]
fn an_added_index_holds_every_row_and_is_maintained_afterwards() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 100);
    let mut build = engine
        .begin_index_build(b"t", &[new_index("b", false, vec![])])
        .unwrap();
    for pk in 0..100u32 {
        build.add(0, &b_key(pk, 7), &pk.to_be_bytes()).unwrap();
    }
    assert_eq!(build.finish().unwrap(), BuildCheck::Unique);
    assert_eq!(build.entries(), 100);
    let t2 = engine
        .commit_index_build(
            build,
            &[
                IndexSlot::Existing(0),
                IndexSlot::Existing(1),
                IndexSlot::New(0),
            ],
            b"version-1",
        )
        .unwrap();
    assert_eq!(t2.index_count(), 3);
    assert_eq!(t2.index(1).unwrap().id, t.index(1).unwrap().id);
    assert_eq!(t2.index(2).unwrap().name, "b");
    // The table the engine hands out now is the new one.
    let opened = engine.open_table(b"t").unwrap().unwrap();
    assert!(Arc::ptr_eq(&opened, &t2));
    let entries = index_entries(&engine, &t2, 2);
    assert_eq!(entries.len(), 100);
    assert!(entries.windows(2).all(|w| w[0] <= w[1]));
    assert!(entries.contains(&(b_key(12, 7).to_vec(), 12u32.to_be_bytes().to_vec())));
    // Writes from now on keep the new index in step.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(
        &t2,
        &500u32.to_be_bytes(),
        &[k(b"a9"), k(&[1, 99])],
        b"r500",
    )
    .unwrap();
    s.delete(&t2, &3u32.to_be_bytes(), &[k(b"a0"), k(&b_key(3, 7))])
        .unwrap();
    s.commit().unwrap();
    drop(s);
    let entries = index_entries(&engine, &t2, 2);
    assert_eq!(entries.len(), 100);
    assert!(entries.contains(&(vec![1, 99], 500u32.to_be_bytes().to_vec())));
    assert!(!entries.contains(&(b_key(3, 7).to_vec(), 3u32.to_be_bytes().to_vec())));
    assert_eq!(
        engine.definition_version(b"t").unwrap().as_deref(),
        Some(&b"version-1"[..])
    );
    drop((t, t2, opened));
    close(db, engine);
}

#[test]
fn a_unique_build_finds_a_duplicate_and_its_abort_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 50);
    let before = engine.open_table(b"t").unwrap().unwrap();
    let mut build = engine
        .begin_index_build(b"t", &[new_index("u", true, vec![0])])
        .unwrap();
    let new_id = build.new_indexes()[0].id;
    for pk in 0..50u32 {
        // Values 0..49, except that rows 20 and 40 both have 20.
        let v = if pk == 40 { 20 } else { pk };
        build
            .add(0, &[1, u8::try_from(v).unwrap()], &pk.to_be_bytes())
            .unwrap();
    }
    match build.finish().unwrap() {
        BuildCheck::Duplicate { index, pk } => {
            assert_eq!(index, 0);
            assert!(
                pk == 20u32.to_be_bytes() || pk == 40u32.to_be_bytes(),
                "{pk:?}"
            );
        }
        other => panic!("no duplicate found: {other:?}"),
    }
    engine.abort_index_build(build).unwrap();
    assert!(raw_keys(&db, &db.default_cf(), &new_id.to_be_bytes()).is_empty());
    assert!(raw_keys(&db, &db.cf(riptide_handler::DD_CF_NAME).unwrap(), b"B").is_empty());
    // The table is as it was.
    let after = engine.open_table(b"t").unwrap().unwrap();
    assert!(Arc::ptr_eq(&before, &after));
    assert_eq!(after.index_count(), 2);
    assert_eq!(engine.definition_version(b"t").unwrap(), None);
    drop((t, before, after));
    close(db, engine);
}

#[test]
fn keys_with_a_null_part_never_conflict_in_a_unique_build() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 30);
    let mut build = engine
        .begin_index_build(b"t", &[new_index("u", true, vec![0])])
        .unwrap();
    for pk in 0..30u32 {
        // Rows 0..9 have NULL (indicator 0, the same bytes after it); the rest are distinct.
        let key = if pk < 10 {
            [0, 0]
        } else {
            [1, u8::try_from(pk).unwrap()]
        };
        build.add(0, &key, &pk.to_be_bytes()).unwrap();
    }
    assert_eq!(build.finish().unwrap(), BuildCheck::Unique);
    let t2 = engine
        .commit_index_build(
            build,
            &[
                IndexSlot::Existing(0),
                IndexSlot::New(0),
                IndexSlot::Existing(1),
            ],
            b"",
        )
        .unwrap();
    // The new index went where it was put: before `a`.
    assert_eq!(t2.index(1).unwrap().name, "u");
    assert_eq!(t2.index(2).unwrap().name, "a");
    assert_eq!(index_entries(&engine, &t2, 1).len(), 30);
    assert_eq!(index_entries(&engine, &t2, 2).len(), 30);
    assert_eq!(engine.definition_version(b"t").unwrap(), None);
    drop((t, t2));
    close(db, engine);
}

#[test]
fn a_dropped_index_loses_its_entries_and_the_others_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 40);
    let dropped_id = t.index(1).unwrap().id;
    assert_eq!(raw_index_keys(&db, &t, 1).len(), 40);
    let build = engine.begin_index_build(b"t", &[]).unwrap();
    let t2 = engine
        .commit_index_build(build, &[IndexSlot::Existing(0)], b"v2")
        .unwrap();
    assert_eq!(t2.index_count(), 1);
    assert!(raw_keys(&db, &db.default_cf(), &dropped_id.to_be_bytes()).is_empty());
    assert_eq!(index_entries(&engine, &t2, 0).len(), 40);
    drop((t, t2));
    close(db, engine);
}

#[test]
fn a_bad_order_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 5);
    for order in [
        // The primary key must stay first.
        vec![
            IndexSlot::Existing(1),
            IndexSlot::Existing(0),
            IndexSlot::New(0),
        ],
        // Every new index must be placed.
        vec![IndexSlot::Existing(0), IndexSlot::Existing(1)],
        // No slot twice, none that does not exist.
        vec![IndexSlot::Existing(0), IndexSlot::New(0), IndexSlot::New(0)],
        vec![
            IndexSlot::Existing(0),
            IndexSlot::New(0),
            IndexSlot::Existing(7),
        ],
    ] {
        let mut build = engine
            .begin_index_build(b"t", &[new_index("b", false, vec![])])
            .unwrap();
        build.add(0, &[1, 1], &0u32.to_be_bytes()).unwrap();
        build.finish().unwrap();
        let e = engine.commit_index_build(build, &order, b"").unwrap_err();
        assert!(
            e.to_string().contains("in-place index change of table t"),
            "{e}"
        );
    }
    assert_eq!(engine.open_table(b"t").unwrap().unwrap().index_count(), 2);
    drop(t);
    close(db, engine);
}

#[test]
fn a_table_changed_during_the_build_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 5);
    let build = engine
        .begin_index_build(b"t", &[new_index("b", false, vec![])])
        .unwrap();
    engine.truncate_table(b"t").unwrap();
    let e = engine
        .commit_index_build(
            build,
            &[
                IndexSlot::Existing(0),
                IndexSlot::Existing(1),
                IndexSlot::New(0),
            ],
            b"",
        )
        .unwrap_err();
    assert_eq!(e.kind(), Some(riptide::ErrorKind::Busy), "{e}");
    drop(t);
    close(db, engine);
}

#[test]
fn a_build_a_crash_interrupted_is_gone_after_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let new_id;
    {
        let (db, engine) = open(dir.path());
        let t = table_with_rows(&engine, 20);
        let mut build = engine
            .begin_index_build(b"t", &[new_index("b", false, vec![])])
            .unwrap();
        new_id = build.new_indexes()[0].id;
        for pk in 0..20u32 {
            build.add(0, &b_key(pk, 5), &pk.to_be_bytes()).unwrap();
        }
        build.finish().unwrap();
        assert_eq!(
            raw_keys(&db, &db.default_cf(), &new_id.to_be_bytes()).len(),
            20
        );
        // The process ends here: neither commit nor abort.
        drop((build, t));
        close(db, engine);
    }
    let db = Arc::new(Db::open(dir.path(), Options::default()).unwrap());
    let engine = HandlerEngine::open(Arc::clone(&db)).unwrap();
    assert!(raw_keys(&db, &db.default_cf(), &new_id.to_be_bytes()).is_empty());
    assert!(raw_keys(&db, &db.cf(riptide_handler::DD_CF_NAME).unwrap(), b"B").is_empty());
    let t = engine.open_table(b"t").unwrap().unwrap();
    assert_eq!(t.index_count(), 2);
    assert_eq!(index_entries(&engine, &t, 1).len(), 20);
    drop(t);
    close(db, engine);
}

#[test]
fn the_definition_version_follows_renames_and_goes_with_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 3);
    let build = engine.begin_index_build(b"t", &[]).unwrap();
    engine
        .commit_index_build(
            build,
            &[IndexSlot::Existing(0), IndexSlot::Existing(1)],
            b"v7",
        )
        .unwrap();
    engine.rename_table(b"t", b"t_renamed").unwrap();
    assert_eq!(engine.definition_version(b"t").unwrap(), None);
    assert_eq!(
        engine.definition_version(b"t_renamed").unwrap().as_deref(),
        Some(&b"v7"[..])
    );
    // A table created again under the old name has no version.
    engine.create_table(b"t", &[primary()], 1).unwrap();
    assert_eq!(engine.definition_version(b"t").unwrap(), None);
    assert!(engine.drop_table(b"t_renamed").unwrap());
    assert_eq!(engine.definition_version(b"t_renamed").unwrap(), None);
    drop(t);
    close(db, engine);
}

#[test]
fn caller_data_is_recorded_by_a_build_and_kept_by_reopen_rename_truncate_and_later_builds() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let mut t = table_with_rows(&engine, 3);
    assert!(t.caller_data().is_empty());
    // A build that adds and drops nothing records the caller's bytes alone.
    let mut build = engine.begin_index_build(b"t", &[]).unwrap();
    build.set_caller_data(b"layout-1");
    t = engine
        .commit_index_build(
            build,
            &[IndexSlot::Existing(0), IndexSlot::Existing(1)],
            b"v1",
        )
        .unwrap();
    assert_eq!(t.caller_data(), b"layout-1");
    // A later build that does not set them keeps them.
    let mut build = engine
        .begin_index_build(b"t", &[new_index("b", false, vec![])])
        .unwrap();
    for pk in 0..3u32 {
        build.add(0, &b_key(pk, 7), &pk.to_be_bytes()).unwrap();
    }
    assert_eq!(build.finish().unwrap(), BuildCheck::Unique);
    t = engine
        .commit_index_build(
            build,
            &[
                IndexSlot::Existing(0),
                IndexSlot::Existing(1),
                IndexSlot::New(0),
            ],
            b"v2",
        )
        .unwrap();
    assert_eq!(t.caller_data(), b"layout-1");
    engine.rename_table(b"t", b"u").unwrap();
    t = engine.truncate_table(b"u").unwrap();
    assert_eq!(t.caller_data(), b"layout-1");
    drop(t);
    close(db, engine);
    let (db, engine) = open(dir.path());
    let mut t = engine.open_table(b"u").unwrap().unwrap();
    assert_eq!(t.caller_data(), b"layout-1");
    assert_eq!(t.index_count(), 3);
    // A table created again under a name starts without.
    assert!(engine.drop_table(b"u").unwrap());
    t = engine.create_table(b"u", &[primary()], 1).unwrap();
    assert!(t.caller_data().is_empty());
    drop(t);
    close(db, engine);
}

#[test]
fn a_build_larger_than_its_sort_memory_is_sorted_on_disk_and_ingested_deep() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), Options::default().sort_buffer_size(1 << 20)).unwrap());
    let engine = HandlerEngine::open(Arc::clone(&db)).unwrap();
    let n = 60_000u32;
    let t = table_with_rows(&engine, n);
    let written_before = db.statistics().keys_written;
    // A unique index whose values repeat once, far apart in primary-key order (so in
    // different sorted runs): found, and nothing is left behind.
    let mut build = engine
        .begin_index_build(b"t", &[new_index("u", true, vec![])])
        .unwrap();
    let dup_id = build.new_indexes()[0].id;
    for pk in 0..n {
        let value = if pk == n - 1 { 17 } else { pk };
        build
            .add(0, &value.to_be_bytes(), &pk.to_be_bytes())
            .unwrap();
    }
    match build.finish().unwrap() {
        BuildCheck::Duplicate { index: 0, pk } => {
            assert!(
                pk == 17u32.to_be_bytes() || pk == (n - 1).to_be_bytes(),
                "{pk:?}"
            );
        }
        other => panic!("the duplicate was missed: {other:?}"),
    }
    assert!(
        build.ingested().is_none(),
        "nothing ingested for a failed build"
    );
    engine.abort_index_build(build).unwrap();
    assert!(raw_keys(&db, &db.default_cf(), &dup_id.to_be_bytes()).is_empty());
    // A non-unique index of the same size: sorted on disk, ingested below L0, nothing
    // through the WAL or the memtable but the dictionary's records.
    let mut build = engine
        .begin_index_build(b"t", &[new_index("b", false, vec![])])
        .unwrap();
    for pk in 0..n {
        build
            .add(0, &(n - pk).to_be_bytes(), &pk.to_be_bytes())
            .unwrap();
    }
    assert_eq!(build.finish().unwrap(), BuildCheck::Unique);
    let ingested = build.ingested().cloned().unwrap();
    assert!(ingested.level > 0, "{ingested:?}");
    assert_eq!(ingested.entries, u64::from(n));
    let t2 = engine
        .commit_index_build(
            build,
            &[
                IndexSlot::Existing(0),
                IndexSlot::Existing(1),
                IndexSlot::New(0),
            ],
            b"v2",
        )
        .unwrap();
    let entries = index_entries(&engine, &t2, 2);
    assert_eq!(entries.len(), n as usize);
    assert!(entries.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        entries[0],
        (1u32.to_be_bytes().to_vec(), (n - 1).to_be_bytes().to_vec())
    );
    let through_memtable = db.statistics().keys_written - written_before;
    assert!(
        through_memtable < 20,
        "{through_memtable} keys went through the memtable"
    );
    drop((t, t2));
    close(db, engine);
}
