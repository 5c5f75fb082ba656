//! The five transactions as SQL over prepared statements (the statements of tpcc-mysql and
//! HammerDB, one per step of clauses 2.4.2 to 2.8.2), each in one transaction.

use anyhow::Result;
use mysql::prelude::Queryable as _;
use mysql::{Conn, Row, Statement};

use crate::mix::{Customer, Delivery, Input, NewOrder, OrderStatus, Payment, StockLevel, middle};
use crate::random::{cents_text, parse_cents};
use crate::schema::DISTRICTS;

/// Why a transaction did not commit.
#[derive(Debug)]
pub enum TxnError {
    /// The server returned an error (a deadlock or lock wait timeout is retried).
    Sql(mysql::Error),
    /// The database broke one of TPC-C's invariants the transaction relies on (a customer
    /// name without customers, a locked new order the DELETE did not find, ...).
    Invalid(String),
}

impl From<mysql::Error> for TxnError {
    fn from(e: mysql::Error) -> TxnError {
        TxnError::Sql(e)
    }
}

impl std::fmt::Display for TxnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TxnError::Sql(e) => write!(f, "{e}"),
            TxnError::Invalid(m) => write!(f, "{m}"),
        }
    }
}

/// A transaction's result.
pub type Txn<T> = std::result::Result<T, TxnError>;

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Committed. For Delivery: the districts that had no order to deliver.
    Committed {
        /// Districts Delivery skipped (always 0 for the others).
        skipped: u64,
    },
    /// A New-Order that found its unused item and rolled back, as intended.
    RolledBack,
}

/// The prepared statements of one connection.
pub struct Statements {
    no_customer: Statement,
    no_warehouse: Statement,
    no_district: Statement,
    no_district_next: Statement,
    no_order: Statement,
    no_new_order: Statement,
    no_item: Statement,
    no_stock: Vec<Statement>,
    no_stock_update: Statement,
    no_line: Statement,
    pay_warehouse_ytd: Statement,
    pay_warehouse: Statement,
    pay_district_ytd: Statement,
    pay_district: Statement,
    customers_by_last: Statement,
    pay_customer: Statement,
    pay_customer_update: Statement,
    pay_customer_update_bc: Statement,
    pay_history: Statement,
    os_customer: Statement,
    os_order: Statement,
    os_lines: Statement,
    dl_new_order: Statement,
    dl_delete: Statement,
    dl_order: Statement,
    dl_carrier: Statement,
    dl_lines: Statement,
    dl_sum: Statement,
    dl_customer: Statement,
    sl_next: Statement,
    sl_count: Statement,
}

impl Statements {
    /// Prepares every statement on `conn`.
    pub fn prepare(conn: &mut Conn) -> Result<Statements> {
        let mut p = |sql: &str| crate::db::prepare(conn, sql);
        let mut no_stock = Vec::new();
        for d in 1..=DISTRICTS {
            no_stock.push(p(&format!(
                "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock WHERE s_w_id = ? AND \
                 s_i_id = ? FOR UPDATE"
            ))?);
        }
        Ok(Statements {
            no_customer: p(
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? \
                            AND c_d_id = ? AND c_id = ?",
            )?,
            no_warehouse: p("SELECT w_tax FROM warehouse WHERE w_id = ?")?,
            no_district: p(
                "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND \
                            d_id = ? FOR UPDATE",
            )?,
            no_district_next: p("UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND \
                                 d_id = ?")?,
            no_order: p(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, \
                         o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, NOW(), NULL, \
                         ?, ?)",
            )?,
            no_new_order: p("INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES \
                             (?, ?, ?)")?,
            no_item: p("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")?,
            no_stock,
            no_stock_update: p("UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, \
                                s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? \
                                WHERE s_w_id = ? AND s_i_id = ?")?,
            no_line: p(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                        ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
                        VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
            )?,
            pay_warehouse_ytd: p("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")?,
            pay_warehouse: p(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip \
                              FROM warehouse WHERE w_id = ?",
            )?,
            pay_district_ytd: p(
                "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND \
                                 d_id = ?",
            )?,
            pay_district: p(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip \
                             FROM district WHERE d_w_id = ? AND d_id = ?",
            )?,
            customers_by_last: p("SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? \
                                  AND c_last = ? ORDER BY c_first")?,
            pay_customer: p(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, \
                             c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, \
                             c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? \
                             AND c_id = ? FOR UPDATE",
            )?,
            pay_customer_update: p("UPDATE customer SET c_balance = c_balance - ?, \
                                    c_ytd_payment = c_ytd_payment + ?, \
                                    c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND \
                                    c_d_id = ? AND c_id = ?")?,
            pay_customer_update_bc: p("UPDATE customer SET c_balance = c_balance - ?, \
                                       c_ytd_payment = c_ytd_payment + ?, \
                                       c_payment_cnt = c_payment_cnt + 1, \
                                       c_data = SUBSTRING(CONCAT(?, c_data), 1, 500) \
                                       WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            pay_history: p(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, \
                            h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, NOW(), ?, ?)",
            )?,
            os_customer: p(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE \
                            c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            os_order: p(
                "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND \
                         o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
            )?,
            os_lines: p("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, \
                         ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND \
                         ol_o_id = ?")?,
            dl_new_order: p(
                "SELECT no_o_id FROM new_orders WHERE no_w_id = ? AND no_d_id = ? \
                             ORDER BY no_o_id LIMIT 1 FOR UPDATE",
            )?,
            dl_delete: p(
                "DELETE FROM new_orders WHERE no_w_id = ? AND no_d_id = ? AND \
                          no_o_id = ?",
            )?,
            dl_order: p(
                "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND \
                         o_id = ?",
            )?,
            dl_carrier: p("UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND \
                           o_d_id = ? AND o_id = ?")?,
            dl_lines: p(
                "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND \
                         ol_d_id = ? AND ol_o_id = ?",
            )?,
            dl_sum: p(
                "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND \
                       ol_d_id = ? AND ol_o_id = ?",
            )?,
            dl_customer: p("UPDATE customer SET c_balance = c_balance + ?, \
                            c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND \
                            c_d_id = ? AND c_id = ?")?,
            sl_next: p("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")?,
            sl_count: p(
                "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON \
                         s_w_id = ? AND s_i_id = ol_i_id WHERE ol_w_id = ? AND ol_d_id = ? \
                         AND ol_o_id < ? AND ol_o_id >= ? AND s_quantity < ?",
            )?,
        })
    }
}

/// Runs `input` as one transaction on `conn`; on an error the caller rolls back.
pub fn execute(conn: &mut Conn, st: &Statements, input: &Input) -> Txn<Outcome> {
    conn.query_drop("BEGIN")?;
    let outcome = match input {
        Input::NewOrder(i) => new_order(conn, st, i)?,
        Input::Payment(i) => payment(conn, st, i)?,
        Input::OrderStatus(i) => order_status(conn, st, i)?,
        Input::Delivery(i) => delivery(conn, st, i)?,
        Input::StockLevel(i) => stock_level(conn, st, i)?,
    };
    if outcome != Outcome::RolledBack {
        conn.query_drop("COMMIT")?;
    }
    Ok(outcome)
}

const DONE: Outcome = Outcome::Committed { skipped: 0 };

fn invalid<T>(msg: String) -> Txn<T> {
    Err(TxnError::Invalid(msg))
}

fn cents(text: &str, what: &str) -> Txn<i64> {
    parse_cents(text).ok_or_else(|| TxnError::Invalid(format!("{what} {text:?} is no decimal")))
}

fn new_order(conn: &mut Conn, st: &Statements, i: &NewOrder) -> Txn<Outcome> {
    let (w, d, c) = (i.w_id, i.d_id, i.c_id);
    let customer: Option<(String, String, String)> = conn.exec_first(&st.no_customer, (w, d, c))?;
    if customer.is_none() {
        return invalid(format!("New-Order: no customer ({w}, {d}, {c})"));
    }
    let _w_tax: Option<String> = conn.exec_first(&st.no_warehouse, (w,))?;
    let Some((o_id, _d_tax)) = conn.exec_first::<(u64, String), _, _>(&st.no_district, (w, d))?
    else {
        return invalid(format!("New-Order: no district ({w}, {d})"));
    };
    conn.exec_drop(&st.no_district_next, (o_id + 1, w, d))?;
    conn.exec_drop(
        &st.no_order,
        (
            o_id,
            d,
            w,
            c,
            i.lines.len() as u64,
            u64::from(i.all_local()),
        ),
    )?;
    conn.exec_drop(&st.no_new_order, (o_id, d, w))?;
    let stock = st
        .no_stock
        .get(d.saturating_sub(1) as usize)
        .ok_or_else(|| TxnError::Invalid(format!("New-Order: district {d} out of range")))?;
    for (n, line) in i.lines.iter().enumerate() {
        let item: Option<(String, String, String)> = conn.exec_first(&st.no_item, (line.i_id,))?;
        let Some((price, _name, _i_data)) = item else {
            // The unused item of the 1% (clause 2.4.2.3): the whole order rolls back.
            conn.query_drop("ROLLBACK")?;
            return Ok(Outcome::RolledBack);
        };
        let Some((quantity, _s_data, dist)) =
            conn.exec_first::<(i64, String, String), _, _>(stock, (line.supply_w_id, line.i_id))?
        else {
            return invalid(format!(
                "New-Order: no stock ({}, {})",
                line.supply_w_id, line.i_id
            ));
        };
        let q = line.quantity as i64;
        let left = if quantity - q >= 10 {
            quantity - q
        } else {
            quantity - q + 91
        };
        let remote = u64::from(line.supply_w_id != w);
        conn.exec_drop(
            &st.no_stock_update,
            (left, q, remote, line.supply_w_id, line.i_id),
        )?;
        let amount = q * cents(&price, "I_PRICE")?;
        conn.exec_drop(
            &st.no_line,
            (
                o_id,
                d,
                w,
                n as u64 + 1,
                line.i_id,
                line.supply_w_id,
                q,
                cents_text(amount),
                dist,
            ),
        )?;
    }
    Ok(DONE)
}

/// The customer's C_ID: as given, or the middle one of its last name (clause 2.5.2.2).
fn customer_id(
    conn: &mut Conn,
    st: &Statements,
    w: u64,
    d: u64,
    customer: &Customer,
    what: &str,
) -> Txn<u64> {
    match customer {
        Customer::Id(c) => Ok(*c),
        Customer::Last(last) => {
            let ids: Vec<u64> = conn.exec(&st.customers_by_last, (w, d, last.as_str()))?;
            match ids.get(middle(ids.len())) {
                Some(c) => Ok(*c),
                None => invalid(format!(
                    "{what}: no customer named {last} in warehouse {w} district {d}"
                )),
            }
        }
    }
}

fn payment(conn: &mut Conn, st: &Statements, i: &Payment) -> Txn<Outcome> {
    let (w, d) = (i.w_id, i.d_id);
    let amount = cents_text(i.amount_cents);
    conn.exec_drop(&st.pay_warehouse_ytd, (amount.as_str(), w))?;
    let Some(wh) = conn.exec_first::<Row, _, _>(&st.pay_warehouse, (w,))? else {
        return invalid(format!("Payment: no warehouse {w}"));
    };
    conn.exec_drop(&st.pay_district_ytd, (amount.as_str(), w, d))?;
    let Some(di) = conn.exec_first::<Row, _, _>(&st.pay_district, (w, d))? else {
        return invalid(format!("Payment: no district ({w}, {d})"));
    };
    let (cw, cd) = (i.c_w_id, i.c_d_id);
    let c = customer_id(conn, st, cw, cd, &i.customer, "Payment")?;
    let Some(cust) = conn.exec_first::<Row, _, _>(&st.pay_customer, (cw, cd, c))? else {
        return invalid(format!("Payment: no customer ({cw}, {cd}, {c})"));
    };
    let credit: Option<String> = cust.get(9);
    if credit.as_deref() == Some("BC") {
        let data = format!("{c} {cd} {cw} {d} {w} {amount} | ");
        conn.exec_drop(
            &st.pay_customer_update_bc,
            (amount.as_str(), amount.as_str(), data, cw, cd, c),
        )?;
    } else {
        conn.exec_drop(
            &st.pay_customer_update,
            (amount.as_str(), amount.as_str(), cw, cd, c),
        )?;
    }
    let w_name: String = wh.get(0).unwrap_or_default();
    let d_name: String = di.get(0).unwrap_or_default();
    conn.exec_drop(
        &st.pay_history,
        (
            c,
            cd,
            cw,
            d,
            w,
            amount.as_str(),
            format!("{w_name}    {d_name}"),
        ),
    )?;
    Ok(DONE)
}

fn order_status(conn: &mut Conn, st: &Statements, i: &OrderStatus) -> Txn<Outcome> {
    let (w, d) = (i.w_id, i.d_id);
    let c = customer_id(conn, st, w, d, &i.customer, "Order-Status")?;
    if conn
        .exec_first::<Row, _, _>(&st.os_customer, (w, d, c))?
        .is_none()
    {
        return invalid(format!("Order-Status: no customer ({w}, {d}, {c})"));
    }
    let Some(order) = conn.exec_first::<Row, _, _>(&st.os_order, (w, d, c))? else {
        return invalid(format!(
            "Order-Status: customer ({w}, {d}, {c}) has no order"
        ));
    };
    let Some(o_id) = order.get::<u64, _>(0) else {
        return invalid(format!("Order-Status: customer ({w}, {d}, {c}): no o_id"));
    };
    let lines: Vec<Row> = conn.exec(&st.os_lines, (w, d, o_id))?;
    if lines.is_empty() {
        return invalid(format!(
            "Order-Status: order ({w}, {d}, {o_id}) has no lines"
        ));
    }
    Ok(DONE)
}

fn delivery(conn: &mut Conn, st: &Statements, i: &Delivery) -> Txn<Outcome> {
    let w = i.w_id;
    let mut skipped = 0;
    for d in 1..=DISTRICTS {
        let Some(o) = conn.exec_first::<u64, _, _>(&st.dl_new_order, (w, d))? else {
            skipped += 1;
            continue;
        };
        conn.exec_drop(&st.dl_delete, (w, d, o))?;
        if conn.affected_rows() != 1 {
            return invalid(format!(
                "Delivery: DELETE of new order ({w}, {d}, {o}), found and locked by SELECT ... \
                 FOR UPDATE, removed {} rows",
                conn.affected_rows()
            ));
        }
        let Some(c) = conn.exec_first::<u64, _, _>(&st.dl_order, (w, d, o))? else {
            return invalid(format!("Delivery: new order ({w}, {d}, {o}) has no order"));
        };
        conn.exec_drop(&st.dl_carrier, (i.carrier, w, d, o))?;
        conn.exec_drop(&st.dl_lines, (w, d, o))?;
        let Some(Some(total)) = conn.exec_first::<Option<String>, _, _>(&st.dl_sum, (w, d, o))?
        else {
            return invalid(format!("Delivery: order ({w}, {d}, {o}) has no lines"));
        };
        conn.exec_drop(&st.dl_customer, (total, w, d, c))?;
    }
    Ok(Outcome::Committed { skipped })
}

fn stock_level(conn: &mut Conn, st: &Statements, i: &StockLevel) -> Txn<Outcome> {
    let (w, d) = (i.w_id, i.d_id);
    let Some(next) = conn.exec_first::<u64, _, _>(&st.sl_next, (w, d))? else {
        return invalid(format!("Stock-Level: no district ({w}, {d})"));
    };
    let _low: Option<u64> = conn.exec_first(
        &st.sl_count,
        (w, w, d, next, next.saturating_sub(20), i.threshold),
    )?;
    Ok(DONE)
}
