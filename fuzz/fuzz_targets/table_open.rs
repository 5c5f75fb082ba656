//! `table_open`: arbitrary bytes as a table file (`riptide_sstable::Table`).
//!
//! Input: `mode: u8`, then
//! * mode bit 0 clear (**raw**): the file bytes. Mode bit 1: first recompute the footer
//!   checksum and the trailer checksum of every block the footer and the index name (see
//!   `riptide_fuzz::fix_table_checksums`), so mutations reach the block decoders. The file is
//!   opened without a block cache, with a tiny one holding index and filter, and with one
//!   pinning them; each table is scanned forward and backward, sought and read with `get` at
//!   the keys it holds. Errors are expected; panics are bugs.
//! * mode bit 0 set (**built**): an `arbitrary` list of entries, range tombstones and table
//!   options; the table is written by `TableWriter`, then read back in the same three ways and
//!   every answer (scans, seeks, gets, range tombstones) checked against the entries.

#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use riptide_common::key::{
    MAX_SEQNO, compare_internal_keys, internal_key, parse_internal_key, seek_key, user_key,
};
use riptide_common::range_del::RangeTombstone;
use riptide_common::{InternalIterator, ValueKind};
use riptide_fuzz::{fix_table_checksums, temp_dir};
use riptide_sstable::{
    BlockCache, Compression, Table, TableOptions, TableReadOptions, TableWriter,
};

/// Bound on the entries one scan visits.
const MAX_STEPS: usize = 100_000;

/// The three ways a table is opened: no cache; a tiny cache holding index and filter (so they
/// are evicted and read again); a cache with index and filter pinned in the table.
fn read_configs() -> [(Option<Arc<BlockCache>>, TableReadOptions); 3] {
    [
        (None, TableReadOptions::default()),
        (
            Some(Arc::new(BlockCache::new(512))),
            TableReadOptions {
                cache_index_and_filter: true,
            },
        ),
        (
            Some(Arc::new(BlockCache::new(1 << 20))),
            TableReadOptions {
                cache_index_and_filter: false,
            },
        ),
    ]
}

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Scans the whole table; `Err` with what was seen if a step failed.
fn scan(it: &mut dyn InternalIterator, forward: bool) -> Result<Entries, Entries> {
    let mut out = Vec::new();
    let r = if forward {
        it.seek_to_first()
    } else {
        it.seek_to_last()
    };
    if r.is_err() {
        return Err(out);
    }
    while it.valid() && out.len() < MAX_STEPS {
        out.push((it.key().to_vec(), it.value().to_vec()));
        let r = if forward { it.next() } else { it.prev() };
        if r.is_err() {
            return Err(out);
        }
    }
    Ok(out)
}

fn raw(bytes: &[u8]) {
    let dir = temp_dir();
    let path = dir.path().join("000001.sst");
    std::fs::write(&path, bytes).expect("write table");
    for (cache, opts) in read_configs() {
        let Ok(table) = Table::open_with_options(&path, cache, &opts) else {
            continue;
        };
        let _ = (
            table.properties(),
            table.file_size(),
            table.memory_usage(),
            table.stats(),
        );
        let _ = table.has_range_tombstones();
        if let Ok(ts) = table.range_tombstones() {
            for t in ts.iter().take(64) {
                let _ = table.max_covering_tombstone_seqno(&t.start, MAX_SEQNO);
            }
        }
        let _ = table.range_tombstone_set(MAX_SEQNO);
        let mut it = table.iter();
        let seen = match scan(&mut it, true) {
            Ok(s) | Err(s) => s,
        };
        let _ = scan(&mut it, false);
        // Compaction's read path (read-ahead, no cache fill) must read what `iter` reads,
        // up to the same damage.
        let mut ahead = table.scan_iter(1 << 12);
        let ahead_seen = match scan(&mut ahead, true) {
            Ok(s) | Err(s) => s,
        };
        assert_eq!(ahead_seen, seen, "scan_iter and iter disagree");
        for (k, _) in seen.iter().take(64) {
            let _ = it.seek(k);
            let _ = it.next();
            let _ = it.seek_for_prev(k);
            let _ = it.prev();
            let uk = user_key(k);
            let _ = table.get(uk, MAX_SEQNO);
            let _ = table.get(uk, riptide_common::key::seqno_of(k).saturating_sub(1));
            let _ = table.may_contain(uk);
        }
        let _ = table.get(b"", MAX_SEQNO);
        let _ = it.seek(b"");
        let _ = it.seek_for_prev(&[0xff; 16]);
    }
}

#[derive(Arbitrary, Debug)]
struct Built {
    block_size: u16,
    restart_interval: u8,
    zstd: bool,
    bloom_bits: u8,
    entries: Vec<(Vec<u8>, u16, u8, Vec<u8>)>,
    tombstones: Vec<(Vec<u8>, Vec<u8>, u16)>,
    probes: Vec<(Vec<u8>, u16)>,
}

fn built(data: &[u8]) {
    let Ok(input) = Built::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let mut model: Entries = input
        .entries
        .iter()
        .map(|(k, s, kind, v)| {
            let kind = match kind % 3 {
                0 => ValueKind::Put,
                1 => ValueKind::Delete,
                _ => ValueKind::SingleDelete,
            };
            let v = if kind == ValueKind::Put {
                v.clone()
            } else {
                Vec::new()
            };
            (internal_key(k, u64::from(*s), kind), v)
        })
        .collect();
    model.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    model.dedup_by(|a, b| a.0 == b.0);
    // The writer keeps one tombstone per (start, seqno): the one with the largest end.
    let mut tombstones: BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), Vec<u8>> = BTreeMap::new();
    for (s, e, q) in &input.tombstones {
        if s < e {
            let end = tombstones
                .entry((s.clone(), std::cmp::Reverse(u64::from(*q))))
                .or_default();
            if e > end {
                *end = e.clone();
            }
        }
    }
    let expected_tombstones: Vec<RangeTombstone> = tombstones
        .into_iter()
        .map(|((s, q), e)| RangeTombstone::new(s, e, q.0))
        .collect();

    let opts = TableOptions {
        block_size: usize::from(input.block_size % 2048) + 32,
        restart_interval: usize::from(input.restart_interval % 16) + 1,
        compression: if input.zstd {
            Compression::Zstd { level: 1 }
        } else {
            Compression::None
        },
        bloom_bits_per_key: u32::from(input.bloom_bits % 24),
        ..TableOptions::default()
    };
    let dir = temp_dir();
    let path = dir.path().join("000001.sst");
    let mut w = TableWriter::create(&path, opts).expect("create table");
    for (k, v) in &model {
        w.add(k, v).expect("add a sorted entry");
    }
    for t in &input.tombstones {
        let _ = w.add_range_tombstone(&t.0, &t.1, u64::from(t.2));
    }
    let props = w.finish().expect("finish table");
    assert_eq!(props.entries, model.len() as u64);

    let mut reversed = model.clone();
    reversed.reverse();
    let seen: Vec<&[u8]> = model.iter().map(|(k, _)| user_key(k)).collect();
    for (cache, opts) in read_configs() {
        let table = Table::open_with_options(&path, cache, &opts).expect("open a written table");
        assert_eq!(table.properties().entries, model.len() as u64);
        let got = table.range_tombstones().expect("range tombstones");
        assert_eq!(&got[..], &expected_tombstones[..], "range tombstones");
        assert_eq!(
            table.has_range_tombstones(),
            !expected_tombstones.is_empty()
        );
        let mut it = table.iter();
        // Twice: the second pass reads through a warm (or, for the tiny one, churned) cache.
        for _ in 0..2 {
            assert_eq!(scan(&mut it, true).expect("forward scan"), model);
            assert_eq!(scan(&mut it, false).expect("backward scan"), reversed);
            let mut ahead = table.scan_iter(1 << 12);
            assert_eq!(scan(&mut ahead, true).expect("read-ahead scan"), model);
        }
        let probes = input
            .probes
            .iter()
            .map(|(k, s)| (k.as_slice(), u64::from(*s)))
            .chain(seen.iter().map(|k| (*k, MAX_SEQNO)))
            .take(256);
        for (uk, snapshot) in probes {
            // get: the newest version of `uk` with seqno <= snapshot.
            let want = model.iter().find_map(|(k, v)| {
                let p = parse_internal_key(k).ok()?;
                (p.user_key == uk && p.seqno <= snapshot).then(|| (p.seqno, p.kind, v.clone()))
            });
            let got = table
                .get(uk, snapshot)
                .expect("get")
                .map(|t| (t.seqno, t.kind, t.value));
            assert_eq!(got, want, "get({uk:?}, {snapshot})");
            if want.is_some() {
                assert!(table.may_contain(uk), "bloom filter lost {uk:?}");
            }
            // seek: the first entry >= the seek key.
            let target = seek_key(uk, snapshot);
            it.seek(&target).expect("seek");
            let i = model.partition_point(|(k, _)| compare_internal_keys(k, &target).is_lt());
            match model.get(i) {
                Some((k, v)) => {
                    assert!(it.valid(), "seek({uk:?}, {snapshot}): invalid");
                    assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "seek");
                }
                None => assert!(!it.valid(), "seek past the end is valid"),
            }
            // seek_for_prev: the last entry <= the seek key.
            it.seek_for_prev(&target).expect("seek_for_prev");
            let i = model.partition_point(|(k, _)| compare_internal_keys(k, &target).is_le());
            match i.checked_sub(1).and_then(|i| model.get(i)) {
                Some((k, v)) => {
                    assert!(it.valid(), "seek_for_prev({uk:?}, {snapshot}): invalid");
                    assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "seek_for_prev");
                }
                None => assert!(!it.valid(), "seek_for_prev before the start is valid"),
            }
        }
    }
}

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        let mut seeds = Vec::new();
        for (i, t) in riptide_fuzz::engine_files().tables.iter().take(4).enumerate() {
            seeds.push((format!("engine-{i}"), riptide_fuzz::with_prefix(&[0], t)));
            seeds.push((format!("engine-fixed-{i}"), riptide_fuzz::with_prefix(&[2], t)));
        }
        for (n, zstd, rd) in [(0, false, false), (3, false, true), (60, false, false), (60, true, true)] {
            let t = riptide_fuzz::sample_table(n, zstd, rd);
            seeds.push((format!("table-{n}-{zstd}-{rd}"), riptide_fuzz::with_prefix(&[2], &t)));
        }
        seeds.push(("built".into(), vec![1, 0, 1, 4, 0, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
        seeds
    }),
    |data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 1 {
        built(rest);
    } else if mode & 2 == 2 {
        let mut bytes = rest.to_vec();
        fix_table_checksums(&mut bytes);
        raw(&bytes);
    } else {
        raw(rest);
    }
}
);
