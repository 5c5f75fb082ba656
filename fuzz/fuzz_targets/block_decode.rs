//! `block_decode`: `riptide_sstable::block::Block` and its iterator on arbitrary bytes.
//!
//! Input: `mode: u8`, then
//! * mode even (**raw**): `n_ops: u8`, `n_ops` operation bytes, then the block bytes. The block
//!   is decoded with `Block::new` and walked with seeks, steps and scans in both directions.
//!   Errors are expected; panics are bugs.
//! * mode odd (**built**): the rest is an `arbitrary` list of internal keys, values and a
//!   restart interval; the block is written by `BlockBuilder` and every operation's result is
//!   checked against a sorted list (a decode error or a wrong answer is a bug).

#![no_main]

use std::cmp::Ordering;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use riptide_common::ValueKind;
use riptide_common::key::{compare_internal_keys, internal_key};
use riptide_sstable::block::{Block, BlockBuilder, BlockIter};

/// Bound on the entries a scan visits (a block of a few KiB has far fewer).
const MAX_STEPS: usize = 1 << 16;

#[derive(Arbitrary, Debug)]
enum Op {
    First,
    Last,
    Next,
    Prev,
    Seek(Target),
    SeekForPrev(Target),
    ScanForward,
    ScanBackward,
}

#[derive(Arbitrary, Debug)]
enum Target {
    /// A key seen in the block (or near it), so seeks land on real entries.
    Seen(u8, i8),
    /// Arbitrary bytes.
    Bytes(Vec<u8>),
    /// An internal key.
    Internal(Vec<u8>, u64, u8),
}

fn target(t: &Target, seen: &[Vec<u8>]) -> Vec<u8> {
    match t {
        Target::Seen(i, bump) => {
            if seen.is_empty() {
                return Vec::new();
            }
            let mut k = seen[usize::from(*i) % seen.len()].clone();
            match bump.cmp(&0) {
                Ordering::Less => {
                    k.pop();
                }
                Ordering::Greater => k.push(*bump as u8),
                Ordering::Equal => {}
            }
            k
        }
        Target::Bytes(b) => b.clone(),
        Target::Internal(k, s, kind) => {
            let kind = ValueKind::from_u8(kind % 4).unwrap_or(ValueKind::Put);
            internal_key(k, s & ((1 << 56) - 1), kind)
        }
    }
}

fn scan(it: &mut BlockIter<&Block>, forward: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let r = if forward {
        it.seek_to_first()
    } else {
        it.seek_to_last()
    };
    if r.is_err() {
        return out;
    }
    while it.valid() && out.len() < MAX_STEPS {
        out.push((it.key().to_vec(), it.value().to_vec()));
        let r = if forward { it.next() } else { it.prev() };
        if r.is_err() {
            break;
        }
    }
    out
}

fn raw(data: &[u8]) {
    let Some((&n_ops, rest)) = data.split_first() else {
        return;
    };
    let n_ops = usize::from(n_ops).min(rest.len());
    let (ops, block) = rest.split_at(n_ops);
    let Ok(block) = Block::new(block.to_vec()) else {
        return;
    };
    let _ = (
        block.size(),
        block.memory_size(),
        block.is_empty(),
        block.num_restarts(),
    );
    let mut it = block.iter();
    let seen: Vec<Vec<u8>> = scan(&mut it, true).into_iter().map(|(k, _)| k).collect();
    let _ = scan(&mut it, false);
    let mut u = Unstructured::new(ops);
    // `arbitrary` yields defaults forever once the bytes run out: stop there.
    for _ in 0..256 {
        if u.is_empty() {
            break;
        }
        let Ok(op) = Op::arbitrary(&mut u) else {
            break;
        };
        let _ = match &op {
            Op::First => it.seek_to_first(),
            Op::Last => it.seek_to_last(),
            // `next` and `prev` are documented for a valid iterator only; an invalid one
            // must still not panic, so call them either way.
            Op::Next => it.next(),
            Op::Prev => it.prev(),
            Op::Seek(t) => it.seek(&target(t, &seen)),
            Op::SeekForPrev(t) => it.seek_for_prev(&target(t, &seen)),
            Op::ScanForward => {
                scan(&mut it, true);
                Ok(())
            }
            Op::ScanBackward => {
                scan(&mut it, false);
                Ok(())
            }
        };
        let _ = (it.valid(), it.key(), it.value());
    }
}

#[derive(Arbitrary, Debug)]
struct Built {
    restart_interval: u8,
    entries: Vec<(Vec<u8>, u32, bool, Vec<u8>)>,
    ops: Vec<Op>,
}

fn built(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(input) = Built::arbitrary(&mut u) else {
        return;
    };
    let mut model: Vec<(Vec<u8>, Vec<u8>)> = input
        .entries
        .iter()
        .map(|(k, s, del, v)| {
            let kind = if *del {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            (internal_key(k, u64::from(*s), kind), v.clone())
        })
        .collect();
    model.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    model.dedup_by(|a, b| a.0 == b.0);
    let mut b = BlockBuilder::new(usize::from(input.restart_interval % 32) + 1);
    for (k, v) in &model {
        b.add(k, v);
    }
    let block = Block::new(b.finish().to_vec()).expect("a built block decodes");
    assert_eq!(block.is_empty(), model.is_empty());
    let mut it = block.iter();
    assert_eq!(scan(&mut it, true), model, "forward scan");
    let mut back = model.clone();
    back.reverse();
    assert_eq!(scan(&mut it, false), back, "backward scan");
    let seen: Vec<Vec<u8>> = model.iter().map(|(k, _)| k.clone()).collect();
    // Position in `model` of the iterator (None: invalid).
    let mut pos: Option<usize> = None;
    for op in &input.ops {
        match op {
            Op::First => {
                it.seek_to_first().expect("seek_to_first");
                pos = (!model.is_empty()).then_some(0);
            }
            Op::Last => {
                it.seek_to_last().expect("seek_to_last");
                pos = model.len().checked_sub(1);
            }
            Op::Next => {
                let Some(p) = pos else { continue };
                it.next().expect("next");
                pos = (p + 1 < model.len()).then_some(p + 1);
            }
            Op::Prev => {
                let Some(p) = pos else { continue };
                it.prev().expect("prev");
                pos = p.checked_sub(1);
            }
            Op::Seek(t) => {
                let t = target(t, &seen);
                it.seek(&t).expect("seek");
                let i = model.partition_point(|(k, _)| compare_internal_keys(k, &t).is_lt());
                pos = (i < model.len()).then_some(i);
            }
            Op::SeekForPrev(t) => {
                let t = target(t, &seen);
                it.seek_for_prev(&t).expect("seek_for_prev");
                let i = model.partition_point(|(k, _)| compare_internal_keys(k, &t).is_le());
                pos = i.checked_sub(1);
            }
            Op::ScanForward | Op::ScanBackward => continue,
        }
        match pos {
            Some(p) => {
                assert!(it.valid(), "{op:?}: expected entry {p}, iterator invalid");
                assert_eq!(it.key(), &model[p].0[..], "{op:?}: key");
                assert_eq!(it.value(), &model[p].1[..], "{op:?}: value");
            }
            None => assert!(!it.valid(), "{op:?}: expected invalid, at {:?}", it.key()),
        }
    }
}

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        let mut seeds = Vec::new();
        for (n, interval) in [(1u32, 1usize), (40, 4), (200, 16)] {
            let mut b = BlockBuilder::new(interval);
            for i in 0..n {
                let kind = if i % 5 == 0 { ValueKind::Delete } else { ValueKind::Put };
                b.add(&internal_key(format!("key{i:04}").as_bytes(), u64::from(n - i), kind), b"v");
            }
            let block = b.finish().to_vec();
            seeds.push((format!("raw-{n}"), riptide_fuzz::with_prefix(&[0, 8, 0, 1, 2, 3, 4, 5, 6, 7], &block)));
        }
        seeds.push(("empty".into(), vec![0, 0, 0, 0, 0, 0, 1, 0, 0, 0]));
        seeds.push(("built".into(), vec![1, 3, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]));
        seeds
    }),
    |data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        raw(rest);
    } else {
        built(rest);
    }
}
);
