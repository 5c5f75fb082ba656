//! Four threads insert while two threads scan and get continuously. Readers must always see a
//! strictly sorted list, untorn entries, and every entry whose insert finished before they
//! started looking.

// Helper functions outside `#[test]` bodies are not covered by clippy.toml's test allowances.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide_common::key::{compare_internal_keys, parse_internal_key};
use riptide_common::{InternalIterator, SeqNo, ValueKind};
use riptide_memtable::Memtable;

const WRITERS: u64 = 4;
const READERS: u64 = 2;

/// Entries per writer: fewer in unoptimised builds.
fn per_writer() -> u64 {
    if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    }
}

/// Seqno of the `i`-th insert of writer `w` (unique, never 0).
fn seqno(w: u64, i: u64) -> SeqNo {
    i * WRITERS + w + 1
}

/// Writer and index of a seqno.
fn origin(seqno: SeqNo) -> (u64, u64) {
    ((seqno - 1) % WRITERS, (seqno - 1) / WRITERS)
}

/// User key of an insert: scattered so that writers interleave all over the key space. Half the
/// inserts are second versions of an earlier key of the same writer.
fn user_key(w: u64, i: u64) -> [u8; 8] {
    let base = if i % 2 == 1 { i - 1 } else { i };
    (base * WRITERS + w)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .to_be_bytes()
}

/// Value of an insert: derived from its seqno, of varying length, to detect torn reads.
fn value(seqno: SeqNo) -> Vec<u8> {
    let len = (seqno % 50) as usize;
    let mut v = seqno.to_le_bytes().to_vec();
    v.resize(8 + len, (seqno % 251) as u8);
    v
}

fn check_entry(key: &[u8], val: &[u8]) -> (u64, u64) {
    let parsed = parse_internal_key(key).unwrap();
    assert_eq!(parsed.kind, ValueKind::Put);
    let (w, i) = origin(parsed.seqno);
    assert_eq!(parsed.user_key, user_key(w, i));
    assert_eq!(val, value(parsed.seqno).as_slice());
    (w, i)
}

fn progress_snapshot(progress: &[AtomicU64]) -> Vec<u64> {
    progress.iter().map(|p| p.load(Ordering::Acquire)).collect()
}

#[test]
fn readers_see_sorted_complete_list_during_concurrent_inserts() {
    readers_see_every_finished_insert(Memtable::new(9));
}

/// The same with a key filter of about 8 bits per entry: a point lookup of a finished insert
/// is never ruled out by the filter, however the inserts and the lookups interleave.
#[test]
fn readers_see_every_finished_insert_through_the_key_filter() {
    let m = Memtable::with_key_filter(9, (per_writer() * WRITERS) as usize);
    readers_see_every_finished_insert(m);
}

fn readers_see_every_finished_insert(m: Memtable) {
    let n = per_writer();
    let m = Arc::new(m);
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (m, progress) = (Arc::clone(&m), Arc::clone(&progress));
            thread::spawn(move || {
                for i in 0..n {
                    let s = seqno(w, i);
                    assert!(m.insert(&user_key(w, i), s, ValueKind::Put, &value(s)));
                    progress[w as usize].store(i + 1, Ordering::Release);
                }
            })
        })
        .collect();

    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (m, progress, done) = (Arc::clone(&m), Arc::clone(&progress), Arc::clone(&done));
            thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(r);
                let mut scans = 0u64;
                let mut gets = 0u64;
                let mut last_round = false;
                loop {
                    if done.load(Ordering::Acquire) {
                        last_round = true;
                    }
                    // Forward scan: sorted, untorn, complete up to the progress seen before.
                    let before = progress_snapshot(&progress);
                    let mut seen: Vec<Vec<bool>> =
                        (0..WRITERS).map(|_| vec![false; n as usize]).collect();
                    let mut it = m.iter();
                    it.seek_to_first().unwrap();
                    let mut prev_key: Option<Vec<u8>> = None;
                    while it.valid() {
                        let (w, i) = check_entry(it.key(), it.value());
                        seen[w as usize][i as usize] = true;
                        if let Some(p) = &prev_key {
                            assert_eq!(
                                compare_internal_keys(p, it.key()),
                                std::cmp::Ordering::Less
                            );
                        }
                        prev_key = Some(it.key().to_vec());
                        it.next().unwrap();
                    }
                    for w in 0..WRITERS as usize {
                        let missing = seen[w][..before[w] as usize].iter().position(|s| !s);
                        assert_eq!(
                            missing, None,
                            "writer {w}: finished insert not seen by scan"
                        );
                    }
                    scans += 1;

                    // Backward walk from a random point: strictly decreasing.
                    let start = user_key(rng.random_range(0..WRITERS), rng.random_range(0..n));
                    it.seek_for_prev(&riptide_common::key::seek_for_prev_key(&start))
                        .unwrap();
                    let mut last: Option<Vec<u8>> = None;
                    for _ in 0..500 {
                        if !it.valid() {
                            break;
                        }
                        check_entry(it.key(), it.value());
                        if let Some(l) = &last {
                            assert_eq!(
                                compare_internal_keys(it.key(), l),
                                std::cmp::Ordering::Less
                            );
                        }
                        last = Some(it.key().to_vec());
                        it.prev().unwrap();
                    }

                    // Point lookups of finished inserts.
                    for _ in 0..2000 {
                        let before = progress_snapshot(&progress);
                        let w = rng.random_range(0..WRITERS);
                        if before[w as usize] == 0 {
                            continue;
                        }
                        let i = rng.random_range(0..before[w as usize]);
                        let s = seqno(w, i);
                        let got = m
                            .get(&user_key(w, i), s)
                            .expect("finished insert not found");
                        assert_eq!(got.seqno, s);
                        assert_eq!(got.value, value(s));
                        gets += 1;
                    }
                    if last_round {
                        return (scans, gets);
                    }
                }
            })
        })
        .collect();

    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::Release);
    for r in readers {
        let (scans, gets) = r.join().unwrap();
        eprintln!("reader: {scans} scans, {gets} gets");
        assert!(scans >= 1 && gets > 0);
    }
    assert_eq!(m.len() as u64, n * WRITERS);
    assert_eq!(m.min_seqno(), Some(1));
    assert_eq!(m.max_seqno(), Some(n * WRITERS));
    // The final content is complete, in order.
    let mut it = m.iter();
    it.seek_to_first().unwrap();
    let mut count = 0;
    while it.valid() {
        check_entry(it.key(), it.value());
        count += 1;
        it.next().unwrap();
    }
    assert_eq!(count, n * WRITERS);
}

#[test]
fn concurrent_duplicate_inserts_keep_exactly_one() {
    let m = Arc::new(Memtable::new(0));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || {
                let mut won = 0u64;
                for i in 0..5000u64 {
                    if m.insert(&i.to_be_bytes(), i, ValueKind::Put, b"v") {
                        won += 1;
                    }
                }
                won
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(total, 5000);
    assert_eq!(m.len(), 5000);
    let mut it = m.iter();
    it.seek_to_first().unwrap();
    let mut count = 0u64;
    while it.valid() {
        assert_eq!(parse_internal_key(it.key()).unwrap().seqno, count);
        count += 1;
        it.next().unwrap();
    }
    assert_eq!(count, 5000);
}
