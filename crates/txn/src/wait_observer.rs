//! Telling the host who waits for whom: an optional callback that a waiting lock request
//! (row lock or insert intention) calls when it starts to wait and each time the set of
//! transactions it waits for changes.
//!
//! MariaDB's parallel replication needs this. A replica applies transactions in parallel
//! but commits them in the primary's order, so when an earlier transaction waits for a row
//! lock that a later one holds, and the later one waits (in the server, outside the engine)
//! for the earlier one to commit, neither moves: no cycle ever forms in the engine's
//! wait-for graph. The server breaks it when told of the wait (`thd_rpl_deadlock_check`):
//! it kills the later transaction and applies it again. InnoDB reports every lock wait this
//! way, and so does MyRocks.
//!
//! The callback runs on the waiting thread with the lock manager's mutex for the key held,
//! so every transaction it names still holds (or waits ahead for) the key while it runs:
//! a host may use what it knows about them without fear that they end meanwhile. It must
//! be quick, must not call back into the lock manager, and must not wait for another
//! transaction. A panic in it is caught and ignored (the wait goes on as if it returned).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::lock_manager::TxnId;

/// Called as `observer(waiter, blockers)` when transaction `waiter` is about to wait for
/// the transactions `blockers` (sorted, without duplicates, never empty), and again when a
/// wait goes on behind a different set.
pub type WaitObserver = Arc<dyn Fn(TxnId, &[TxnId]) + Send + Sync>;

/// Where a lock manager keeps its observer (none by default).
#[derive(Default)]
pub(crate) struct ObserverSlot(RwLock<Option<WaitObserver>>);

impl std::fmt::Debug for ObserverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let installed = self.0.read().is_some();
        f.debug_struct("ObserverSlot")
            .field("installed", &installed)
            .finish()
    }
}

impl ObserverSlot {
    /// Installs `observer`, or removes the current one with `None`. Waits already in
    /// progress keep the one they started with.
    pub(crate) fn set(&self, observer: Option<WaitObserver>) {
        *self.0.write() = observer;
    }

    /// What one wait reports through: the observer now installed, if any.
    pub(crate) fn reporter(&self) -> WaitReporter {
        WaitReporter {
            observer: self.0.read().clone(),
            reported: Vec::new(),
        }
    }
}

/// One wait's reports: remembers the blockers last reported so that a wait woken by an
/// unrelated release does not report the same set again.
pub(crate) struct WaitReporter {
    observer: Option<WaitObserver>,
    reported: Vec<TxnId>,
}

impl WaitReporter {
    /// Tells the observer that `waiter` waits for `blockers`, unless it was told exactly
    /// that last time (or there is no observer, or nobody to wait for).
    pub(crate) fn report(&mut self, waiter: TxnId, blockers: &[TxnId]) {
        let Some(observer) = &self.observer else {
            return;
        };
        if blockers.is_empty() || blockers == self.reported.as_slice() {
            return;
        }
        // A panicking observer must not leave the lock manager's state half changed: the
        // wait goes on without the report.
        let _ = catch_unwind(AssertUnwindSafe(|| observer(waiter, blockers)));
        self.reported.clear();
        self.reported.extend_from_slice(blockers);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    /// Every report an observer received, in order.
    type Seen = Arc<Mutex<Vec<(TxnId, Vec<TxnId>)>>>;

    #[test]
    fn reports_each_new_set_once() {
        let seen: Seen = Arc::default();
        let slot = ObserverSlot::default();
        let sink = Arc::clone(&seen);
        slot.set(Some(Arc::new(move |w, b: &[TxnId]| {
            sink.lock().push((w, b.to_vec()))
        })));
        let mut r = slot.reporter();
        r.report(7, &[1, 2]);
        r.report(7, &[1, 2]);
        r.report(7, &[]);
        r.report(7, &[2]);
        assert_eq!(*seen.lock(), vec![(7, vec![1, 2]), (7, vec![2])]);
    }

    #[test]
    fn no_observer_and_panicking_observer_are_harmless() {
        let slot = ObserverSlot::default();
        slot.reporter().report(1, &[2]);
        slot.set(Some(Arc::new(|_, _: &[TxnId]| panic!("observer fails"))));
        let mut r = slot.reporter();
        r.report(1, &[2]);
        r.report(1, &[3]);
        slot.set(None);
        slot.reporter().report(1, &[2]);
    }
}
