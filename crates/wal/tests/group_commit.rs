//! Group commit: 8 threads x 1000 submissions through one WAL.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::open_collect;
use parking_lot::Mutex;
use riptide_wal::{Error, ErrorKind, GroupCommit, RecoveryMode, SyncMode, Wal, WalOptions};

const THREADS: u32 = 8;
const PER_THREAD: u32 = 1000;

fn encode(items: &[(u32, u32)]) -> Vec<u8> {
    items
        .iter()
        .flat_map(|&(t, i)| t.to_le_bytes().into_iter().chain(i.to_le_bytes()))
        .collect()
}

fn decode(record: &[u8]) -> Vec<(u32, u32)> {
    record
        .chunks_exact(8)
        .map(|c| {
            (
                u32::from_le_bytes(c[..4].try_into().unwrap()),
                u32::from_le_bytes(c[4..].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn every_item_lands_exactly_once_in_fewer_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let o = WalOptions {
        sync_mode: SyncMode::Full,
        recovery_mode: RecoveryMode::AbsoluteConsistency,
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
    let gc: GroupCommit<(u32, u32)> = GroupCommit::new();
    let group_ids = AtomicU64::new(0);
    // item -> id of the group it was written in, as seen by the leader.
    let membership = Mutex::new(HashMap::new());

    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (wal, gc, group_ids, membership) = (&wal, &gc, &group_ids, &membership);
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    gc.submit((t, i), |group| {
                        assert!(!group.is_empty());
                        assert!(group.contains(&(t, i)), "the leader leads its own item");
                        let id = group_ids.fetch_add(1, Ordering::Relaxed);
                        let mut m = membership.lock();
                        for &item in group.iter() {
                            assert!(m.insert(item, id).is_none(), "{item:?} twice");
                        }
                        drop(m);
                        wal.append(&encode(group))
                    })
                    .unwrap();
                    // Our group is done: our item is recorded.
                    assert!(membership.lock().contains_key(&(t, i)));
                }
            });
        }
    });

    let (groups, items) = gc.stats();
    assert_eq!(items, u64::from(THREADS * PER_THREAD));
    assert_eq!(groups, group_ids.load(Ordering::Relaxed));
    assert!(
        groups < items,
        "no grouping under contention: {groups} groups"
    );
    assert_eq!(wal.stats().records_written, groups);
    println!("{groups} groups for {items} items");
    wal.close().unwrap();

    let (_wal, _, seen) = open_collect(
        tmp.path(),
        common::opts(RecoveryMode::AbsoluteConsistency),
        1,
    )
    .unwrap();
    assert_eq!(seen.len() as u64, groups);
    let mut next = vec![0u32; THREADS as usize];
    let mut all = HashSet::new();
    for (_, rec) in &seen {
        for (t, i) in decode(rec) {
            assert!(all.insert((t, i)), "({t}, {i}) twice in the WAL");
            // Arrival order is kept: each thread's items appear in order.
            assert_eq!(next[t as usize], i, "thread {t} out of order");
            next[t as usize] += 1;
        }
    }
    assert_eq!(all.len() as u64, items);
}

#[test]
fn a_failed_group_fails_every_member_and_only_them() {
    let tmp = tempfile::tempdir().unwrap();
    let o = WalOptions {
        sync_mode: SyncMode::Full,
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
    let gc = Arc::new(GroupCommit::<(u32, u32)>::new());
    let failed: Mutex<HashSet<(u32, u32)>> = Mutex::new(HashSet::new());
    let group_no = AtomicU64::new(0);

    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (wal, gc, failed, group_no) = (&wal, &gc, &failed, &group_no);
            s.spawn(move || {
                for i in 0..PER_THREAD / 4 {
                    let r = gc.submit((t, i), |group| {
                        // Every third group fails before writing anything.
                        if group_no.fetch_add(1, Ordering::Relaxed) % 3 == 0 {
                            failed.lock().extend(group.iter().copied());
                            return Err(Error::corruption(format!(
                                "injected failure of a group of {}",
                                group.len()
                            )));
                        }
                        wal.append(&encode(group))
                    });
                    let in_failed = failed.lock().contains(&(t, i));
                    match r {
                        Ok(()) => assert!(!in_failed, "({t}, {i}) failed but got Ok"),
                        Err(e) => {
                            assert!(in_failed, "({t}, {i}) got an error it was not part of");
                            assert_eq!(e.kind(), ErrorKind::Corruption);
                            assert!(e.to_string().contains("injected failure"), "{e}");
                        }
                    }
                }
            });
        }
    });
    wal.close().unwrap();

    let failed = failed.into_inner();
    assert!(!failed.is_empty());
    let (_wal, _, seen) = open_collect(
        tmp.path(),
        common::opts(RecoveryMode::AbsoluteConsistency),
        1,
    )
    .unwrap();
    let written: Vec<(u32, u32)> = seen.iter().flat_map(|(_, r)| decode(r)).collect();
    let written_set: HashSet<_> = written.iter().copied().collect();
    assert_eq!(written.len(), written_set.len());
    assert!(written_set.is_disjoint(&failed));
    assert_eq!(
        written_set.len() + failed.len(),
        (THREADS * PER_THREAD / 4) as usize
    );
}
