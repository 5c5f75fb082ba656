//! The five transactions' inputs (TPC-C clauses 2.4.1 to 2.8.1) and the mix they are drawn
//! in: which terminal asks for what, with which share of remote warehouses, customers by
//! last name and rolled-back New-Orders. Pure: only the random source decides.

use crate::random::{A_C_ID, A_C_LAST, A_OL_I_ID, Constants, Rand, last_name};
use crate::schema::{CUSTOMERS, DISTRICTS, ITEMS};

/// The five transaction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// New-Order (clause 2.4).
    NewOrder,
    /// Payment (clause 2.5).
    Payment,
    /// Order-Status (clause 2.6).
    OrderStatus,
    /// Delivery (clause 2.7).
    Delivery,
    /// Stock-Level (clause 2.8).
    StockLevel,
}

impl Kind {
    /// All five, in report order.
    pub const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "New-Order",
            Kind::Payment => "Payment",
            Kind::OrderStatus => "Order-Status",
            Kind::Delivery => "Delivery",
            Kind::StockLevel => "Stock-Level",
        }
    }

    /// Cards of this kind in a deck of 100: the standard mix (New-Order 45, Payment 43,
    /// Order-Status, Delivery and Stock-Level 4 each; clause 5.2.3 sets the minimums of the
    /// last four).
    pub fn cards(self) -> usize {
        match self {
            Kind::NewOrder => 45,
            Kind::Payment => 43,
            Kind::OrderStatus | Kind::Delivery | Kind::StockLevel => 4,
        }
    }
}

/// A shuffled deck of 100 cards in the standard mix, reshuffled when drawn through, so
/// every 100 transactions of a terminal hold exactly the mix (clause 5.2.4.2).
pub struct Deck {
    cards: Vec<Kind>,
    next: usize,
}

impl Deck {
    /// A new deck (shuffled at the first draw).
    pub fn new() -> Deck {
        let cards: Vec<Kind> = Kind::ALL
            .iter()
            .flat_map(|k| std::iter::repeat_n(*k, k.cards()))
            .collect();
        let next = cards.len();
        Deck { cards, next }
    }

    /// The standard deck, or with `only` a deck of that type alone (`--only`: a diagnostic
    /// run that measures one type's cost, not TPC-C's mix).
    pub fn of(only: Option<Kind>) -> Deck {
        match only {
            None => Deck::new(),
            Some(k) => Deck {
                cards: vec![k; 100],
                next: 100,
            },
        }
    }

    /// The next transaction type.
    pub fn draw(&mut self, r: &mut Rand) -> Kind {
        if self.next >= self.cards.len() {
            r.shuffle(&mut self.cards);
            self.next = 0;
        }
        let k = self.cards.get(self.next).copied().unwrap_or(Kind::NewOrder);
        self.next += 1;
        k
    }
}

impl Default for Deck {
    fn default() -> Deck {
        Deck::new()
    }
}

/// The shares that decide the transactions' inputs, in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    /// Order lines supplied by another warehouse (the 15; the specification's 1).
    pub remote_line_pct: u32,
    /// Payments for a customer of another warehouse (the 1; the specification's 15).
    pub remote_payment_pct: u32,
    /// Payments and Order-Status that find the customer by last name (60).
    pub by_name_pct: u32,
    /// New-Orders that name an unused item on their last line and roll back (1).
    pub rollback_pct: u32,
    /// Only this transaction type (`--only`, a diagnostic run); `None`: the standard mix.
    pub only: Option<Kind>,
}

impl Default for Mix {
    fn default() -> Mix {
        Mix {
            remote_line_pct: 15,
            remote_payment_pct: 1,
            by_name_pct: 60,
            rollback_pct: 1,
            only: None,
        }
    }
}

/// A terminal's fixed place: its home warehouse (every transaction's with
/// `--home-warehouses`; by default each transaction draws its own) and its district
/// (Stock-Level's; clause 2.8.1.1: one terminal per district of a warehouse).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Home {
    /// W_ID.
    pub w_id: u64,
    /// D_ID of Stock-Level.
    pub d_id: u64,
}

impl Home {
    /// Terminal `t` (from 0) of a database of `warehouses`: warehouses round-robin, so every
    /// warehouse gets a terminal before any gets two, as HammerDB assigns them; districts
    /// 1, 2, ... for the terminals that share a warehouse.
    pub fn of_terminal(t: u64, warehouses: u64) -> Home {
        let w = warehouses.max(1);
        Home {
            w_id: t % w + 1,
            d_id: (t / w) % DISTRICTS + 1,
        }
    }
}

/// How a transaction names its customer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Customer {
    /// By C_ID.
    Id(u64),
    /// By C_LAST: the middle one (rounded up) of those of that name, by C_FIRST.
    Last(String),
}

/// One line of a New-Order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// OL_I_ID (above [`ITEMS`] for the unused item of a rolled-back order).
    pub i_id: u64,
    /// OL_SUPPLY_W_ID.
    pub supply_w_id: u64,
    /// OL_QUANTITY, 1 to 10.
    pub quantity: u64,
}

/// New-Order's input (clause 2.4.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOrder {
    /// W_ID (home).
    pub w_id: u64,
    /// D_ID, uniform in 1..=10.
    pub d_id: u64,
    /// C_ID, NURand(1023, 1, 3000).
    pub c_id: u64,
    /// 5 to 15 lines.
    pub lines: Vec<Line>,
}

impl NewOrder {
    /// Whether every line is supplied by the home warehouse (O_ALL_LOCAL).
    pub fn all_local(&self) -> bool {
        self.lines.iter().all(|l| l.supply_w_id == self.w_id)
    }
}

/// Payment's input (clause 2.5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    /// W_ID (home).
    pub w_id: u64,
    /// D_ID, uniform in 1..=10.
    pub d_id: u64,
    /// C_W_ID: the home warehouse, or another for a remote payment.
    pub c_w_id: u64,
    /// C_D_ID: D_ID, or uniform for a remote payment.
    pub c_d_id: u64,
    /// The customer.
    pub customer: Customer,
    /// H_AMOUNT in hundredths, 1.00 to 5,000.00.
    pub amount_cents: i64,
}

/// Order-Status's input (clause 2.6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderStatus {
    /// W_ID (home).
    pub w_id: u64,
    /// D_ID, uniform in 1..=10.
    pub d_id: u64,
    /// The customer.
    pub customer: Customer,
}

/// Delivery's input (clause 2.7.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// W_ID (home).
    pub w_id: u64,
    /// O_CARRIER_ID, uniform in 1..=10.
    pub carrier: u64,
}

/// Stock-Level's input (clause 2.8.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StockLevel {
    /// W_ID (home).
    pub w_id: u64,
    /// D_ID (the terminal's).
    pub d_id: u64,
    /// The threshold, uniform in 10..=20.
    pub threshold: u64,
}

/// One transaction's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// New-Order.
    NewOrder(NewOrder),
    /// Payment.
    Payment(Payment),
    /// Order-Status.
    OrderStatus(OrderStatus),
    /// Delivery.
    Delivery(Delivery),
    /// Stock-Level.
    StockLevel(StockLevel),
}

/// What every terminal's inputs depend on.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// Warehouses in the database.
    pub warehouses: u64,
    /// The shares.
    pub mix: Mix,
    /// NURand's constants of the run.
    pub constants: Constants,
    /// HammerDB's "use all warehouses": each transaction's warehouse drawn uniformly from
    /// all of them instead of the terminal's home (so few terminals still touch all the
    /// data; Stock-Level keeps the terminal's district).
    pub all_warehouses: bool,
    /// How the terminals send each transaction.
    pub protocol: crate::procedures::Protocol,
}

impl Workload {
    /// A warehouse other than `w_id`, uniform (`w_id` itself when there is only one).
    fn other_warehouse(&self, r: &mut Rand, w_id: u64) -> u64 {
        if self.warehouses < 2 {
            return w_id;
        }
        let o = r.uniform(1, self.warehouses - 1);
        if o >= w_id { o + 1 } else { o }
    }

    fn customer(&self, r: &mut Rand) -> Customer {
        if r.percent(self.mix.by_name_pct) {
            Customer::Last(last_name(r.nurand(A_C_LAST, 0, 999, self.constants.c_last)))
        } else {
            Customer::Id(r.nurand(A_C_ID, 1, CUSTOMERS, self.constants.c_id))
        }
    }

    /// The input of a `kind` transaction of the terminal at `home`.
    pub fn input(&self, kind: Kind, r: &mut Rand, home: Home) -> Input {
        let w_id = if self.all_warehouses {
            r.uniform(1, self.warehouses.max(1))
        } else {
            home.w_id
        };
        match kind {
            Kind::NewOrder => {
                let d_id = r.uniform(1, DISTRICTS);
                let c_id = r.nurand(A_C_ID, 1, CUSTOMERS, self.constants.c_id);
                let count = r.uniform(5, 15);
                let rollback = r.percent(self.mix.rollback_pct);
                let lines = (1..=count)
                    .map(|n| {
                        let i_id = if rollback && n == count {
                            ITEMS + 1
                        } else {
                            r.nurand(A_OL_I_ID, 1, ITEMS, self.constants.ol_i_id)
                        };
                        let supply_w_id = if r.percent(self.mix.remote_line_pct) {
                            self.other_warehouse(r, w_id)
                        } else {
                            w_id
                        };
                        Line {
                            i_id,
                            supply_w_id,
                            quantity: r.uniform(1, 10),
                        }
                    })
                    .collect();
                Input::NewOrder(NewOrder {
                    w_id,
                    d_id,
                    c_id,
                    lines,
                })
            }
            Kind::Payment => {
                let d_id = r.uniform(1, DISTRICTS);
                let (c_w_id, c_d_id) =
                    if self.warehouses > 1 && r.percent(self.mix.remote_payment_pct) {
                        (self.other_warehouse(r, w_id), r.uniform(1, DISTRICTS))
                    } else {
                        (w_id, d_id)
                    };
                Input::Payment(Payment {
                    w_id,
                    d_id,
                    c_w_id,
                    c_d_id,
                    customer: self.customer(r),
                    amount_cents: r.uniform(100, 500_000) as i64,
                })
            }
            Kind::OrderStatus => Input::OrderStatus(OrderStatus {
                w_id,
                d_id: r.uniform(1, DISTRICTS),
                customer: self.customer(r),
            }),
            Kind::Delivery => Input::Delivery(Delivery {
                w_id,
                carrier: r.uniform(1, 10),
            }),
            Kind::StockLevel => Input::StockLevel(StockLevel {
                w_id,
                d_id: home.d_id,
                threshold: r.uniform(10, 20),
            }),
        }
    }
}

/// The position (from 0) of the customer a by-name lookup takes among `n` customers of
/// that name sorted by C_FIRST: position n/2 rounded up, counting from 1 (clause 2.5.2.2).
pub fn middle(n: usize) -> usize {
    n.saturating_sub(1) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(warehouses: u64) -> Workload {
        let mut r = Rand::new(5);
        let load = Constants::load(&mut r);
        Workload {
            warehouses,
            mix: Mix::default(),
            constants: Constants::run(&load, &mut r),
            all_warehouses: false,
            protocol: crate::procedures::Protocol::Procedures,
        }
    }

    #[test]
    fn every_hundred_cards_hold_the_standard_mix() {
        let mut r = Rand::new(1);
        let mut deck = Deck::new();
        for _ in 0..3 {
            let mut counts = [0usize; 5];
            for _ in 0..100 {
                let k = deck.draw(&mut r);
                counts[Kind::ALL.iter().position(|x| *x == k).unwrap()] += 1;
            }
            assert_eq!(counts, [45, 43, 4, 4, 4]);
        }
    }

    #[test]
    fn a_deck_of_one_type_draws_only_it() {
        let mut r = Rand::new(1);
        let mut deck = Deck::of(Some(Kind::StockLevel));
        assert!((0..250).all(|_| deck.draw(&mut r) == Kind::StockLevel));
        let mut standard = Deck::of(None);
        let drawn: Vec<Kind> = (0..100).map(|_| standard.draw(&mut r)).collect();
        assert_eq!(drawn.iter().filter(|k| **k == Kind::Payment).count(), 43);
    }

    #[test]
    fn terminals_spread_over_warehouses_then_districts() {
        assert_eq!(Home::of_terminal(0, 4), Home { w_id: 1, d_id: 1 });
        assert_eq!(Home::of_terminal(3, 4), Home { w_id: 4, d_id: 1 });
        assert_eq!(Home::of_terminal(4, 4), Home { w_id: 1, d_id: 2 });
        assert_eq!(Home::of_terminal(5, 2), Home { w_id: 2, d_id: 3 });
        assert_eq!(Home::of_terminal(20, 2), Home { w_id: 1, d_id: 1 });
    }

    #[test]
    fn middle_rounds_up() {
        assert_eq!(middle(1), 0);
        assert_eq!(middle(2), 0);
        assert_eq!(middle(3), 1);
        assert_eq!(middle(4), 1);
        assert_eq!(middle(5), 2);
    }

    #[test]
    fn shares_of_remote_lines_by_name_and_rollbacks() {
        let w = workload(10);
        let mut r = Rand::new(2);
        let home = Home { w_id: 3, d_id: 7 };
        let (mut lines, mut remote, mut orders, mut rollbacks) = (0u64, 0u64, 0u64, 0u64);
        let (mut payments, mut remote_pay, mut by_name) = (0u64, 0u64, 0u64);
        for _ in 0..100_000 {
            match w.input(Kind::NewOrder, &mut r, home) {
                Input::NewOrder(no) => {
                    orders += 1;
                    assert!((5..=15).contains(&no.lines.len()));
                    assert!((1..=3000).contains(&no.c_id) && (1..=10).contains(&no.d_id));
                    if no.lines.last().is_some_and(|l| l.i_id > ITEMS) {
                        rollbacks += 1;
                    }
                    for (i, l) in no.lines.iter().enumerate() {
                        lines += 1;
                        assert!((1..=10).contains(&l.quantity));
                        assert!(l.i_id <= ITEMS || i + 1 == no.lines.len());
                        if l.supply_w_id != home.w_id {
                            remote += 1;
                            assert!((1..=10).contains(&l.supply_w_id));
                        }
                    }
                    assert_eq!(no.all_local(), no.lines.iter().all(|l| l.supply_w_id == 3));
                }
                other => panic!("{other:?}"),
            }
            match w.input(Kind::Payment, &mut r, home) {
                Input::Payment(p) => {
                    payments += 1;
                    assert!((100..=500_000).contains(&p.amount_cents));
                    if p.c_w_id != p.w_id {
                        remote_pay += 1;
                    } else {
                        assert_eq!(p.c_d_id, p.d_id);
                    }
                    if matches!(p.customer, Customer::Last(_)) {
                        by_name += 1;
                    }
                }
                other => panic!("{other:?}"),
            }
        }
        let pct = |a: u64, b: u64| a as f64 * 100.0 / b as f64;
        assert!(
            (14.5..15.5).contains(&pct(remote, lines)),
            "{}",
            pct(remote, lines)
        );
        assert!((0.8..1.2).contains(&pct(rollbacks, orders)));
        assert!((0.8..1.2).contains(&pct(remote_pay, payments)));
        assert!((59.0..61.0).contains(&pct(by_name, payments)));
    }

    #[test]
    fn all_warehouses_spreads_every_terminal() {
        let w = Workload {
            all_warehouses: true,
            protocol: crate::procedures::Protocol::Procedures,
            ..workload(10)
        };
        let mut r = Rand::new(4);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            if let Input::Delivery(d) = w.input(Kind::Delivery, &mut r, Home::of_terminal(0, 10)) {
                seen[d.w_id as usize - 1] = true;
            }
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn one_warehouse_has_no_remote_anything() {
        let w = workload(1);
        let mut r = Rand::new(3);
        let home = Home::of_terminal(0, 1);
        for _ in 0..1000 {
            if let Input::NewOrder(no) = w.input(Kind::NewOrder, &mut r, home) {
                assert!(no.all_local());
            }
            if let Input::Payment(p) = w.input(Kind::Payment, &mut r, home) {
                assert_eq!((p.c_w_id, p.c_d_id), (1, p.d_id));
            }
            if let Input::StockLevel(s) = w.input(Kind::StockLevel, &mut r, home) {
                assert!((10..=20).contains(&s.threshold) && s.d_id == 1);
            }
        }
    }
}
