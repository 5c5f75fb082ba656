//! Leveled compaction driven as the engine drives it (pick -> run -> edits -> apply ->
//! finish, from two threads), over many flushes: every read matches a model, and when
//! nothing is left to pick every level is within its target.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::collections::BTreeMap;
use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use riptide_common::ValueKind;
use riptide_compaction::{
    CompactionOptions, CompactionRegistry, LevelOptions, VersionSet, compaction_scores,
    level_targets, pick_compaction, run_compaction,
};
use riptide_sstable::TableOptions;
use util::{Entry, read_tables, write_table};

/// Runs compactions from `threads` threads until none is due.
fn drain(
    vs: &Mutex<VersionSet>,
    reg: &CompactionRegistry,
    opts: &LevelOptions,
    threads: usize,
) -> usize {
    let topts = TableOptions::default();
    let dir = vs.lock().unwrap().dir().to_path_buf();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let copts = CompactionOptions {
                        fs: riptide_common::fs::real(),
                        dir: &dir,
                        table_options: &topts,
                        cache: None,
                        snapshots: &[],
                        bottommost: false,
                        target_file_size: 0,
                    };
                    let mut done = 0;
                    loop {
                        let job = {
                            let g = vs.lock().unwrap();
                            pick_compaction(&g.current(), 0, opts, reg)
                        };
                        let Some(job) = job else { return done };
                        let out = run_compaction(
                            &job,
                            &copts,
                            || vs.lock().unwrap().new_file_number(),
                            2,
                        )
                        .unwrap();
                        let mut g = vs.lock().unwrap();
                        g.apply_with_tables(job.edits(&out), &out.new_files)
                            .unwrap();
                        reg.finish_with_output(&job, &out);
                        done += 1;
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

#[test]
fn many_flushes_stay_leveled_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let vs = Mutex::new(VersionSet::open(dir.path(), None, true).unwrap());
    let opts = LevelOptions {
        num_levels: 5,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 16 << 10,
        level_size_ratio: 4.0,
        target_file_size_base: 4 << 10,
        tombstone_min_entries: 50,
        ..LevelOptions::default()
    };
    let reg = CompactionRegistry::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut model: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    let mut seq = 0u64;
    let mut compactions = 0;
    for round in 0..40 {
        let mut batch: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
        for _ in 0..60 {
            seq += 1;
            let k = format!("key{:04}", rng.random_range(0..600)).into_bytes();
            let e = if rng.random_bool(0.2) {
                model.insert(k.clone(), None);
                (k.clone(), seq, ValueKind::Delete, Vec::new())
            } else {
                let v: Vec<u8> = (0..rng.random_range(20..200))
                    .map(|_| rng.random_range(b'a'..=b'z'))
                    .collect();
                model.insert(k.clone(), Some(v.clone()));
                (k.clone(), seq, ValueKind::Put, v)
            };
            batch.insert(k, e);
        }
        let entries: Vec<Entry> = batch.into_values().collect();
        {
            let mut g = vs.lock().unwrap();
            let n = g.new_file_number();
            let t = write_table(dir.path(), n, &entries);
            g.apply_with_tables(
                vec![riptide_compaction::VersionEdit::AddFile {
                    cf: 0,
                    level: 0,
                    meta: t.meta.clone(),
                }],
                &[t],
            )
            .unwrap();
        }
        compactions += drain(&vs, &reg, &opts, if round % 2 == 0 { 2 } else { 1 });
        assert_eq!(reg.running_jobs(), 0);
    }
    assert!(compactions > 10, "{compactions}");
    let g = vs.lock().unwrap();
    let v = g.current();
    let targets = level_targets(&v, 0, &opts);
    let scores = compaction_scores(&v, 0, &opts, &reg);
    assert!(scores.iter().all(|&s| s < 1.0), "{scores:?} {targets:?}");
    for l in 1..targets.base_level {
        assert!(
            v.files(0, l).is_empty(),
            "level {l} above the base level is empty"
        );
    }
    assert!(v.files(0, 4).len() > 1, "data reached the last level");

    // Newest version of each key, reading L0 newest first then each level.
    let mut found: BTreeMap<Vec<u8>, (u64, ValueKind, Vec<u8>)> = BTreeMap::new();
    for files in v.levels(0) {
        for (k, s, kind, val) in read_tables(files) {
            let e = found.entry(k).or_insert((s, kind, val.clone()));
            if s > e.0 {
                *e = (s, kind, val);
            }
        }
    }
    for (k, want) in &model {
        let got = found
            .get(k)
            .filter(|e| e.1 == ValueKind::Put)
            .map(|e| e.2.clone());
        assert_eq!(&got, want, "key {}", String::from_utf8_lossy(k));
    }
    for (k, e) in &found {
        assert!(model.contains_key(k) || e.1 != ValueKind::Put);
    }
}
