//! The insert benchmark's table and rows.
//!
//! One table per client (`pi1`, `pi2`, ...), as the insert benchmark's "one table per client"
//! form: the writers never wait for each other's row locks, so the phases measure the
//! engines' write paths, not lock contention.

use std::fmt::Write as _;

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

/// The secondary indexes l.x creates: name and column list.
pub const SECONDARY_INDEXES: [(&str, &str); 3] = [
    ("marketsegment", "price, customerid"),
    ("registersegment", "cashregisterid, price, customerid"),
    ("pdc", "price, dateandtime, customerid"),
];

/// Distinct cash registers, customers and products in the generated rows.
const CASH_REGISTERS: u32 = 1_000;
const CUSTOMERS: u32 = 100_000;
const PRODUCTS: u32 = 10_000;
/// Prices are whole cents in `[0, MAX_PRICE_CENTS)`.
const MAX_PRICE_CENTS: u32 = 50_000;
/// The `data` column: random letters, this many at least and at most.
const DATA_MIN: usize = 10;
const DATA_MAX: usize = 20;

/// The name of client `c`'s table (0-based `c`).
pub fn table(c: usize) -> String {
    format!("pi{}", c + 1)
}

/// `CREATE TABLE` of client `c`'s table in `engine`: the primary key only (l.i0 loads it so).
pub fn create_table(c: usize, engine: &str) -> String {
    format!(
        "CREATE TABLE {} (\
           transactionid BIGINT NOT NULL, \
           dateandtime DATETIME NOT NULL, \
           cashregisterid INT NOT NULL, \
           customerid INT NOT NULL, \
           productid INT NOT NULL, \
           price DECIMAL(10,2) NOT NULL, \
           data VARCHAR(4000), \
           PRIMARY KEY (transactionid)\
         ) ENGINE={engine}",
        table(c)
    )
}

/// `ALTER TABLE` adding the three secondary indexes to client `c`'s table in one statement.
pub fn add_indexes(c: usize) -> String {
    let adds = SECONDARY_INDEXES
        .iter()
        .map(|(name, cols)| format!("ADD INDEX {name} ({cols})"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("ALTER TABLE {} {adds}", table(c))
}

/// Makes rows: deterministic for a seed, so every engine gets the same data.
pub struct RowMaker {
    rng: StdRng,
}

impl RowMaker {
    /// A maker for client `client` of a run seeded with `seed`.
    pub fn new(seed: u64, client: usize) -> RowMaker {
        RowMaker {
            rng: StdRng::seed_from_u64(seed ^ (client as u64).wrapping_mul(0x9E37_79B9)),
        }
    }

    /// Appends the values tuple of the row with primary key `id` to `out` (no separator).
    pub fn push_row(&mut self, out: &mut String, id: u64) {
        let r = &mut self.rng;
        let cash = r.random_range(0..CASH_REGISTERS);
        let customer = r.random_range(0..CUSTOMERS);
        let product = r.random_range(0..PRODUCTS);
        let cents = r.random_range(0..MAX_PRICE_CENTS);
        let len = r.random_range(DATA_MIN..=DATA_MAX);
        let data: String = (0..len)
            .map(|_| char::from(b'a' + r.random_range(0..26u8)))
            .collect();
        let _ = write!(
            out,
            "({id}, NOW(), {cash}, {customer}, {product}, {}.{:02}, '{data}')",
            cents / 100,
            cents % 100
        );
    }

    /// `INSERT` of the rows with primary keys `first..first + n`.
    pub fn insert(&mut self, table: &str, first: u64, n: u64) -> String {
        let mut sql = format!("INSERT INTO {table} VALUES ");
        for i in 0..n {
            if i > 0 {
                sql.push_str(", ");
            }
            self.push_row(&mut sql, first + i);
        }
        sql
    }

    /// A range query of the qr phase: ten entries of one of the secondary indexes, read from
    /// the index alone (every selected column is in it), from a random start.
    pub fn range_query(&mut self, table: &str) -> String {
        let r = &mut self.rng;
        let cents = r.random_range(0..MAX_PRICE_CENTS);
        let price = format!("{}.{:02}", cents / 100, cents % 100);
        match r.random_range(0..3u8) {
            0 => format!(
                "SELECT price, customerid FROM {table} FORCE INDEX (marketsegment) \
                 WHERE price >= {price} ORDER BY price, customerid LIMIT 10"
            ),
            1 => format!(
                "SELECT cashregisterid, price, customerid FROM {table} \
                 FORCE INDEX (registersegment) WHERE cashregisterid >= {} \
                 ORDER BY cashregisterid, price, customerid LIMIT 10",
                r.random_range(0..CASH_REGISTERS)
            ),
            _ => format!(
                "SELECT price, dateandtime, customerid FROM {table} FORCE INDEX (pdc) \
                 WHERE price >= {price} ORDER BY price, dateandtime, customerid LIMIT 10"
            ),
        }
    }

    /// A uniform draw from `range` (for the point queries' keys).
    pub fn pick(&mut self, range: std::ops::Range<u64>) -> u64 {
        if range.is_empty() {
            range.start
        } else {
            self.rng.random_range(range)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_rows() {
        let a = RowMaker::new(7, 1).insert("pi2", 10, 3);
        let b = RowMaker::new(7, 1).insert("pi2", 10, 3);
        assert_eq!(a, b);
        assert!(a.starts_with("INSERT INTO pi2 VALUES (10, NOW(), "));
        assert_eq!(a.matches("NOW()").count(), 3);
        assert_ne!(a, RowMaker::new(7, 2).insert("pi2", 10, 3));
    }
}
