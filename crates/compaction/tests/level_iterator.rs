//! `LevelIterator` against the reference: a `MergingIterator` with one child per table of
//! the same run. Random runs of disjoint tables (some holding only a range tombstone, so no
//! entry at all), random sequences of seeks and steps in both directions; every position
//! must match.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod util;

use std::sync::Arc;

use proptest::prelude::*;
use riptide_common::key::{internal_key, seek_for_prev_key, seek_key};
use riptide_common::merge::MergingIterator;
use riptide_common::range_del::RangeTombstone;
use riptide_common::{BoxedIterator, InternalIterator, SeqNo, ValueKind};
use riptide_compaction::{LevelIterator, TableHandle};
use util::{Entry, write_table_with_ranges};

#[derive(Debug, Clone)]
enum Op {
    First,
    Last,
    Seek(u32, SeqNo),
    SeekForPrev(u32, SeqNo),
    Next,
    Prev,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::First),
        Just(Op::Last),
        (0u32..220, 0u64..12).prop_map(|(k, s)| Op::Seek(k, s)),
        (0u32..220, 0u64..12).prop_map(|(k, s)| Op::SeekForPrev(k, s)),
        Just(Op::Next),
        Just(Op::Next),
        Just(Op::Prev),
    ]
}

fn user_key(k: u32) -> Vec<u8> {
    format!("k{k:04}").into_bytes()
}

/// A run of disjoint tables: the sorted distinct keys cut into consecutive groups, each a
/// table; a group flagged empty becomes a table holding only a range tombstone over its
/// keys (no point entry at all).
fn run(
    dir: &std::path::Path,
    keys: &[u32],
    cuts: &[usize],
    empty: &[bool],
) -> Vec<Arc<TableHandle>> {
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    keys.dedup();
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (keys.len() + 1)).collect();
    bounds.push(0);
    bounds.push(keys.len());
    bounds.sort_unstable();
    bounds.dedup();
    let mut tables = Vec::new();
    for (n, w) in bounds.windows(2).enumerate() {
        let group = &keys[w[0]..w[1]];
        if group.is_empty() {
            continue;
        }
        let number = n as u64 + 1;
        let table = if empty.get(n).copied().unwrap_or(false) {
            let start = user_key(group[0]);
            let end = user_key(group[group.len() - 1] + 1);
            write_table_with_ranges(dir, number, &[], &[RangeTombstone::new(start, end, 5)])
        } else {
            let entries: Vec<Entry> = group
                .iter()
                .flat_map(|&k| {
                    // Two versions of every third key.
                    let versions: &[SeqNo] = if k % 3 == 0 { &[9, 3] } else { &[6] };
                    versions.iter().map(move |&s| {
                        (
                            user_key(k),
                            s,
                            ValueKind::Put,
                            format!("v{k}@{s}").into_bytes(),
                        )
                    })
                })
                .collect();
            write_table_with_ranges(dir, number, &entries, &[])
        };
        tables.push(table);
    }
    tables
}

fn position(it: &dyn InternalIterator) -> Option<(Vec<u8>, Vec<u8>)> {
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

fn apply(it: &mut dyn InternalIterator, op: &Op) {
    match op {
        Op::First => it.seek_to_first().unwrap(),
        Op::Last => it.seek_to_last().unwrap(),
        Op::Seek(k, s) => it.seek(&seek_key(&user_key(*k), *s)).unwrap(),
        Op::SeekForPrev(k, s) => it.seek_for_prev(&seek_key(&user_key(*k), *s)).unwrap(),
        Op::Next => {
            if it.valid() {
                it.next().unwrap();
            }
        }
        Op::Prev => {
            if it.valid() {
                it.prev().unwrap();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn level_iterator_matches_a_merge_of_its_tables(
        keys in prop::collection::vec(0u32..200, 1..120),
        cuts in prop::collection::vec(0usize..200, 0..8),
        empty in prop::collection::vec(prop::bool::weighted(0.2), 9),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let tables = run(dir.path(), &keys, &cuts, &empty);
        let mut level = LevelIterator::new(tables.clone());
        let children: Vec<BoxedIterator> =
            tables.iter().map(|t| Box::new(t.iter()) as BoxedIterator).collect();
        let mut reference = MergingIterator::new(children);
        for op in &ops {
            apply(&mut level, op);
            apply(&mut reference, op);
            prop_assert_eq!(position(&level), position(&reference), "after {:?}", op);
        }
    }
}

#[test]
fn seeks_land_in_the_table_that_holds_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let tables = run(
        dir.path(),
        &(0..100).collect::<Vec<_>>(),
        &[25, 50, 75],
        &[],
    );
    assert_eq!(tables.len(), 4);
    let mut level = LevelIterator::new(tables);
    level.seek(&seek_key(&user_key(61), 100)).unwrap();
    assert_eq!(level.key(), internal_key(&user_key(61), 6, ValueKind::Put));
    // Past the end of the third table, into the fourth.
    level.seek(&seek_key(&user_key(74), 0)).unwrap();
    assert_eq!(level.key(), internal_key(&user_key(75), 9, ValueKind::Put));
    level.seek(&seek_key(&user_key(500), 100)).unwrap();
    assert!(!level.valid());
    level.seek_for_prev(&seek_key(&user_key(0), 10)).unwrap();
    assert!(
        !level.valid(),
        "nothing sorts before k0000's newest version"
    );
    level
        .seek_for_prev(&seek_for_prev_key(&user_key(0)))
        .unwrap();
    assert_eq!(level.key(), internal_key(&user_key(0), 3, ValueKind::Put));
    // Before the first entry of the second table, into the first.
    level.seek_for_prev(&seek_key(&user_key(25), 100)).unwrap();
    assert_eq!(level.key(), internal_key(&user_key(24), 3, ValueKind::Put));
}
