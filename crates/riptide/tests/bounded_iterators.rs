//! An iterator with bounds reads only the tables that overlap them; what it returns, forward
//! and backward, equals the unbounded iterator's keys within the bounds, also when a range
//! tombstone in a table that starts below the bounds hides keys inside them.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use riptide::{Db, Options, ReadOptions};

fn keys(db: &Db, opts: ReadOptions<'_>, backward: bool) -> Vec<Vec<u8>> {
    let mut it = db.iter(opts).unwrap();
    let mut out = Vec::new();
    if backward {
        it.seek_to_last().unwrap();
        while it.valid() {
            out.push(it.key().to_vec());
            it.prev().unwrap();
        }
        out.reverse();
    } else {
        it.seek_to_first().unwrap();
        while it.valid() {
            out.push(it.key().to_vec());
            it.next().unwrap();
        }
    }
    out
}

#[test]
fn bounded_iterators_skip_tables_outside_and_keep_their_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    // Tables of disjoint ranges: a.., b.., c.., d.. (one flush each).
    for p in [b'a', b'b', b'c', b'd'] {
        for i in 0..50u8 {
            db.put(&[p, i], b"v").unwrap();
        }
        db.flush().unwrap();
    }
    // A newer table holding only a range tombstone that starts in a.. and ends in c..: it
    // hides keys inside bounds set on b.. although its smallest key is below them.
    db.delete_range(&[b'a', 40], &[b'c', 10]).unwrap();
    db.flush().unwrap();
    // And a memtable write inside the bounds.
    db.put(&[b'b', 200], b"new").unwrap();

    let all = keys(&db, ReadOptions::default(), false);
    for (lo, hi) in [
        (vec![b'b'], vec![b'c']),
        (vec![b'b', 10], vec![b'c', 20]),
        (vec![b'c', 5], vec![b'c', 30]),
        (vec![b'a', 45], vec![b'a', 46]),
        (vec![b'e'], vec![b'f']),
    ] {
        let want: Vec<Vec<u8>> = all
            .iter()
            .filter(|k| **k >= lo && **k < hi)
            .cloned()
            .collect();
        for backward in [false, true] {
            let got = keys(
                &db,
                ReadOptions::default()
                    .lower_bound(lo.clone())
                    .upper_bound(hi.clone()),
                backward,
            );
            assert_eq!(got, want, "{lo:?}..{hi:?} backward {backward}");
        }
    }
    // Sanity: the tombstone is in force and the bounds cut something.
    assert!(!all.contains(&vec![b'b', 0]));
    assert!(all.contains(&vec![b'b', 200]));
    assert!(all.contains(&vec![b'c', 10]));
}
