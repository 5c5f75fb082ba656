#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Many threads lock random keys in random modes (re-entrant requests and upgrades included).
//! Per-key counters check that an exclusive holder never overlaps any other holder; a lock
//! timeout far above any legitimate wait checks that deadlocks are never missed; a watchdog
//! checks that nothing hangs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide_common::ErrorKind;
use riptide_txn::{LockManager, LockManagerOptions, LockMode, TxnId};

const THREADS: u64 = 8;
const TXNS_PER_THREAD: u64 = 400;
const KEYS: usize = 12;
/// Far above any legitimate wait here: a timeout means a missed deadlock or a lost wake-up.
const TIMEOUT: Duration = Duration::from_secs(30);
const WATCHDOG: Duration = Duration::from_secs(240);

#[derive(Default)]
struct KeyCounters {
    shared: AtomicU64,
    exclusive: AtomicU64,
}

impl KeyCounters {
    fn enter(&self, mode: LockMode, key: usize) {
        match mode {
            LockMode::Shared => {
                self.shared.fetch_add(1, Ordering::SeqCst);
                assert_eq!(
                    self.exclusive.load(Ordering::SeqCst),
                    0,
                    "key {key}: shared holder alongside an exclusive one"
                );
            }
            LockMode::Exclusive => {
                assert_eq!(
                    self.exclusive.fetch_add(1, Ordering::SeqCst),
                    0,
                    "key {key}: two exclusive holders"
                );
                assert_eq!(
                    self.shared.load(Ordering::SeqCst),
                    0,
                    "key {key}: exclusive holder alongside a shared one"
                );
            }
        }
    }

    fn leave(&self, mode: LockMode) {
        match mode {
            LockMode::Shared => self.shared.fetch_sub(1, Ordering::SeqCst),
            LockMode::Exclusive => self.exclusive.fetch_sub(1, Ordering::SeqCst),
        };
    }
}

#[derive(Debug, Default)]
struct Outcomes {
    committed: u64,
    deadlocks: u64,
}

fn worker(lm: &LockManager, counters: &[KeyCounters], thread_no: u64) -> Outcomes {
    let mut rng = StdRng::seed_from_u64(0x5eed + thread_no);
    let mut outcomes = Outcomes::default();
    for n in 0..TXNS_PER_THREAD {
        let txn: TxnId = thread_no * 1_000_000 + n + 1;
        let mut held: HashMap<usize, LockMode> = HashMap::new();
        let mut failed = false;
        for _ in 0..rng.random_range(1..=4) {
            let key = rng.random_range(0..KEYS);
            let mode = if rng.random_bool(0.5) {
                LockMode::Shared
            } else {
                LockMode::Exclusive
            };
            let name = format!("key{key}");
            match lm.lock(txn, 0, name.as_bytes(), mode, TIMEOUT) {
                Ok(()) => {
                    let before = held.get(&key).copied();
                    if before.is_none_or(|b| b < mode) {
                        if let Some(b) = before {
                            counters[key].leave(b);
                        }
                        counters[key].enter(mode, key);
                        held.insert(key, mode);
                    }
                    thread::yield_now();
                }
                Err(e) if e.kind() == ErrorKind::Deadlock => {
                    failed = true;
                    break;
                }
                Err(e) => panic!("txn {txn}: unexpected lock failure: {e}"),
            }
        }
        for (&key, &mode) in &held {
            counters[key].leave(mode);
        }
        let names: Vec<(u32, String)> = held.keys().map(|k| (0, format!("key{k}"))).collect();
        assert_eq!(lm.unlock_all(txn, names), held.len());
        if failed {
            outcomes.deadlocks += 1;
        } else {
            outcomes.committed += 1;
        }
    }
    outcomes
}

fn hammer(options: LockManagerOptions) {
    let lm = Arc::new(LockManager::new(options));
    let counters: Arc<Vec<KeyCounters>> =
        Arc::new((0..KEYS).map(|_| KeyCounters::default()).collect());
    let (done_tx, done_rx) = mpsc::channel();
    for t in 0..THREADS {
        let lm = Arc::clone(&lm);
        let counters = Arc::clone(&counters);
        let done_tx = done_tx.clone();
        thread::spawn(move || {
            // A panic drops the sender without sending, which the watchdog loop reports.
            let outcomes = worker(&lm, &counters, t);
            done_tx.send(outcomes).unwrap();
        });
    }
    drop(done_tx);
    let mut total = Outcomes::default();
    for _ in 0..THREADS {
        let o = done_rx
            .recv_timeout(WATCHDOG)
            .expect("a worker panicked or the lock manager hung");
        total.committed += o.committed;
        total.deadlocks += o.deadlocks;
    }
    assert_eq!(total.committed + total.deadlocks, THREADS * TXNS_PER_THREAD);
    let stats = lm.stats();
    assert_eq!(stats.deadlocks, total.deadlocks, "{stats:?}");
    assert_eq!(stats.timeouts, 0, "{stats:?}");
    assert_eq!(stats.locked_keys, 0, "{stats:?}");
    assert_eq!(lm.waiting_txns(), 0);
    assert!(total.committed > 0, "{total:?}");
}

#[test]
fn random_locking_with_many_stripes() {
    hammer(LockManagerOptions::default());
}

#[test]
fn random_locking_with_one_stripe() {
    hammer(LockManagerOptions {
        num_stripes: 1,
        ..LockManagerOptions::default()
    });
}
