//! Checking a reopened database against the expected state: every in-flight operation
//! happened wholly or not at all, every prepared transaction belongs to one and is finished
//! (committed or rolled back, at random), every other key holds exactly its expected value,
//! and full scans in both directions agree. Then the state is brought up to date.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Result, bail};
use rand::Rng;
use rand::rngs::StdRng;
use riptide::{Db, ReadOptions};

use crate::state::{StateFile, Word};
use crate::workload::{describe, expected, key, xid};

/// What one verification found.
#[derive(Debug, Default, Clone, Copy)]
pub struct Verified {
    /// Keys compared.
    pub keys: u64,
    /// In-flight operations found done.
    pub in_flight_done: u64,
    /// In-flight operations found not done.
    pub in_flight_not_done: u64,
    /// Prepared transactions committed by the verifier.
    pub prepared_committed: u64,
    /// Prepared transactions rolled back by the verifier.
    pub prepared_rolled_back: u64,
    /// Operations acknowledged so far, over all rounds.
    pub acked: u64,
}

/// Verifies `db` against `state` and updates `state` to what the database now holds.
pub fn verify(db: &Db, state: &StateFile, rng: &mut StdRng) -> Result<Verified> {
    let mut out = Verified::default();
    let mut words = state.words()?;
    // Key -> the thread whose in-flight operation changes it.
    let mut in_flight_keys: HashMap<u32, u32> = HashMap::new();
    let mut records = Vec::new();
    for t in 0..state.threads() {
        let r = state.record(t)?;
        out.acked += r.acked;
        if let Some(op) = &r.in_flight {
            for e in &op.entries {
                in_flight_keys.insert(e.key, t);
            }
        }
        records.push(r);
    }

    // Prepared transactions: each must be an in-flight one; finish it at random.
    let mut prepared_outcome: HashMap<u32, bool> = HashMap::new();
    for x in db.prepared_transactions() {
        let owner = records.iter().enumerate().find_map(|(t, r)| {
            let op = r.in_flight.as_ref()?;
            (op.xid != 0 && xid(op.xid).ok().as_ref() == Some(&x)).then_some(t as u32)
        });
        let Some(t) = owner else {
            bail!("prepared transaction {x:?} belongs to no in-flight operation");
        };
        let commit = rng.random_bool(0.5);
        if commit {
            db.commit_prepared(&x)?;
            out.prepared_committed += 1;
        } else {
            db.rollback_prepared(&x)?;
            out.prepared_rolled_back += 1;
        }
        prepared_outcome.insert(t, commit);
    }

    // In-flight operations: all old or all new.
    for (t, r) in records.iter().enumerate() {
        let Some(op) = &r.in_flight else { continue };
        let t = t as u32;
        let mut done: Option<bool> = prepared_outcome.get(&t).copied();
        for e in &op.entries {
            let got = db.get(&key(e.key))?;
            let is_old = got == expected(e.key, e.old);
            let is_new = got == expected(e.key, e.new);
            let this = match (is_old, is_new) {
                (true, true) => continue,
                (false, true) => true,
                (true, false) => false,
                (false, false) => bail!(
                    "key {} holds {:?}: neither its old version {} nor the new {} of \
                     thread {t}'s in-flight operation",
                    e.key,
                    got.as_deref().map(describe),
                    e.old.version(),
                    e.new.version()
                ),
            };
            match done {
                None => done = Some(this),
                Some(d) if d != this => bail!(
                    "thread {t}'s in-flight operation ({} keys{}) is torn: key {} is {}",
                    op.entries.len(),
                    if op.xid != 0 { ", prepared" } else { "" },
                    e.key,
                    if this { "new" } else { "old" }
                ),
                Some(_) => {}
            }
        }
        let done = done.unwrap_or(false);
        if done {
            out.in_flight_done += 1;
        } else {
            out.in_flight_not_done += 1;
        }
        for e in &op.entries {
            if let Some(w) = words.get_mut(e.key as usize) {
                *w = if done { e.new } else { e.old };
            }
        }
    }

    // Every key, by point reads.
    for (i, w) in words.iter().enumerate() {
        let i = i as u32;
        let got = db.get(&key(i))?;
        if got != expected(i, *w) {
            bail!(
                "key {i} holds {:?}, expected {:?}{}",
                got.as_deref().map(describe),
                expected(i, *w).as_deref().map(describe),
                if in_flight_keys.contains_key(&i) {
                    " (after resolving its in-flight operation)"
                } else {
                    ""
                }
            );
        }
        out.keys += 1;
    }
    // And by full scans, both ways.
    let want: BTreeMap<Vec<u8>, Vec<u8>> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| expected(i as u32, *w).map(|v| (key(i as u32), v)))
        .collect();
    for backward in [false, true] {
        let mut it = db.iter(ReadOptions::default())?;
        if backward {
            it.seek_to_last()?;
        } else {
            it.seek_to_first()?;
        }
        let mut got = BTreeMap::new();
        while it.valid() {
            got.insert(it.key().to_vec(), it.value().to_vec());
            if backward {
                it.prev()?;
            } else {
                it.next()?;
            }
        }
        if got != want {
            let extra = got.keys().find(|k| !want.contains_key(*k));
            let missing = want.keys().find(|k| !got.contains_key(*k));
            bail!(
                "{} scan: {} entries, expected {} (first extra key {:?}, first missing {:?})",
                if backward { "backward" } else { "forward" },
                got.len(),
                want.len(),
                extra.map(|k| String::from_utf8_lossy(k).into_owned()),
                missing.map(|k| String::from_utf8_lossy(k).into_owned())
            );
        }
    }

    // Bring the state up to date.
    for (t, r) in records.iter().enumerate() {
        let Some(op) = &r.in_flight else { continue };
        for e in &op.entries {
            let w = words.get(e.key as usize).copied().unwrap_or(Word::FRESH);
            state.store_word(e.key, w)?;
        }
        state.clear_in_flight(t as u32)?;
    }
    Ok(out)
}
