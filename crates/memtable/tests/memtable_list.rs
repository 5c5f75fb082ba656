//! `MemtableList`: switching, the immutable queue, removal after flush, memory totals.

use std::sync::Arc;

use riptide_common::ValueKind;
use riptide_memtable::{Memtable, MemtableList};

fn filled(id: u64, entries: u32) -> Arc<Memtable> {
    let m = Arc::new(Memtable::new(id));
    for i in 0..entries {
        m.insert(&i.to_be_bytes(), u64::from(i), ValueKind::Put, b"value");
    }
    m
}

fn ids<'a>(it: impl Iterator<Item = &'a Arc<Memtable>>) -> Vec<u64> {
    it.map(|m| m.id()).collect()
}

#[test]
fn switch_queues_old_active_oldest_first() {
    let mut list = MemtableList::new(filled(1, 10));
    assert_eq!(list.active().id(), 1);
    assert_eq!(list.immutable_count(), 0);
    assert!(list.oldest_immutable().is_none());

    let old = list.switch(filled(2, 20));
    assert_eq!(old.id(), 1);
    let old2 = list.switch(filled(3, 30));
    assert_eq!(old2.id(), 2);
    assert_eq!(list.active().id(), 3);
    assert_eq!(list.immutable_count(), 2);
    assert_eq!(ids(list.immutables()), vec![1, 2]);
    assert_eq!(ids(list.immutables().rev()), vec![2, 1]);
    assert_eq!(list.oldest_immutable().map(|m| m.id()), Some(1));
    assert!(Arc::ptr_eq(list.oldest_immutable().unwrap(), &old));
    assert_eq!(ids(list.newest_first()), vec![3, 2, 1]);
}

#[test]
fn remove_immutable_matches_by_pointer() {
    let mut list = MemtableList::new(filled(1, 1));
    let a = list.switch(filled(2, 1));
    let b = list.switch(filled(3, 1));
    // Same id, different memtable: not removed.
    let lookalike = Arc::new(Memtable::new(1));
    assert!(!list.remove_immutable(&lookalike));
    // The active memtable is not an immutable one.
    let active = Arc::clone(list.active());
    assert!(!list.remove_immutable(&active));
    // Removal out of order (a later flush finishing first) works.
    assert!(list.remove_immutable(&b));
    assert!(!list.remove_immutable(&b));
    assert_eq!(ids(list.immutables()), vec![1]);
    assert!(list.remove_immutable(&a));
    assert_eq!(list.immutable_count(), 0);
    assert!(list.oldest_immutable().is_none());
    assert_eq!(list.active().id(), 3);
}

#[test]
fn total_memory_usage_sums_active_and_immutables() {
    let mut list = MemtableList::new(filled(1, 100));
    let first = list.total_memory_usage();
    assert_eq!(first, list.active().approximate_memory_usage());
    let old = list.switch(filled(2, 1000));
    let total = list.total_memory_usage();
    assert_eq!(
        total,
        old.approximate_memory_usage() + list.active().approximate_memory_usage()
    );
    // Writes into the active memtable show up in the total.
    list.active()
        .insert(b"more", 5000, ValueKind::Put, &[0u8; 4096]);
    assert!(list.total_memory_usage() >= total + 4096);
    assert!(list.remove_immutable(&old));
    assert_eq!(
        list.total_memory_usage(),
        list.active().approximate_memory_usage()
    );
}
