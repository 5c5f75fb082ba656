//! The five transactions as stored procedures, one `CALL` (one round trip) per transaction:
//! how HammerDB runs TPC-C on MySQL and MariaDB (its `NEWORD`, `PAYMENT`, `DELIVERY`,
//! `OSTAT` and `SLEV`), and so how TideSQL's published figures were measured. The client
//! sends the transaction's inputs; the procedure runs the same statements as
//! [`crate::txn`] (clauses 2.4.2 to 2.8.2) inside `START TRANSACTION` ... `COMMIT` and
//! ends with one result row for the driver. Without them ([`Protocol::Statements`]) every
//! statement is a round trip of its own (tpcc-mysql's way): about 60 per New-Order with
//! its share of the other four, whose cost in the server (network, context switches,
//! protocol) and in the driver is the same for every engine and hides the engines'
//! differences on a 2-core machine.
//!
//! An invariant the transaction relies on that the database breaks (a customer name without
//! customers, a new order the DELETE did not remove, ...) raises `SQLSTATE 45000` with what
//! and where; the driver fails the run on it, as on [`crate::txn::TxnError::Invalid`].

use anyhow::{Context as _, Result, bail};
use mysql::prelude::Queryable as _;
use mysql::{Conn, Statement};

use crate::mix::{Customer, Input, NewOrder};
use crate::random::cents_text;
use crate::txn::{Outcome, Txn, TxnError};

/// How a terminal sends its transactions to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// One `CALL` of a stored procedure per transaction (HammerDB's way; the default).
    Procedures,
    /// One prepared statement per step, each a round trip (tpcc-mysql's way,
    /// `--client-statements`).
    Statements,
}

impl Protocol {
    /// How the reports describe it.
    pub fn text(self) -> &'static str {
        match self {
            Protocol::Procedures => {
                "each transaction one CALL of a stored procedure (HammerDB's way)"
            }
            Protocol::Statements => {
                "each statement a round trip of its own (tpcc-mysql's way, \
                 `--client-statements`)"
            }
        }
    }
}

/// The width of one New-Order line in the procedure's `line_data` argument: OL_I_ID in 6
/// digits, OL_SUPPLY_W_ID in 5, OL_QUANTITY in 2.
const LINE_WIDTH: usize = 13;

/// `CREATE PROCEDURE` statements of the five transactions and of the customer lookup by
/// last name that Payment and Order-Status share (run once per database).
pub const CREATE: [&str; 6] = [
    // New-Order (clause 2.4.2). `line_data`: the order's lines, LINE_WIDTH characters each.
    // Result: 1 when the order rolled back on its unused item (clause 2.4.2.3), else 0.
    "CREATE PROCEDURE tpcc_new_order(IN w INT, IN d INT, IN c INT, IN all_local INT, \
       IN line_data VARCHAR(255))
     order_body: BEGIN
       DECLARE n INT DEFAULT CHAR_LENGTH(line_data) DIV 13;
       DECLARE k INT DEFAULT 0;
       DECLARE o INT;
       DECLARE item INT; DECLARE supply INT; DECLARE q INT;
       DECLARE discount DECIMAL(4,4); DECLARE c_last_ VARCHAR(16); DECLARE credit CHAR(2);
       DECLARE w_tax_ DECIMAL(4,4); DECLARE d_tax_ DECIMAL(4,4);
       DECLARE price DECIMAL(5,2); DECLARE i_name_ VARCHAR(24); DECLARE i_data_ VARCHAR(50);
       DECLARE quantity INT; DECLARE s_data_ VARCHAR(50); DECLARE dist CHAR(24);
       DECLARE msg VARCHAR(128);
       START TRANSACTION;
       SELECT c_discount, c_last, c_credit INTO discount, c_last_, credit FROM customer
         WHERE c_w_id = w AND c_d_id = d AND c_id = c;
       IF c_last_ IS NULL THEN
         SET msg = CONCAT('New-Order: no customer (', w, ', ', d, ', ', c, ')');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       SELECT w_tax INTO w_tax_ FROM warehouse WHERE w_id = w;
       SELECT d_next_o_id, d_tax INTO o, d_tax_ FROM district WHERE d_w_id = w AND d_id = d
         FOR UPDATE;
       IF o IS NULL THEN
         SET msg = CONCAT('New-Order: no district (', w, ', ', d, ')');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       UPDATE district SET d_next_o_id = o + 1 WHERE d_w_id = w AND d_id = d;
       INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
         o_all_local) VALUES (o, d, w, c, NOW(), NULL, n, all_local);
       INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (o, d, w);
       WHILE k < n DO
         SET item = SUBSTRING(line_data, k * 13 + 1, 6) + 0;
         SET supply = SUBSTRING(line_data, k * 13 + 7, 5) + 0;
         SET q = SUBSTRING(line_data, k * 13 + 12, 2) + 0;
         SET price = NULL;
         SELECT i_price, i_name, i_data INTO price, i_name_, i_data_ FROM item
           WHERE i_id = item;
         IF price IS NULL THEN
           ROLLBACK;
           SELECT 1;
           LEAVE order_body;
         END IF;
         SET quantity = NULL;
         SELECT s_quantity, s_data, ELT(d, s_dist_01, s_dist_02, s_dist_03, s_dist_04,
           s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10)
           INTO quantity, s_data_, dist FROM stock WHERE s_w_id = supply AND s_i_id = item
           FOR UPDATE;
         IF quantity IS NULL THEN
           SET msg = CONCAT('New-Order: no stock (', supply, ', ', item, ')');
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
         END IF;
         UPDATE stock SET s_quantity = IF(quantity - q >= 10, quantity - q,
           quantity - q + 91), s_ytd = s_ytd + q, s_order_cnt = s_order_cnt + 1,
           s_remote_cnt = s_remote_cnt + (supply <> w) WHERE s_w_id = supply AND s_i_id = item;
         INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,
           ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
           VALUES (o, d, w, k + 1, item, supply, NULL, q, q * price, dist);
         SET k = k + 1;
       END WHILE;
       COMMIT;
       SELECT 0;
     END",
    // Payment (clause 2.5.2). `c_in` is 0 when the customer is chosen by `c_last_in`.
    "CREATE PROCEDURE tpcc_payment(IN w INT, IN d INT, IN cw INT, IN cd INT, IN c_in INT, \
       IN c_last_in VARCHAR(16), IN amount DECIMAL(6,2))
     BEGIN
       DECLARE c INT DEFAULT c_in;
       DECLARE w_name_ VARCHAR(10); DECLARE d_name_ VARCHAR(10);
       DECLARE street_1 VARCHAR(20); DECLARE street_2 VARCHAR(20); DECLARE city VARCHAR(20);
       DECLARE state CHAR(2); DECLARE zip CHAR(9);
       DECLARE first_ VARCHAR(16); DECLARE middle_ CHAR(2); DECLARE last_ VARCHAR(16);
       DECLARE phone CHAR(16); DECLARE since DATETIME; DECLARE credit CHAR(2);
       DECLARE credit_lim DECIMAL(12,2); DECLARE discount DECIMAL(4,4);
       DECLARE balance DECIMAL(12,2);
       DECLARE msg VARCHAR(128);
       START TRANSACTION;
       UPDATE warehouse SET w_ytd = w_ytd + amount WHERE w_id = w;
       SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
         INTO w_name_, street_1, street_2, city, state, zip FROM warehouse WHERE w_id = w;
       IF w_name_ IS NULL THEN
         SET msg = CONCAT('Payment: no warehouse ', w);
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       UPDATE district SET d_ytd = d_ytd + amount WHERE d_w_id = w AND d_id = d;
       SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
         INTO d_name_, street_1, street_2, city, state, zip FROM district
         WHERE d_w_id = w AND d_id = d;
       IF d_name_ IS NULL THEN
         SET msg = CONCAT('Payment: no district (', w, ', ', d, ')');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       IF c = 0 THEN
         CALL tpcc_customer_by_last(cw, cd, c_last_in, 'Payment', c);
       END IF;
       SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
         c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since
         INTO first_, middle_, last_, street_1, street_2, city, state, zip, phone, credit,
         credit_lim, discount, balance, since
         FROM customer WHERE c_w_id = cw AND c_d_id = cd AND c_id = c FOR UPDATE;
       IF credit IS NULL THEN
         SET msg = CONCAT('Payment: no customer (', cw, ', ', cd, ', ', c, ')');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       IF credit = 'BC' THEN
         UPDATE customer SET c_balance = c_balance - amount,
           c_ytd_payment = c_ytd_payment + amount, c_payment_cnt = c_payment_cnt + 1,
           c_data = SUBSTRING(CONCAT(c, ' ', cd, ' ', cw, ' ', d, ' ', w, ' ', amount, ' | ',
             c_data), 1, 500)
           WHERE c_w_id = cw AND c_d_id = cd AND c_id = c;
       ELSE
         UPDATE customer SET c_balance = c_balance - amount,
           c_ytd_payment = c_ytd_payment + amount, c_payment_cnt = c_payment_cnt + 1
           WHERE c_w_id = cw AND c_d_id = cd AND c_id = c;
       END IF;
       INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount,
         h_data) VALUES (c, cd, cw, d, w, NOW(), amount, CONCAT(w_name_, '    ', d_name_));
       COMMIT;
       SELECT 0;
     END",
    // The middle customer (rounded up) of those named `c_last_in`, by C_FIRST (clause 2.5.2.2).
    "CREATE PROCEDURE tpcc_customer_by_last(IN w INT, IN d INT, IN c_last_in VARCHAR(16), \
       IN what VARCHAR(16), OUT c INT)
     BEGIN
       DECLARE n INT;
       DECLARE middle INT;
       DECLARE msg VARCHAR(128);
       SELECT COUNT(*) INTO n FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = c_last_in;
       IF n = 0 THEN
         SET msg = CONCAT(what, ': no customer named ', c_last_in, ' in warehouse ', w,
           ' district ', d);
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       SET middle = (n - 1) DIV 2;
       SELECT c_id INTO c FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = c_last_in
         ORDER BY c_first LIMIT middle, 1;
     END",
    // Order-Status (clause 2.6.2): the customer, its newest order and that order's lines.
    "CREATE PROCEDURE tpcc_order_status(IN w INT, IN d INT, IN c_in INT, IN c_last_in VARCHAR(16))
     BEGIN
       DECLARE c INT DEFAULT c_in;
       DECLARE balance DECIMAL(12,2); DECLARE first_ VARCHAR(16); DECLARE middle_ CHAR(2);
       DECLARE last_ VARCHAR(16);
       DECLARE o INT; DECLARE carrier INT; DECLARE entry DATETIME;
       DECLARE item INT; DECLARE supply INT; DECLARE q INT; DECLARE amount DECIMAL(6,2);
       DECLARE delivered DATETIME;
       DECLARE line_count INT DEFAULT 0;
       DECLARE done INT DEFAULT 0;
       DECLARE msg VARCHAR(128);
       DECLARE order_lines CURSOR FOR SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount,
         ol_delivery_d FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
       DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1;
       START TRANSACTION;
       IF c = 0 THEN
         CALL tpcc_customer_by_last(w, d, c_last_in, 'Order-Status', c);
       END IF;
       SELECT c_balance, c_first, c_middle, c_last INTO balance, first_, middle_, last_
         FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
       IF last_ IS NULL THEN
         SET msg = CONCAT('Order-Status: no customer (', w, ', ', d, ', ', c, ')');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       SELECT o_id, o_carrier_id, o_entry_d INTO o, carrier, entry FROM orders
         WHERE o_w_id = w AND o_d_id = d AND o_c_id = c ORDER BY o_id DESC LIMIT 1;
       IF o IS NULL THEN
         SET msg = CONCAT('Order-Status: customer (', w, ', ', d, ', ', c, ') has no order');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       SET done = 0;
       OPEN order_lines;
       fetch_lines: LOOP
         FETCH order_lines INTO item, supply, q, amount, delivered;
         IF done THEN
           LEAVE fetch_lines;
         END IF;
         SET line_count = line_count + 1;
       END LOOP;
       CLOSE order_lines;
       IF line_count = 0 THEN
         SET msg = CONCAT('Order-Status: order (', w, ', ', d, ', ', o, ') has no lines');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       COMMIT;
       SELECT 0;
     END",
    // Delivery (clause 2.7.4), all ten districts in one transaction. Result: the districts
    // that had no order to deliver.
    "CREATE PROCEDURE tpcc_delivery(IN w INT, IN carrier INT)
     BEGIN
       DECLARE d INT DEFAULT 1;
       DECLARE o INT; DECLARE c INT; DECLARE total DECIMAL(12,2);
       DECLARE skipped INT DEFAULT 0;
       DECLARE msg VARCHAR(160);
       START TRANSACTION;
       WHILE d <= 10 DO
         SET o = NULL;
         SELECT no_o_id INTO o FROM new_orders WHERE no_w_id = w AND no_d_id = d
           ORDER BY no_o_id LIMIT 1 FOR UPDATE;
         IF o IS NULL THEN
           SET skipped = skipped + 1;
         ELSE
           DELETE FROM new_orders WHERE no_w_id = w AND no_d_id = d AND no_o_id = o;
           IF ROW_COUNT() <> 1 THEN
             SET msg = CONCAT('Delivery: DELETE of new order (', w, ', ', d, ', ', o,
               '), found and locked by SELECT ... FOR UPDATE, removed ', ROW_COUNT(), ' rows');
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
           END IF;
           SET c = NULL;
           SELECT o_c_id INTO c FROM orders WHERE o_w_id = w AND o_d_id = d AND o_id = o;
           IF c IS NULL THEN
             SET msg = CONCAT('Delivery: new order (', w, ', ', d, ', ', o, ') has no order');
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
           END IF;
           UPDATE orders SET o_carrier_id = carrier WHERE o_w_id = w AND o_d_id = d
             AND o_id = o;
           UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = w AND ol_d_id = d
             AND ol_o_id = o;
           SET total = NULL;
           SELECT SUM(ol_amount) INTO total FROM order_line WHERE ol_w_id = w
             AND ol_d_id = d AND ol_o_id = o;
           IF total IS NULL THEN
             SET msg = CONCAT('Delivery: order (', w, ', ', d, ', ', o, ') has no lines');
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
           END IF;
           UPDATE customer SET c_balance = c_balance + total,
             c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = w AND c_d_id = d AND c_id = c;
         END IF;
         SET d = d + 1;
       END WHILE;
       COMMIT;
       SELECT skipped;
     END",
    // Stock-Level (clause 2.8.2).
    "CREATE PROCEDURE tpcc_stock_level(IN w INT, IN d INT, IN threshold INT)
     BEGIN
       DECLARE next_o INT;
       DECLARE low INT;
       DECLARE msg VARCHAR(128);
       START TRANSACTION;
       SELECT d_next_o_id INTO next_o FROM district WHERE d_w_id = w AND d_id = d;
       IF next_o IS NULL THEN
         SET msg = CONCAT('Stock-Level: no district (', w, ', ', d, ')');
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
       END IF;
       SELECT COUNT(DISTINCT s_i_id) INTO low FROM order_line JOIN stock ON s_w_id = w
         AND s_i_id = ol_i_id WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id < next_o
         AND ol_o_id >= next_o - 20 AND s_quantity < threshold;
       COMMIT;
       SELECT 0;
     END",
];

/// Creates the procedures in the connection's database.
pub fn create(conn: &mut Conn) -> Result<()> {
    for sql in CREATE {
        conn.query_drop(sql)
            .with_context(|| format!("creating a procedure: `{}`", first_line(sql)))?;
    }
    Ok(())
}

fn first_line(sql: &str) -> &str {
    sql.lines().next().unwrap_or(sql)
}

/// The prepared `CALL`s of one connection.
pub struct Calls {
    new_order: Statement,
    payment: Statement,
    order_status: Statement,
    delivery: Statement,
    stock_level: Statement,
}

impl Calls {
    /// Prepares the five `CALL`s on `conn`.
    pub fn prepare(conn: &mut Conn) -> Result<Calls> {
        let mut p = |sql: &str| crate::db::prepare(conn, sql);
        Ok(Calls {
            new_order: p("CALL tpcc_new_order(?, ?, ?, ?, ?)")?,
            payment: p("CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?)")?,
            order_status: p("CALL tpcc_order_status(?, ?, ?, ?)")?,
            delivery: p("CALL tpcc_delivery(?, ?)")?,
            stock_level: p("CALL tpcc_stock_level(?, ?, ?)")?,
        })
    }
}

/// New-Order's `line_data` argument: LINE_WIDTH digits per line.
pub fn encode_lines(order: &NewOrder) -> Result<String> {
    let mut s = String::with_capacity(order.lines.len() * LINE_WIDTH);
    for l in &order.lines {
        if l.i_id > 999_999 || l.supply_w_id > 99_999 || l.quantity > 99 {
            bail!("New-Order line {l:?} does not fit the procedure's fixed-width lines");
        }
        s.push_str(&format!(
            "{:06}{:05}{:02}",
            l.i_id, l.supply_w_id, l.quantity
        ));
    }
    Ok(s)
}

/// The customer as the procedures take it: (C_ID or 0, C_LAST or '').
fn customer_args(c: &Customer) -> (u64, &str) {
    match c {
        Customer::Id(id) => (*id, ""),
        Customer::Last(last) => (0, last.as_str()),
    }
}

/// Runs `input` as one `CALL`; on an error the caller rolls back.
pub fn execute(conn: &mut Conn, calls: &Calls, input: &Input) -> Txn<Outcome> {
    let result: Option<u64> = match input {
        Input::NewOrder(i) => {
            let lines = encode_lines(i).map_err(|e| TxnError::Invalid(e.to_string()))?;
            let r = conn.exec_first(
                &calls.new_order,
                (i.w_id, i.d_id, i.c_id, u64::from(i.all_local()), lines),
            )?;
            return match r {
                Some(1u64) => Ok(Outcome::RolledBack),
                Some(0) => Ok(Outcome::Committed { skipped: 0 }),
                other => Err(TxnError::Invalid(format!(
                    "New-Order: the procedure returned {other:?}"
                ))),
            };
        }
        Input::Payment(i) => {
            let (c, last) = customer_args(&i.customer);
            conn.exec_first(
                &calls.payment,
                (
                    i.w_id,
                    i.d_id,
                    i.c_w_id,
                    i.c_d_id,
                    c,
                    last,
                    cents_text(i.amount_cents),
                ),
            )?
        }
        Input::OrderStatus(i) => {
            let (c, last) = customer_args(&i.customer);
            conn.exec_first(&calls.order_status, (i.w_id, i.d_id, c, last))?
        }
        Input::Delivery(i) => conn.exec_first(&calls.delivery, (i.w_id, i.carrier))?,
        Input::StockLevel(i) => {
            conn.exec_first(&calls.stock_level, (i.w_id, i.d_id, i.threshold))?
        }
    };
    match (input, result) {
        (Input::Delivery(_), Some(skipped)) => Ok(Outcome::Committed { skipped }),
        (_, Some(0)) => Ok(Outcome::Committed { skipped: 0 }),
        (_, other) => Err(TxnError::Invalid(format!(
            "the procedure returned {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::Line;

    #[test]
    fn lines_are_fixed_width() {
        let order = NewOrder {
            w_id: 3,
            d_id: 2,
            c_id: 7,
            lines: vec![
                Line {
                    i_id: 100_001,
                    supply_w_id: 12,
                    quantity: 10,
                },
                Line {
                    i_id: 5,
                    supply_w_id: 3,
                    quantity: 1,
                },
            ],
        };
        let s = encode_lines(&order).unwrap();
        assert_eq!(s, "10000100012100000050000301");
        assert_eq!(s.len(), 2 * LINE_WIDTH);
    }

    #[test]
    fn a_line_too_wide_is_refused() {
        let order = NewOrder {
            w_id: 1,
            d_id: 1,
            c_id: 1,
            lines: vec![Line {
                i_id: 1,
                supply_w_id: 100_000,
                quantity: 1,
            }],
        };
        assert!(encode_lines(&order).is_err());
    }
}
