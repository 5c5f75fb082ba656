//! `Db::sample_keys_cf`: keys spread evenly over the bytes of the range's tables (many tables
//! on several levels), in order, within the bounds, at most as many as asked; the memtables
//! give none.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use riptide::{Db, Options};

fn key(i: u32) -> Vec<u8> {
    format!("k{i:07}").into_bytes()
}

/// The number `i` of a key `k{i:07}` (or of a block boundary between two such keys: the
/// digits it has, padded with zeros).
fn number(k: &[u8]) -> u32 {
    let digits: String = k[1..].iter().map(|&b| b as char).collect();
    format!("{digits:0<7}")[..7].parse().unwrap()
}

#[test]
fn memtables_give_no_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let cf = db.default_cf();
    for i in 0..1000 {
        db.put(&key(i), b"v").unwrap();
    }
    assert!(db.sample_keys_cf(&cf, b"", None, 16).unwrap().is_empty());
    db.flush().unwrap();
    assert!(!db.sample_keys_cf(&cf, b"", None, 16).unwrap().is_empty());
    assert!(db.sample_keys_cf(&cf, b"", None, 0).unwrap().is_empty());
}

#[test]
fn keys_spread_evenly_over_tables_of_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .write_buffer_size(64 << 10)
        .target_file_size(32 << 10)
        .max_bytes_for_level_base(256 << 10)
        .level_size_ratio(4.0)
        .l0_compaction_trigger(2);
    let db = Db::open(dir.path(), opts).unwrap();
    let cf = db.default_cf();
    let value = [3u8; 60];
    const N: u32 = 40_000;
    // Written in a shuffled order so every level holds keys from all over the range.
    for j in 0..N {
        let i = (j * 7_919) % N;
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(&cf, None).unwrap();
    // Newer versions of a tenth of the keys in an L0 table over the levels.
    for i in (0..N).step_by(10) {
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    let levels: Vec<usize> = db.statistics().levels.iter().map(|l| l.files).collect();
    assert!(
        levels.iter().filter(|&&n| n > 0).count() >= 2 && levels.iter().sum::<usize>() >= 20,
        "want many tables on several levels: {levels:?}"
    );

    // The whole range, 50 keys: sorted, distinct, each near i/50 of the way.
    let keys = db.sample_keys_cf(&cf, b"", None, 50).unwrap();
    assert!((45..=50).contains(&keys.len()), "{} keys", keys.len());
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "not sorted and distinct"
    );
    for (j, k) in keys.iter().enumerate() {
        let want = (j as f64 + 0.5) * f64::from(N) / keys.len() as f64;
        let got = f64::from(number(k));
        assert!(
            (got - want).abs() < f64::from(N) / 25.0,
            "key {j} of {}: {} lies at {got}, expected near {want}",
            keys.len(),
            String::from_utf8_lossy(k)
        );
    }

    // A sub-range: every key inside it, spread over it.
    let (lo, hi) = (key(10_000), key(20_000));
    let keys = db.sample_keys_cf(&cf, &lo, Some(&hi), 20).unwrap();
    assert!((16..=20).contains(&keys.len()), "{} keys", keys.len());
    assert!(keys.iter().all(|k| *k >= lo && *k < hi));
    let first = number(&keys[0]);
    let last = number(&keys[keys.len() - 1]);
    assert!(first < 11_500 && last > 18_500, "{first}..{last}");

    // More keys asked than there are blocks: at most one per block boundary, no repeats.
    let many = db.sample_keys_cf(&cf, &lo, Some(&hi), 100_000).unwrap();
    assert!(many.len() < 10_000 && many.len() > keys.len());
    assert!(many.windows(2).all(|w| w[0] < w[1]));

    // Any count is accepted (the C ABI passes the caller's): no more keys than blocks.
    let all = db.sample_keys_cf(&cf, &lo, Some(&hi), usize::MAX).unwrap();
    assert_eq!(all, many);

    // A range past every key.
    assert!(db.sample_keys_cf(&cf, b"z", None, 10).unwrap().is_empty());
}
