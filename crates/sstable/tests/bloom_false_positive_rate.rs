//! The bloom filter has no false negatives and about the theoretical false-positive rate
//! (~0.8% at 10 bits per key, 7 probes); 0 bits per key disables it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use riptide_common::ValueKind;
use riptide_common::key::internal_key;
use riptide_sstable::TableOptions;
use riptide_sstable::filter::{BloomFilter, BloomFilterBuilder};

#[test]
fn false_positive_rate_near_theory() {
    for (bits, max_rate) in [(10u32, 0.0125), (16, 0.0012), (5, 0.13)] {
        let mut b = BloomFilterBuilder::new(bits);
        let n = 100_000u32;
        for i in 0..n {
            b.add_key(format!("present-{i}").as_bytes());
        }
        let f = BloomFilter::new(b.finish()).unwrap();
        for i in 0..n {
            assert!(f.may_contain(format!("present-{i}").as_bytes()));
        }
        let fp = (0..n)
            .filter(|i| f.may_contain(format!("absent-{i}").as_bytes()))
            .count();
        let rate = fp as f64 / f64::from(n);
        assert!(rate < max_rate, "{bits} bits/key: rate {rate}");
        assert!(
            rate > max_rate / 10.0,
            "{bits} bits/key: rate {rate} suspiciously low"
        );
    }
}

#[test]
fn table_filter_is_on_user_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = common::Entries::new();
    for i in 0..20_000u32 {
        let uk = format!("user{i:06}");
        entries.push((internal_key(uk.as_bytes(), 9, ValueKind::Put), vec![1]));
        entries.push((internal_key(uk.as_bytes(), 3, ValueKind::Delete), vec![]));
    }
    let t = common::build(
        dir.path(),
        "on.sst",
        &entries,
        TableOptions::default(),
        None,
    );
    for i in 0..20_000u32 {
        assert!(t.may_contain(format!("user{i:06}").as_bytes()));
    }
    let fp = (0..20_000u32)
        .filter(|i| t.may_contain(format!("nope{i:06}").as_bytes()))
        .count();
    assert!(fp < 250, "{fp}");
    let before = t.stats().filter_skips;
    assert_eq!(t.get(b"nope", 100).unwrap(), None);
    assert!(t.stats().filter_skips <= before + 1);

    // The thread's bloom counts: every lookup checks the filter once; a present key is never
    // ruled out, and of 1,000 absent ones all but the false positives are.
    let checks = riptide_sstable::bloom_checks_by_gets();
    assert!(t.get(b"user000007", 100).unwrap().is_some());
    let present = riptide_sstable::bloom_checks_by_gets().since(checks);
    assert_eq!((present.checked, present.useful), (1, 0));
    let checks = riptide_sstable::bloom_checks_by_gets();
    for i in 0..1000u32 {
        assert_eq!(t.get(format!("gone{i:06}").as_bytes(), 100).unwrap(), None);
    }
    let absent = riptide_sstable::bloom_checks_by_gets().since(checks);
    assert_eq!(absent.checked, 1000);
    assert!(absent.useful >= 975 && absent.useful <= 1000, "{absent:?}");

    let off = TableOptions {
        bloom_bits_per_key: 0,
        ..TableOptions::default()
    };
    let t = common::build(dir.path(), "off.sst", &entries, off, None);
    assert!(t.may_contain(b"anything at all"));
    // Without a filter nothing is checked.
    let checks = riptide_sstable::bloom_checks_by_gets();
    assert_eq!(t.get(b"nope", 100).unwrap(), None);
    assert_eq!(
        riptide_sstable::bloom_checks_by_gets().since(checks),
        riptide_sstable::BloomChecks::default()
    );
    assert_eq!(t.get(b"user000005", 100).unwrap().unwrap().seqno, 9);
}
