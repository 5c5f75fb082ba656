//! Memory accounting: grows with the data, stays within a reasonable overhead.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide_common::ValueKind;
use riptide_memtable::Memtable;

#[test]
fn usage_starts_small_and_grows_with_inserts() {
    let m = Memtable::new(0);
    let empty = m.approximate_memory_usage();
    assert!(empty < 1024, "empty memtable uses {empty} bytes");
    let mut last = empty;
    for i in 0..1000u32 {
        m.insert(&i.to_be_bytes(), u64::from(i), ValueKind::Put, &[0u8; 50]);
        let now = m.approximate_memory_usage();
        assert!(
            now >= last + 4 + 8 + 50,
            "usage must grow by at least the entry size"
        );
        last = now;
    }
    assert!(m.allocated_memory() >= last);
}

#[test]
fn one_million_entries_stay_under_200_mib() {
    let n = 1_000_000u64;
    let m = Memtable::new(0);
    let mut rng = StdRng::seed_from_u64(42);
    let mut key = [0u8; 16];
    let value = [7u8; 100];
    for s in 0..n {
        rng.fill(&mut key);
        m.insert(&key, s, ValueKind::Put, &value);
    }
    assert_eq!(m.len() as u64, n);
    let usage = m.approximate_memory_usage();
    let raw = n as usize * (16 + 8 + 100);
    assert!(usage >= raw, "usage {usage} below raw data size {raw}");
    assert!(usage < 200 << 20, "usage {usage} over 200 MiB");
    assert!(m.allocated_memory() <= usage + (1 << 20));
    eprintln!(
        "1M entries: {:.1} MiB, {:.1} bytes/entry ({} raw)",
        usage as f64 / (1 << 20) as f64,
        usage as f64 / n as f64,
        16 + 8 + 100
    );
}
