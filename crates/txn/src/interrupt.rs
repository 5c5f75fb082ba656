//! [`Interrupt`]: the flag another thread raises to end a transaction's lock waits early
//! (MariaDB's `KILL QUERY`, a server shutdown).
//!
//! A waiting request of the [`LockManager`](crate::LockManager) (a row lock or an insert
//! intention) given an `Interrupt` looks at it before it starts waiting and after every
//! wake-up, under the mutex it waits on. [`LockManager::interrupt`](crate::LockManager::interrupt)
//! raises the flag, then takes and releases each of those mutexes before it notifies their
//! condition variables, so a waiter either sees the flag before it sleeps or is woken after:
//! no interrupt is lost, and none costs anything on the lock fast path (a request granted at
//! once never looks at the flag).
//!
//! The flag stays raised until its owner clears it ([`Interrupt::clear`]): an interrupt that
//! arrives between two waits of a statement, or just before the first one, still ends them.

use std::sync::atomic::{AtomicBool, Ordering};

/// An interrupt flag for the lock waits of one transaction. Share it (`Arc`) between the
/// transaction, which passes it to its waits, and the threads that may interrupt them.
#[derive(Debug, Default)]
pub struct Interrupt {
    raised: AtomicBool,
}

impl Interrupt {
    /// A flag that is not raised.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Whether the flag is raised.
    pub fn is_set(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// Raises the flag without waking anybody: waits see it at their next wake-up. Use
    /// [`LockManager::interrupt`](crate::LockManager::interrupt) to end the current wait
    /// at once.
    pub fn set(&self) {
        self.raised.store(true, Ordering::SeqCst);
    }

    /// Lowers the flag: later waits wait normally again (MariaDB: at the start of the next
    /// statement).
    pub fn clear(&self) {
        self.raised.store(false, Ordering::SeqCst);
    }
}
