//! Random tables read back through TableIterator must match VecIterator on the same data, in
//! both directions, for seeks, seek_for_prev and mixed next/prev walks; gets must match too.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::cmp::Ordering;

use proptest::prelude::*;
use riptide_common::InternalIterator;
use riptide_common::iter::VecIterator;
use riptide_common::key::{compare_internal_keys, internal_key, seek_key, user_key};
use riptide_common::{SeqNo, ValueKind};
use riptide_sstable::{BlockCache, Compression, TableOptions};

fn kind(k: u8) -> ValueKind {
    match k % 8 {
        0 => ValueKind::Delete,
        1 => ValueKind::SingleDelete,
        _ => ValueKind::Put,
    }
}

fn arb_entries() -> impl Strategy<Value = common::Entries> {
    prop::collection::vec(
        (
            prop::collection::vec(prop::sample::select(b"abc\0\xff".to_vec()), 0..6),
            0u64..50,
            any::<u8>(),
            prop::collection::vec(any::<u8>(), 0..40),
        ),
        0..300,
    )
    .prop_map(|raw| {
        let mut v: common::Entries = raw
            .into_iter()
            .map(|(uk, s, k, val)| (internal_key(&uk, s, kind(k)), val))
            .collect();
        v.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
        v.dedup_by(|a, b| compare_internal_keys(&a.0, &b.0) == Ordering::Equal);
        v
    })
}

fn arb_opts() -> impl Strategy<Value = TableOptions> {
    (
        prop::sample::select(vec![32usize, 100, 256, 1024, 4096]),
        1usize..20,
        any::<bool>(),
        prop::sample::select(vec![0u32, 1, 10]),
        prop::sample::select(vec![0u64, 512, 1 << 20]),
        any::<bool>(),
    )
        .prop_map(
            |(block_size, restart_interval, zstd, bloom, bytes_per_sync, align)| TableOptions {
                block_size,
                restart_interval,
                compression: if zstd {
                    Compression::Zstd { level: 1 }
                } else {
                    Compression::None
                },
                bloom_bits_per_key: bloom,
                bytes_per_sync,
                // Aligned blocks need a power-of-two size of 512 or more.
                block_align: align && block_size >= 512,
            },
        )
}

fn same_position(a: &dyn InternalIterator, b: &dyn InternalIterator) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.valid(), b.valid());
    if a.valid() {
        prop_assert_eq!(a.key(), b.key());
        prop_assert_eq!(a.value(), b.value());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn table_matches_vec_iterator(
        entries in arb_entries(),
        opts in arb_opts(),
        targets in prop::collection::vec(
            (prop::collection::vec(prop::sample::select(b"abc\0\xff".to_vec()), 0..6), 0u64..55, any::<u8>()),
            1..30),
        walk in prop::collection::vec(any::<bool>(), 0..60),
        with_cache in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cache = with_cache.then(|| std::sync::Arc::new(BlockCache::new(16 << 10)));
        let table = common::build(dir.path(), "t.sst", &entries, opts, cache);
        prop_assert_eq!(table.properties().entries, entries.len() as u64);
        let mut reference = VecIterator::new(entries.clone());
        let mut it = table.iter();

        // Full forward and backward scans.
        it.seek_to_first().unwrap();
        reference.seek_to_first().unwrap();
        for _ in 0..=entries.len() {
            same_position(&it, &reference)?;
            if !it.valid() { break; }
            it.next().unwrap();
            reference.next().unwrap();
        }
        prop_assert!(!it.valid());
        it.seek_to_last().unwrap();
        reference.seek_to_last().unwrap();
        for _ in 0..=entries.len() {
            same_position(&it, &reference)?;
            if !it.valid() { break; }
            it.prev().unwrap();
            reference.prev().unwrap();
        }
        prop_assert!(!it.valid());

        for (uk, s, k) in &targets {
            let target = if k % 3 == 0 { seek_key(uk, *s) } else { internal_key(uk, *s, kind(*k)) };
            let forward = k % 2 == 0;
            if forward {
                it.seek(&target).unwrap();
                reference.seek(&target).unwrap();
            } else {
                it.seek_for_prev(&target).unwrap();
                reference.seek_for_prev(&target).unwrap();
            }
            same_position(&it, &reference)?;
            // A short mixed walk from there.
            for &step_next in walk.iter().take(8) {
                if !it.valid() { break; }
                if step_next { it.next().unwrap(); reference.next().unwrap(); }
                else { it.prev().unwrap(); reference.prev().unwrap(); }
                same_position(&it, &reference)?;
            }

            // get at snapshot s: newest version of uk with seqno <= s.
            let snapshot: SeqNo = *s;
            let expected = entries.iter().find(|(ek, _)| {
                user_key(ek) == uk.as_slice()
                    && riptide_common::key::seqno_of(ek) <= snapshot
            });
            let got = table.get(uk, snapshot).unwrap();
            match (expected, got) {
                (None, None) => {}
                (Some((ek, ev)), Some(tv)) => {
                    let p = riptide_common::key::parse_internal_key(ek).unwrap();
                    prop_assert_eq!(tv.seqno, p.seqno);
                    prop_assert_eq!(tv.kind, p.kind);
                    prop_assert_eq!(&tv.value, ev);
                }
                (e, g) => prop_assert!(false, "get({:?}, {}) expected {:?} got {:?}", uk, snapshot, e, g),
            }
        }
        // Every stored user key passes the bloom filter.
        for (k, _) in &entries {
            prop_assert!(table.may_contain(user_key(k)));
        }
    }
}
