//! The wait-for graph the [`LockManager`](crate::LockManager) uses to detect deadlocks.
//!
//! Only transactions that actually wait appear here, so the one mutex guarding the graph is
//! never touched on the lock fast path. Each waiter has one outgoing edge per transaction it
//! waits for; the edges are replaced whenever that set changes.
//!
//! A cycle is always closed by the waiter that adds its last edge, and that waiter searches for
//! a path back to itself right after adding it, so every cycle is found by one of its members.
//! A waiter's edges can be briefly stale (the holders changed and it has not woken up yet), so a
//! search may, rarely, report a cycle that was just resolving (a spurious deadlock); it never
//! misses a real one.

use std::collections::{HashMap, HashSet};

use parking_lot::Mutex;

use crate::lock_manager::TxnId;

/// Why a new waiter must not wait.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Deadlock {
    /// Waiting would close this cycle (starts at the waiter; the waiter is implied at the end).
    Cycle(Vec<TxnId>),
    /// The search went deeper than the configured bound along this chain; treated as a cycle.
    TooDeep(Vec<TxnId>),
}

/// A deadlock a new waiter found: the cycle (or too-long chain) and what each of the other
/// transactions on it waits for.
#[derive(Debug)]
pub(crate) struct DeadlockFound {
    /// The cycle or chain.
    pub(crate) deadlock: Deadlock,
    /// `txn N waits for <what>` for each other transaction on it that waits, `; `-separated.
    pub(crate) waits: String,
}

impl DeadlockFound {
    /// The `Deadlock` error for waiter `txn`, whose wait `what` describes (a row lock or an
    /// insert into a locked gap): the cycle or the too-long chain, what the other transactions
    /// on it wait for, and who the victim is.
    pub(crate) fn into_error(self, txn: TxnId, what: &str) -> riptide_common::Error {
        let chain = |ids: &[TxnId]| {
            ids.iter()
                .map(|t| format!("txn {t}"))
                .collect::<Vec<_>>()
                .join(" -> ")
        };
        let waits = if self.waits.is_empty() {
            String::new()
        } else {
            format!("; {}", self.waits)
        };
        let context = match self.deadlock {
            Deadlock::Cycle(cycle) => format!(
                "{what}: waiting would deadlock ({} -> txn {txn}){waits}; txn {txn} is the victim",
                chain(&cycle)
            ),
            Deadlock::TooDeep(path) => format!(
                "{what}: wait-for chain longer than {} transactions ({} -> ...), treated as a \
                 deadlock{waits}; txn {txn} is the victim",
                path.len().saturating_sub(1),
                chain(&path)
            ),
        };
        riptide_common::Error::new(riptide_common::ErrorKind::Deadlock, context)
    }
}

/// One waiting transaction in the graph.
#[derive(Debug)]
struct Waiter {
    /// The transactions it waits for.
    blockers: Vec<TxnId>,
    /// What it waits for (a lock on a key, an insert into a gap), for deadlock reports.
    wants: String,
}

/// Edges `waiter -> transactions it waits for`, with a bounded cycle search.
#[derive(Debug)]
pub(crate) struct WaitForGraph {
    edges: Mutex<HashMap<TxnId, Waiter>>,
    max_depth: usize,
}

impl WaitForGraph {
    /// An empty graph; searches stop at chains of `max_depth` transactions (at least 2).
    pub(crate) fn new(max_depth: usize) -> Self {
        WaitForGraph {
            edges: Mutex::new(HashMap::new()),
            max_depth: max_depth.max(2),
        }
    }

    /// Records that `waiter` now waits for `blockers` (replacing its earlier edges; `wants`
    /// describes what it waits for, asked only when it was not waiting yet), then searches for
    /// a path from `waiter` back to itself. On a deadlock the waiter's edges are removed
    /// again: it is the victim.
    pub(crate) fn wait(
        &self,
        waiter: TxnId,
        blockers: &[TxnId],
        wants: impl FnOnce() -> String,
    ) -> Result<(), DeadlockFound> {
        let mut edges = self.edges.lock();
        match edges.get_mut(&waiter) {
            Some(w) => blockers.clone_into(&mut w.blockers),
            None => {
                edges.insert(
                    waiter,
                    Waiter {
                        blockers: blockers.to_vec(),
                        wants: wants(),
                    },
                );
            }
        }
        let check = search(&edges, waiter, self.max_depth);
        match check {
            Ok(()) => Ok(()),
            Err(deadlock) => {
                let members = match &deadlock {
                    Deadlock::Cycle(ids) | Deadlock::TooDeep(ids) => ids,
                };
                let waits = members
                    .iter()
                    .filter(|&&t| t != waiter)
                    .filter_map(|t| {
                        edges
                            .get(t)
                            .map(|w| format!("txn {t} waits for {}", w.wants))
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                edges.remove(&waiter);
                Err(DeadlockFound { deadlock, waits })
            }
        }
    }

    /// Removes the edges of `waiter` (it was granted, timed out or gave up).
    pub(crate) fn remove(&self, waiter: TxnId) {
        self.edges.lock().remove(&waiter);
    }

    /// The number of transactions currently recorded as waiting.
    pub(crate) fn waiting(&self) -> usize {
        self.edges.lock().len()
    }
}

/// Depth-first search from `start` for a path back to `start`, exploring each transaction once
/// and giving up on chains longer than `max_depth` transactions.
fn search(edges: &HashMap<TxnId, Waiter>, start: TxnId, max_depth: usize) -> Result<(), Deadlock> {
    // The current path: (transaction, index of the next edge of it to follow).
    let mut path: Vec<(TxnId, usize)> = vec![(start, 0)];
    let mut visited: HashSet<TxnId> = HashSet::new();
    visited.insert(start);
    while let Some(&(node, next)) = path.last() {
        let child = edges.get(&node).and_then(|w| w.blockers.get(next)).copied();
        let Some(child) = child else {
            path.pop();
            continue;
        };
        if let Some(top) = path.last_mut() {
            top.1 += 1;
        }
        if child == start {
            return Err(Deadlock::Cycle(path.iter().map(|&(t, _)| t).collect()));
        }
        // A transaction that waits for nothing ends the chain: no need to descend.
        if !edges.contains_key(&child) || !visited.insert(child) {
            continue;
        }
        if path.len() >= max_depth {
            let mut chain: Vec<TxnId> = path.iter().map(|&(t, _)| t).collect();
            chain.push(child);
            return Err(Deadlock::TooDeep(chain));
        }
        path.push((child, 0));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `waiter` waits for `blockers` (for "key <waiter>"); the deadlock, if any.
    fn wait(g: &WaitForGraph, waiter: TxnId, blockers: &[TxnId]) -> Result<(), Deadlock> {
        g.wait(waiter, blockers, || format!("key {waiter}"))
            .map_err(|f| f.deadlock)
    }

    #[test]
    fn finds_cycles_through_the_waiter_only() {
        let g = WaitForGraph::new(100);
        assert_eq!(wait(&g, 1, &[2]), Ok(()));
        assert_eq!(wait(&g, 2, &[3]), Ok(()));
        assert_eq!(wait(&g, 3, &[1]), Err(Deadlock::Cycle(vec![3, 1, 2])));
        // The victim's edges are gone; the others stay.
        assert_eq!(g.waiting(), 2);
        g.remove(1);
        g.remove(2);
        assert_eq!(g.waiting(), 0);

        // A cycle that does not include the new waiter is not its problem.
        assert_eq!(wait(&g, 5, &[6]), Ok(()));
        assert_eq!(wait(&g, 6, &[7]), Ok(()));
        assert_eq!(wait(&g, 4, &[5, 9]), Ok(()));
    }

    #[test]
    fn long_chains_count_as_deadlocks() {
        let g = WaitForGraph::new(3);
        assert_eq!(wait(&g, 2, &[3]), Ok(()));
        assert_eq!(wait(&g, 3, &[4]), Ok(()));
        assert_eq!(wait(&g, 4, &[5]), Ok(()));
        assert_eq!(wait(&g, 1, &[2]), Err(Deadlock::TooDeep(vec![1, 2, 3, 4])));
        // A chain ending in a transaction that waits for nothing is fine at the bound.
        let g = WaitForGraph::new(3);
        assert_eq!(wait(&g, 2, &[3]), Ok(()));
        assert_eq!(wait(&g, 3, &[4]), Ok(()));
        assert_eq!(wait(&g, 1, &[2]), Ok(()));
    }

    #[test]
    fn a_deadlock_names_what_every_other_member_waits_for() {
        let g = WaitForGraph::new(100);
        g.wait(1, &[2], || "key a".into()).unwrap();
        g.wait(2, &[3], || "key b".into()).unwrap();
        // A later wait of the same transaction keeps what it waits for.
        g.wait(2, &[3], || unreachable!("asked again")).unwrap();
        let found = g.wait(3, &[1], || "key c".into()).unwrap_err();
        assert_eq!(found.waits, "txn 1 waits for key a; txn 2 waits for key b");
        let msg = found.into_error(3, "txn 3 wants key c").to_string();
        assert!(
            msg.contains("txn 3 wants key c: waiting would deadlock (txn 3 -> txn 1 -> txn 2 -> txn 3); txn 1 waits for key a; txn 2 waits for key b; txn 3 is the victim"),
            "{msg}"
        );
    }
}
