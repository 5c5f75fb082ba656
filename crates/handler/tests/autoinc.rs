//! Auto-increment reservation with `auto_increment_offset` / `auto_increment_increment`:
//! the values InnoDB hands out, also when the offset is larger than the increment.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;

#[test]
fn offset_and_increment_give_innodb_values() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine.create_table(b"./db/ai", &[primary()], 0).unwrap();
    // increment 1: the offset plays no part.
    assert_eq!(t.reserve_autoinc(3, 200, 1).unwrap(), 1);
    assert_eq!(t.autoinc_next(), 4);
    // increment 300, offset 200 (storage_engine.autoinc_vars): 200, 500, 800.
    assert_eq!(t.reserve_autoinc(3, 200, 300).unwrap(), 200);
    assert_eq!(t.autoinc_next(), 1100);
    // increment 50 with offset 200 > increment: InnoDB continues at 1100 (not 1150).
    assert_eq!(t.reserve_autoinc(3, 200, 50).unwrap(), 1100);
    assert_eq!(t.autoinc_next(), 1250);
    // offset <= increment: the next value congruent to the offset.
    assert_eq!(t.reserve_autoinc(1, 7, 10).unwrap(), 1257);
    drop(t);
    close(db, engine);
}

#[test]
fn an_offset_beyond_the_increment_on_a_new_table_never_goes_backwards() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine.create_table(b"./db/ai2", &[primary()], 0).unwrap();
    // increment 500, offset 300 (the TINYINT case of autoinc_vars): 300, as InnoDB.
    assert_eq!(t.reserve_autoinc(1, 300, 500).unwrap(), 300);
    t.observe_autoinc(1000).unwrap();
    let v = t.reserve_autoinc(1, 400, 50).unwrap();
    assert!(v >= 1001, "{v}");
    assert_eq!(v, 1050);
    drop(t);
    close(db, engine);
}

#[test]
fn the_counter_stops_at_the_columns_range() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine.create_table(b"./db/ai3", &[primary()], 0).unwrap();
    // A TINYINT column (max 127) full up to 127: the next reservation is out of range.
    t.observe_autoinc(127).unwrap();
    assert_eq!(t.reserve_autoinc(1, 1, 1).unwrap(), 128);
    t.cap_autoinc(127);
    assert_eq!(t.autoinc_next(), 128, "InnoDB keeps AUTO_INCREMENT=128");
    assert_eq!(t.reserve_autoinc(1, 1, 1).unwrap(), 128);
    t.cap_autoinc(127);
    assert_eq!(t.autoinc_next(), 128);
    // Within range, the cap changes nothing.
    t.cap_autoinc(u64::MAX);
    assert_eq!(t.autoinc_next(), 128);
    drop(t);
    close(db, engine);
}
