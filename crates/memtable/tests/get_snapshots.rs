//! `get` at many snapshots over keys with many versions, tombstones included, checked against a
//! simple model.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide_common::{SeqNo, ValueKind};
use riptide_memtable::{Memtable, MemtableValue};

/// Every version of every key: user key -> [(seqno, kind, value)].
type Model = BTreeMap<Vec<u8>, Vec<(SeqNo, ValueKind, Vec<u8>)>>;

/// The model's answer: newest version with seqno <= snapshot.
fn model_get(model: &Model, key: &[u8], snapshot: SeqNo) -> Option<MemtableValue> {
    model.get(key).and_then(|versions| {
        versions
            .iter()
            .filter(|(s, _, _)| *s <= snapshot)
            .max_by_key(|(s, _, _)| *s)
            .map(|(seqno, kind, value)| MemtableValue {
                seqno: *seqno,
                kind: *kind,
                value: value.clone(),
            })
    })
}

#[test]
fn get_returns_newest_version_visible_at_each_snapshot() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let m = Memtable::new(1);
    let mut model = Model::new();
    // Keys that are prefixes of each other stress the user-key boundary.
    let keys: Vec<Vec<u8>> = (0..200u32)
        .map(|i| {
            let mut k = b"key".to_vec();
            k.extend(std::iter::repeat_n(b'x', (i % 4) as usize));
            k.extend_from_slice(&(i / 4).to_be_bytes());
            k
        })
        .chain([Vec::new(), b"k".to_vec(), b"key".to_vec()])
        .collect();
    let mut seqno: SeqNo = 10;
    for _ in 0..5000 {
        let key = &keys[rng.random_range(0..keys.len())];
        seqno += rng.random_range(1..3);
        let kind = match rng.random_range(0..10) {
            0 | 1 => ValueKind::Delete,
            2 => ValueKind::SingleDelete,
            _ => ValueKind::Put,
        };
        let value = if kind == ValueKind::Put {
            format!("{key:?}@{seqno}").into_bytes()
        } else {
            Vec::new()
        };
        assert!(m.insert(key, seqno, kind, &value));
        model
            .entry(key.clone())
            .or_default()
            .push((seqno, kind, value));
    }
    assert_eq!(m.len(), 5000);
    assert_eq!(m.min_seqno(), model.values().flatten().map(|v| v.0).min());
    assert_eq!(m.max_seqno(), Some(seqno));

    let absent: Vec<Vec<u8>> = vec![
        b"a".to_vec(),
        b"ke".to_vec(),
        b"key\0".to_vec(),
        b"zz".to_vec(),
    ];
    for key in keys.iter().chain(&absent) {
        for snapshot in [
            0,
            5,
            10,
            11,
            100,
            1000,
            2500,
            5000,
            seqno - 1,
            seqno,
            u64::MAX,
        ] {
            assert_eq!(
                m.get(key, snapshot),
                model_get(&model, key, snapshot),
                "key {key:?} at snapshot {snapshot}"
            );
        }
        // Every seqno of this key, and the one just before it.
        if let Some(versions) = model.get(key) {
            for &(s, _, _) in versions {
                assert_eq!(m.get(key, s), model_get(&model, key, s));
                assert_eq!(m.get(key, s - 1), model_get(&model, key, s - 1));
            }
        }
    }
}

#[test]
fn tombstones_hide_older_versions_until_newer_put() {
    let m = Memtable::new(2);
    m.insert(b"k", 1, ValueKind::Put, b"one");
    m.insert(b"k", 2, ValueKind::Delete, b"");
    m.insert(b"k", 3, ValueKind::Put, b"three");
    m.insert(b"k", 4, ValueKind::SingleDelete, b"");
    let kind_at = |s| m.get(b"k", s).map(|v| v.kind);
    assert_eq!(kind_at(0), None);
    assert_eq!(kind_at(1), Some(ValueKind::Put));
    assert_eq!(kind_at(2), Some(ValueKind::Delete));
    assert_eq!(m.get(b"k", 3).map(|v| v.value), Some(b"three".to_vec()));
    assert_eq!(kind_at(4), Some(ValueKind::SingleDelete));
    assert_eq!(kind_at(u64::MAX), Some(ValueKind::SingleDelete));
    // Same seqno, different kinds: both are kept, the larger kind byte sorts (and wins) first.
    assert!(m.insert(b"j", 9, ValueKind::Delete, b""));
    assert!(m.insert(b"j", 9, ValueKind::Put, b"p"));
    assert_eq!(m.get(b"j", 9).map(|v| v.kind), Some(ValueKind::Put));
    // The exact same internal key again is ignored.
    assert!(!m.insert(b"j", 9, ValueKind::Put, b"other"));
    assert_eq!(m.get(b"j", 9).map(|v| v.value), Some(b"p".to_vec()));
    assert_eq!(m.len(), 6);
}
