//! Huge values (dedicated arena chunks) and empty keys and values.

use std::sync::Arc;

use riptide_common::key::internal_key;
use riptide_common::{InternalIterator, ValueKind};
use riptide_memtable::Memtable;

#[test]
fn huge_values_round_trip() {
    let m = Arc::new(Memtable::new(0));
    let one_mib: Vec<u8> = (0..(1 << 20) + 17).map(|i| (i % 251) as u8).collect();
    let five_mib: Vec<u8> = (0..5 << 20).map(|i| (i % 241) as u8).collect();
    m.insert(b"big", 1, ValueKind::Put, &one_mib);
    m.insert(b"small", 2, ValueKind::Put, b"s");
    m.insert(b"bigger", 3, ValueKind::Put, &five_mib);
    m.insert(b"big", 4, ValueKind::Put, b"overwritten");
    assert_eq!(m.get(b"big", 1).map(|v| v.value), Some(one_mib.clone()));
    assert_eq!(
        m.get(b"big", 9).map(|v| v.value),
        Some(b"overwritten".to_vec())
    );
    assert_eq!(m.get(b"bigger", 9).map(|v| v.value.len()), Some(5 << 20));
    assert_eq!(
        m.get_with(b"bigger", 9, |_, _, v| v == five_mib.as_slice()),
        Some(true)
    );

    let usage = m.approximate_memory_usage();
    assert!(usage >= one_mib.len() + five_mib.len(), "{usage}");
    assert!(
        usage < one_mib.len() + five_mib.len() + (1 << 20),
        "{usage}"
    );

    let mut it = m.iter();
    it.seek(&internal_key(b"big", 1, ValueKind::Put)).unwrap();
    assert_eq!(it.value(), one_mib.as_slice());
    it.next().unwrap();
    assert_eq!(
        it.key(),
        internal_key(b"bigger", 3, ValueKind::Put).as_slice()
    );
    assert_eq!(it.value().len(), 5 << 20);
}

#[test]
fn many_large_values_stay_separate() {
    let m = Memtable::new(0);
    for i in 0..20u8 {
        let v = vec![i; 300_000 + usize::from(i)];
        m.insert(&[i], u64::from(i), ValueKind::Put, &v);
    }
    for i in 0..20u8 {
        let v = m.get(&[i], 100).unwrap().value;
        assert_eq!(v.len(), 300_000 + usize::from(i));
        assert!(v.iter().all(|&b| b == i));
    }
}

#[test]
fn empty_keys_and_values() {
    let m = Arc::new(Memtable::new(0));
    m.insert(b"", 5, ValueKind::Put, b"");
    m.insert(b"", 3, ValueKind::Put, b"old");
    m.insert(b"", 7, ValueKind::Delete, b"");
    m.insert(b"\0", 1, ValueKind::Put, b"");
    m.insert(b"a", 2, ValueKind::Put, b"");
    assert_eq!(m.get(b"", 4).map(|v| v.value), Some(b"old".to_vec()));
    let v = m.get(b"", 6).unwrap();
    assert_eq!((v.seqno, v.kind, v.value.len()), (5, ValueKind::Put, 0));
    assert_eq!(m.get(b"", 100).map(|v| v.kind), Some(ValueKind::Delete));
    assert_eq!(m.get(b"", 2), None);
    assert_eq!(m.get(b"\0", 100).map(|v| v.value), Some(Vec::new()));
    assert_eq!(m.get(b"a", 100).map(|v| v.seqno), Some(2));

    let mut it = m.iter();
    it.seek_to_first().unwrap();
    let mut keys = Vec::new();
    while it.valid() {
        keys.push(it.key().to_vec());
        it.next().unwrap();
    }
    assert_eq!(
        keys,
        vec![
            internal_key(b"", 7, ValueKind::Delete),
            internal_key(b"", 5, ValueKind::Put),
            internal_key(b"", 3, ValueKind::Put),
            internal_key(b"\0", 1, ValueKind::Put),
            internal_key(b"a", 2, ValueKind::Put),
        ]
    );
    it.seek_to_last().unwrap();
    assert_eq!(it.key(), internal_key(b"a", 2, ValueKind::Put).as_slice());
    it.seek_for_prev(&internal_key(b"", 0, ValueKind::Delete))
        .unwrap();
    assert_eq!(it.key(), internal_key(b"", 3, ValueKind::Put).as_slice());
    it.prev().unwrap();
    it.prev().unwrap();
    assert_eq!(it.key(), internal_key(b"", 7, ValueKind::Delete).as_slice());
    it.prev().unwrap();
    assert!(!it.valid());
}
