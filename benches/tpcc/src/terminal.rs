//! Terminals: one connection each, bound to a home warehouse (and district), running
//! transactions back to back with no keying or think time, as HammerDB's virtual users do;
//! deadlocks and lock wait timeouts are rolled back and retried with the same input, and
//! counted. A measured run starts every terminal at once and stops them at its end; what
//! finishes after the end is not counted.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use hdrhistogram::Histogram;
use indicatif::ProgressBar;
use mysql::Conn;
use mysql::prelude::Queryable as _;

use crate::db::{ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, Target, server_code};
use crate::mix::{Deck, Home, Kind, Workload};
use crate::procedures::{Calls, Protocol};
use crate::random::Rand;
use crate::txn::{Outcome, Statements, Txn, TxnError};

/// Attempts of one transaction before the run fails (a livelock, not contention).
const MAX_ATTEMPTS: u32 = 1_000;

/// A latency histogram in microseconds (up to an hour, 3 significant digits).
fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new_with_max(3_600_000_000, 3)
        .unwrap_or_else(|_| unreachable!("the bounds are valid"))
}

/// What one transaction type did in one run.
#[derive(Clone)]
pub struct KindStats {
    /// Transactions completed (committed, or rolled back by design).
    pub completed: u64,
    /// New-Orders rolled back on their unused item (part of `completed`).
    pub rolled_back: u64,
    /// Districts Delivery found without a new order.
    pub skipped: u64,
    /// Retries after a deadlock (error 1213).
    pub deadlocks: u64,
    /// Retries after a lock wait timeout (error 1205).
    pub lock_waits: u64,
    /// Response times (first attempt to end, retries included), microseconds.
    pub latency: Histogram<u64>,
}

impl Default for KindStats {
    fn default() -> KindStats {
        KindStats {
            completed: 0,
            rolled_back: 0,
            skipped: 0,
            deadlocks: 0,
            lock_waits: 0,
            latency: histogram(),
        }
    }
}

impl KindStats {
    fn add(&mut self, o: &KindStats) {
        self.completed += o.completed;
        self.rolled_back += o.rolled_back;
        self.skipped += o.skipped;
        self.deadlocks += o.deadlocks;
        self.lock_waits += o.lock_waits;
        let _ = self.latency.add(&o.latency);
    }

    /// The latency at `quantile` (0 to 1) in milliseconds, None without transactions.
    pub fn latency_ms(&self, quantile: f64) -> Option<f64> {
        (!self.latency.is_empty()).then(|| self.latency.value_at_quantile(quantile) as f64 / 1000.0)
    }
}

/// What all terminals did in one run.
#[derive(Clone, Default)]
pub struct Tally {
    /// Per transaction type, in [`Kind::ALL`] order.
    pub kinds: [KindStats; 5],
    /// Committed New-Orders per second of the run.
    pub new_orders_per_second: Vec<u64>,
    /// New-Orders whose COMMIT succeeded, those that finished after the run's end (not
    /// counted in `kinds`) included: what the server must have kept.
    pub acknowledged_new_orders: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.acknowledged_new_orders += o.acknowledged_new_orders;
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.add(b);
        }
        if self.new_orders_per_second.len() < o.new_orders_per_second.len() {
            self.new_orders_per_second
                .resize(o.new_orders_per_second.len(), 0);
        }
        for (a, b) in self
            .new_orders_per_second
            .iter_mut()
            .zip(&o.new_orders_per_second)
        {
            *a += b;
        }
    }

    /// The stats of `kind`.
    pub fn kind(&self, kind: Kind) -> &KindStats {
        // Kind has five variants numbered 0 to 4, one per entry: always in bounds.
        #[allow(clippy::indexing_slicing)]
        &self.kinds[kind as usize]
    }

    fn kind_mut(&mut self, kind: Kind) -> &mut KindStats {
        // As in `kind`: always in bounds.
        #[allow(clippy::indexing_slicing)]
        &mut self.kinds[kind as usize]
    }

    /// Committed New-Orders (the rolled-back ones excluded).
    pub fn new_orders(&self) -> u64 {
        let no = self.kind(Kind::NewOrder);
        no.completed - no.rolled_back
    }

    /// Transactions completed, all types.
    pub fn completed(&self) -> u64 {
        self.kinds.iter().map(|k| k.completed).sum()
    }

    /// Retries of all types (deadlocks and lock wait timeouts).
    pub fn retries(&self) -> u64 {
        self.kinds.iter().map(|k| k.deadlocks + k.lock_waits).sum()
    }
}

/// What a terminal sends its transactions with.
enum Prepared {
    /// The five `CALL`s ([`Protocol::Procedures`]).
    Calls(Calls),
    /// Every statement of the five ([`Protocol::Statements`]).
    Statements(Box<Statements>),
}

impl Prepared {
    fn execute(&self, conn: &mut Conn, input: &crate::mix::Input) -> Txn<Outcome> {
        match self {
            Prepared::Calls(c) => crate::procedures::execute(conn, c, input),
            Prepared::Statements(s) => crate::txn::execute(conn, s, input),
        }
    }
}

/// One terminal.
struct Terminal {
    conn: Conn,
    prepared: Prepared,
    home: Home,
    rand: Rand,
    deck: Deck,
}

impl Terminal {
    fn open(target: &Target, w: &Workload, home: Home, seed: u64) -> Result<Terminal> {
        let protocol = w.protocol;
        let mut conn = target.connect()?;
        let prepared = match protocol {
            Protocol::Procedures => Prepared::Calls(Calls::prepare(&mut conn)?),
            Protocol::Statements => Prepared::Statements(Box::new(Statements::prepare(&mut conn)?)),
        };
        Ok(Terminal {
            conn,
            prepared,
            home,
            rand: Rand::new(seed),
            deck: Deck::of(w.mix.only),
        })
    }

    /// Runs transactions from `start` until `end` (or `stop`), counting into a tally with
    /// one New-Order slot per second, and counted New-Orders into `live` as they commit.
    fn run(
        &mut self,
        w: &Workload,
        (start, end): (Instant, Instant),
        stop: &AtomicBool,
        live: &AtomicU64,
    ) -> Result<Tally> {
        let seconds = (end.duration_since(start).as_secs() as usize).max(1);
        let mut tally = Tally {
            new_orders_per_second: vec![0; seconds],
            ..Tally::default()
        };
        while !stop.load(Ordering::Relaxed) && Instant::now() < end {
            let kind = self.deck.draw(&mut self.rand);
            let input = w.input(kind, &mut self.rand, self.home);
            let began = Instant::now();
            let mut attempt = 0;
            let (mut deadlocks, mut lock_waits) = (0, 0);
            let outcome = loop {
                attempt += 1;
                match self.prepared.execute(&mut self.conn, &input) {
                    Ok(o) => break o,
                    Err(e) => {
                        let _ = self.conn.query_drop("ROLLBACK");
                        let code = match &e {
                            TxnError::Sql(se) => server_code(se),
                            TxnError::Invalid(_) => None,
                        };
                        match code {
                            Some(ER_LOCK_DEADLOCK) => deadlocks += 1,
                            Some(ER_LOCK_WAIT_TIMEOUT) => lock_waits += 1,
                            _ => bail!("{} failed: {e} (input {input:?})", kind.name()),
                        }
                        if attempt >= MAX_ATTEMPTS {
                            bail!(
                                "{} failed {attempt} times in a row on deadlocks or lock \
                                 wait timeouts (last: {e}; input {input:?})",
                                kind.name()
                            );
                        }
                        if stop.load(Ordering::Relaxed) || Instant::now() >= end {
                            return Ok(tally);
                        }
                    }
                }
            };
            let done = Instant::now();
            if kind == Kind::NewOrder && outcome != Outcome::RolledBack {
                tally.acknowledged_new_orders += 1;
            }
            let k = tally.kind_mut(kind);
            k.deadlocks += deadlocks;
            k.lock_waits += lock_waits;
            if done > end {
                break;
            }
            k.completed += 1;
            k.latency
                .saturating_record(done.duration_since(began).as_micros() as u64);
            match outcome {
                Outcome::RolledBack => k.rolled_back += 1,
                Outcome::Committed { skipped } => {
                    k.skipped += skipped;
                    if kind == Kind::NewOrder {
                        live.fetch_add(1, Ordering::Relaxed);
                        // A commit at the very end counts in the last second.
                        let second =
                            (done.duration_since(start).as_secs() as usize).min(seconds - 1);
                        if let Some(slot) = tally.new_orders_per_second.get_mut(second) {
                            *slot += 1;
                        }
                    }
                }
            }
        }
        Ok(tally)
    }
}

/// Runs `terminals` terminals for `seconds` on `target` (terminal `t` at
/// [`Home::of_terminal`], its random inputs from `seed + t`), showing the elapsed seconds
/// and the New-Orders so far on `pb`. Fails on any error other than a retried deadlock or
/// lock wait timeout, naming the transaction and its input.
pub fn run(
    target: &Target,
    w: &Workload,
    terminals: u64,
    seconds: u64,
    seed: u64,
    pb: &ProgressBar,
) -> Result<(Tally, Duration)> {
    let mut opened = Vec::new();
    for t in 0..terminals {
        opened.push(
            Terminal::open(
                target,
                w,
                Home::of_terminal(t, w.warehouses),
                seed.wrapping_add(t),
            )
            .with_context(|| format!("opening terminal {t}"))?,
        );
    }
    let stop = AtomicBool::new(false);
    let new_orders = AtomicU64::new(0);
    let barrier = Barrier::new(opened.len() + 1);
    let (start, end) = {
        let now = Instant::now();
        (now, now + Duration::from_secs(seconds))
    };
    let tallies = thread::scope(|s| {
        let handles: Vec<_> = opened
            .into_iter()
            .map(|mut term| {
                let (stop, barrier, new_orders) = (&stop, &barrier, &new_orders);
                s.spawn(move || -> Result<Tally> {
                    barrier.wait();
                    let out = term.run(w, (start, end), stop, new_orders);
                    if out.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    out
                })
            })
            .collect();
        barrier.wait();
        pb.set_length(seconds);
        while Instant::now() < end && !stop.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_millis(250));
            let elapsed = start.elapsed();
            pb.set_position(elapsed.as_secs().min(seconds));
            pb.set_message(format!(
                "{:.0} NOPM so far",
                new_orders.load(Ordering::Relaxed) as f64 * 60.0 / elapsed.as_secs_f64().max(1.0)
            ));
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a terminal thread panicked")))
            })
            .collect::<Vec<_>>()
    });
    let elapsed = end.duration_since(start);
    let mut total = Tally::default();
    let mut first_error = None;
    for t in tallies {
        match t {
            Ok(t) => total.add(&t),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok((total, elapsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_add_up() {
        let mut a = Tally {
            new_orders_per_second: vec![1, 2],
            ..Tally::default()
        };
        a.kinds[0].completed = 10;
        a.kinds[0].rolled_back = 1;
        a.kinds[1].completed = 5;
        a.kinds[1].deadlocks = 2;
        a.kinds[0].latency.saturating_record(1500);
        let mut b = Tally {
            new_orders_per_second: vec![3, 4, 5],
            ..Tally::default()
        };
        b.kinds[0].completed = 4;
        b.kinds[3].lock_waits = 1;
        b.kinds[0].latency.saturating_record(3000);
        let mut t = Tally::default();
        t.add(&a);
        t.add(&b);
        assert_eq!(t.new_orders(), 13);
        assert_eq!(t.completed(), 19);
        assert_eq!(t.retries(), 3);
        assert_eq!(t.new_orders_per_second, vec![4, 6, 5]);
        let p50 = t.kind(Kind::NewOrder).latency_ms(0.5).unwrap();
        assert!((1.49..1.51).contains(&p50), "{p50}");
        assert_eq!(t.kind(Kind::StockLevel).latency_ms(0.5), None);
    }
}
