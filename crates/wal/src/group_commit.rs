//! [`GroupCommit`]: a leader/follower queue that runs one piece of work for a whole group.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex};
use riptide_common::{Error, ErrorKind, Result};

/// Default cap on the number of items in one group.
const DEFAULT_MAX_ITEMS: usize = 1000;

/// The result of a finished group, kept until every follower in it has picked it up.
struct Finished {
    /// Tickets `first..end` were in the group.
    first: u64,
    end: u64,
    result: Result<()>,
    /// Followers that have not picked up the result yet.
    unclaimed: usize,
}

struct Queue<T> {
    /// Items not yet taken by a leader, in arrival order. `pending[i]` has ticket
    /// `front_ticket + i`.
    pending: VecDeque<T>,
    front_ticket: u64,
    next_ticket: u64,
    /// A leader is running its group's work.
    leader_active: bool,
    finished: VecDeque<Finished>,
}

impl<T> Queue<T> {
    /// The result of the finished group holding `ticket`, if that group is finished.
    fn claim(&mut self, ticket: u64) -> Option<Result<()>> {
        let i = self
            .finished
            .iter()
            .position(|f| f.first <= ticket && ticket < f.end)?;
        let f = self.finished.get_mut(i)?;
        f.unclaimed = f.unclaimed.saturating_sub(1);
        let result = f.result.clone();
        if f.unclaimed == 0 {
            self.finished.remove(i);
        }
        Some(result)
    }
}

/// A leader/follower group-commit queue.
///
/// Each caller of [`GroupCommit::submit`] queues an item. The caller whose item is oldest
/// in the queue, when no leader is working, becomes the leader: it takes the queued items
/// (in arrival order, up to the group caps), runs its `work` once for the whole group, and
/// every member of the group gets the same result. Followers block on a condition variable
/// (no spinning) until their group is done; items arriving while a leader works form the
/// next group, led by the oldest of them.
///
/// Typical use: items are write batches, `work` appends them to the [`crate::Wal`] as one
/// record (synced once for the whole group) and applies them to the memtable.
pub struct GroupCommit<T> {
    queue: Mutex<Queue<T>>,
    cv: Condvar,
    max_items: usize,
    max_bytes: usize,
    size_of: Option<fn(&T) -> usize>,
    groups: AtomicU64,
    items: AtomicU64,
}

impl<T: Send> Default for GroupCommit<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> std::fmt::Debug for GroupCommit<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("max_items", &self.max_items)
            .field("max_bytes", &self.max_bytes)
            .field("groups", &self.groups.load(Ordering::Relaxed))
            .field("items", &self.items.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<T: Send> GroupCommit<T> {
    /// A queue whose groups hold at most 1000 items (no byte cap).
    pub fn new() -> Self {
        Self::build(DEFAULT_MAX_ITEMS, usize::MAX, None)
    }

    /// A queue whose groups hold at most `max_items` items and, measuring items with
    /// `size_of`, at most `max_bytes` bytes (e.g. `1000`, `1 << 20`, `|b| b.len()`). A
    /// group always takes at least one item, however large. `max_items` of 0 means 1.
    pub fn with_limits(max_items: usize, max_bytes: usize, size_of: fn(&T) -> usize) -> Self {
        Self::build(max_items, max_bytes, Some(size_of))
    }

    fn build(max_items: usize, max_bytes: usize, size_of: Option<fn(&T) -> usize>) -> Self {
        GroupCommit {
            queue: Mutex::new(Queue {
                pending: VecDeque::new(),
                front_ticket: 0,
                next_ticket: 0,
                leader_active: false,
                finished: VecDeque::new(),
            }),
            cv: Condvar::new(),
            max_items: max_items.max(1),
            max_bytes,
            size_of,
            groups: AtomicU64::new(0),
            items: AtomicU64::new(0),
        }
    }

    /// Queues `item`. If this caller becomes the leader, it takes every queued item (in
    /// arrival order, up to the caps), runs `work` once for the group, and hands the same
    /// result to every member; otherwise it blocks until its group is done and returns that
    /// group's result (`work` is then not called).
    ///
    /// If `work` panics, the members of its group get an error and the panic propagates
    /// in the leader; the queue stays usable.
    pub fn submit(&self, item: T, work: impl FnOnce(&mut Vec<T>) -> Result<()>) -> Result<()> {
        let mut q = self.queue.lock();
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.pending.push_back(item);
        loop {
            if ticket < q.front_ticket {
                // Taken into a group led by someone else.
                if let Some(result) = q.claim(ticket) {
                    return result;
                }
            } else if !q.leader_active && ticket == q.front_ticket {
                break;
            }
            self.cv.wait(&mut q);
        }

        // Leader: this caller's item is the oldest queued, so it is in the group.
        q.leader_active = true;
        let n = self.group_len(&q.pending);
        let first = q.front_ticket;
        let mut group: Vec<T> = q.pending.drain(..n).collect();
        q.front_ticket += n as u64;
        drop(q);

        let mut guard = LeaderGuard {
            gc: self,
            first,
            len: n,
            done: false,
        };
        let result = work(&mut group);
        drop(group);
        guard.finish(result.clone());
        self.groups.fetch_add(1, Ordering::Relaxed);
        self.items.fetch_add(n as u64, Ordering::Relaxed);
        result
    }

    /// How many of the queued items the next group takes (at least one).
    fn group_len(&self, pending: &VecDeque<T>) -> usize {
        let max = pending.len().min(self.max_items).max(1);
        let Some(size_of) = self.size_of else {
            return max;
        };
        let mut bytes = 0usize;
        let mut n = 0;
        for item in pending.iter().take(max) {
            bytes = bytes.saturating_add(size_of(item));
            if n > 0 && bytes > self.max_bytes {
                break;
            }
            n += 1;
        }
        n.max(1)
    }

    /// `(groups, items)` processed so far: `items / groups` is the mean group size.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.groups.load(Ordering::Relaxed),
            self.items.load(Ordering::Relaxed),
        )
    }
}

/// Publishes the leader's result to its group and hands over leadership, also when `work`
/// panics (the group then gets an error instead of hanging forever).
struct LeaderGuard<'a, T> {
    gc: &'a GroupCommit<T>,
    first: u64,
    len: usize,
    done: bool,
}

impl<T> LeaderGuard<'_, T> {
    fn finish(&mut self, result: Result<()>) {
        self.done = true;
        let mut q = self.gc.queue.lock();
        let followers = self.len.saturating_sub(1);
        if followers > 0 {
            q.finished.push_back(Finished {
                first: self.first,
                end: self.first + self.len as u64,
                result,
                unclaimed: followers,
            });
        }
        q.leader_active = false;
        drop(q);
        self.gc.cv.notify_all();
    }
}

impl<T> Drop for LeaderGuard<'_, T> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(Err(Error::new(
                ErrorKind::Internal,
                "the group commit leader panicked; the outcome of this write is unknown",
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn single_caller_leads_its_own_group() {
        let gc = GroupCommit::new();
        let mut seen = Vec::new();
        gc.submit(7u32, |g| {
            seen.extend(g.iter().copied());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![7]);
        assert_eq!(gc.stats(), (1, 1));
        let e = gc
            .submit(8u32, |_| Err(Error::corruption("nope")))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(gc.stats(), (2, 2));
    }

    #[test]
    fn byte_cap_limits_groups_but_takes_at_least_one() {
        let gc: GroupCommit<Vec<u8>> = GroupCommit::with_limits(10, 100, |v| v.len());
        let mut q = VecDeque::new();
        q.push_back(vec![0; 60]);
        q.push_back(vec![0; 60]);
        assert_eq!(gc.group_len(&q), 1);
        let mut q = VecDeque::new();
        q.push_back(vec![0; 500]);
        assert_eq!(gc.group_len(&q), 1);
        let q: VecDeque<Vec<u8>> = (0..20).map(|_| vec![0; 5]).collect();
        assert_eq!(gc.group_len(&q), 10);
    }

    #[test]
    fn a_panicking_leader_does_not_wedge_the_queue() {
        let gc = Arc::new(GroupCommit::new());
        let gc2 = Arc::clone(&gc);
        let r = std::thread::spawn(move || gc2.submit(1u32, |_| panic!("boom"))).join();
        assert!(r.is_err());
        gc.submit(2u32, |g| {
            assert_eq!(g.as_slice(), &[2]);
            Ok(())
        })
        .unwrap();
    }
}
