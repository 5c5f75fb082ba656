//! The optimizer's plan for every statement of the five transactions, per engine.
//!
//! After the warm-up each engine's server is asked to `EXPLAIN` each statement with the
//! values of warehouse 1, district 1 (rows the load creates). The report shows the plans of
//! the engines side by side and names every statement whose plan differs from InnoDB's in
//! anything but the row estimate: a different access path or join order costs the SQL layer
//! and the engine more than any engine-side saving, and a per-transaction profile cannot
//! tell it apart from a slower engine. The plans are what `EXPLAIN` says for the statement
//! as a client sends it; inside the stored procedures the values are variables, which the
//! optimizer plans the same way (constants at execution).

use anyhow::{Context as _, Result};
use mysql::Conn;
use mysql::prelude::Queryable as _;

/// The statements, each with its transaction and a short name, as a client sends them
/// (the procedures send the same statements with variables).
pub const STATEMENTS: [(&str, &str); 24] = [
    (
        "new-order: customer",
        "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = 1 AND c_d_id = 1 \
         AND c_id = 1",
    ),
    (
        "new-order: warehouse",
        "SELECT w_tax FROM warehouse WHERE w_id = 1",
    ),
    (
        "new-order: district",
        "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = 1 AND d_id = 1 FOR UPDATE",
    ),
    (
        "new-order: district update",
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 1",
    ),
    (
        "new-order: item",
        "SELECT i_price, i_name, i_data FROM item WHERE i_id = 1",
    ),
    (
        "new-order: stock",
        "SELECT s_quantity, s_data, s_dist_01 FROM stock WHERE s_w_id = 1 AND s_i_id = 1 \
         FOR UPDATE",
    ),
    (
        "new-order: stock update",
        "UPDATE stock SET s_quantity = 50, s_ytd = s_ytd + 1, s_order_cnt = s_order_cnt + 1, \
         s_remote_cnt = s_remote_cnt + 0 WHERE s_w_id = 1 AND s_i_id = 1",
    ),
    (
        "payment: warehouse update",
        "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1",
    ),
    (
        "payment: district update",
        "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 1",
    ),
    (
        "payment: customers by last name",
        "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BARBARBAR' \
         ORDER BY c_first",
    ),
    (
        "payment: customer",
        "SELECT c_first, c_middle, c_last, c_balance, c_since FROM customer WHERE c_w_id = 1 \
         AND c_d_id = 1 AND c_id = 1 FOR UPDATE",
    ),
    (
        "payment: customer update",
        "UPDATE customer SET c_balance = c_balance - 1, c_ytd_payment = c_ytd_payment + 1, \
         c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1",
    ),
    (
        "order-status: count by last name",
        "SELECT COUNT(*) FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BARBARBAR'",
    ),
    (
        "order-status: last order",
        "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = 1 AND o_d_id = 1 \
         AND o_c_id = 1 ORDER BY o_id DESC LIMIT 1",
    ),
    (
        "order-status: lines",
        "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
         WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 1",
    ),
    (
        "delivery: oldest new order",
        "SELECT no_o_id FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1 ORDER BY no_o_id \
         LIMIT 1 FOR UPDATE",
    ),
    (
        "delivery: new order delete",
        "DELETE FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 2101",
    ),
    (
        "delivery: order",
        "SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 2101",
    ),
    (
        "delivery: carrier update",
        "UPDATE orders SET o_carrier_id = 1 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 2101",
    ),
    (
        "delivery: lines update",
        "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = 1 AND ol_d_id = 1 \
         AND ol_o_id = 2101",
    ),
    (
        "delivery: lines sum",
        "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 \
         AND ol_o_id = 2101",
    ),
    (
        "delivery: customer update",
        "UPDATE customer SET c_balance = c_balance + 1, c_delivery_cnt = c_delivery_cnt + 1 \
         WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1",
    ),
    (
        "stock-level: next order",
        "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1",
    ),
    (
        "stock-level: low stock",
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = 1 \
         AND s_i_id = ol_i_id WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 3001 \
         AND ol_o_id >= 2981 AND s_quantity < 15",
    ),
];

/// One line of `EXPLAIN`'s output with the row estimate left out (each engine's own).
pub fn plan_line(row: &[Option<String>], columns: &[String]) -> String {
    columns
        .iter()
        .zip(row)
        .filter(|(c, _)| !c.eq_ignore_ascii_case("rows"))
        .map(|(_, v)| v.as_deref().unwrap_or("NULL"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The row estimates of `EXPLAIN`'s output, one per line.
fn row_estimates(rows: &[Vec<Option<String>>], columns: &[String]) -> Vec<String> {
    let at = columns.iter().position(|c| c.eq_ignore_ascii_case("rows"));
    rows.iter()
        .map(|r| {
            at.and_then(|i| r.get(i).cloned().flatten())
                .unwrap_or_else(|| "NULL".to_string())
        })
        .collect()
}

/// The plan of one statement on one engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// `EXPLAIN`'s lines without the row estimate.
    pub lines: Vec<String>,
    /// The row estimate of each line.
    pub rows: Vec<String>,
}

/// `EXPLAIN` of every statement in [`STATEMENTS`], in that order (`EXPLAIN` of an UPDATE or
/// DELETE plans it without changing a row).
pub fn explain_all(conn: &mut Conn) -> Result<Vec<Plan>> {
    let mut plans = Vec::new();
    for (name, sql) in STATEMENTS {
        let result = conn
            .query_iter(format!("EXPLAIN {sql}"))
            .with_context(|| format!("EXPLAIN of {name}: `{sql}`"))?;
        let columns: Vec<String> = result
            .columns()
            .as_ref()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect();
        let mut rows = Vec::new();
        for row in result {
            let row = row.with_context(|| format!("EXPLAIN of {name}"))?;
            let values: Vec<Option<String>> = (0..row.len())
                .map(|i| row.get::<Option<String>, usize>(i).flatten())
                .collect();
            rows.push(values);
        }
        plans.push(Plan {
            lines: rows.iter().map(|r| plan_line(r, &columns)).collect(),
            rows: row_estimates(&rows, &columns),
        });
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_line_leaves_the_row_estimate_out() {
        let columns: Vec<String> = ["id", "table", "type", "key", "rows", "Extra"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let row = vec![
            Some("1".to_string()),
            Some("stock".to_string()),
            Some("const".to_string()),
            Some("PRIMARY".to_string()),
            Some("1".to_string()),
            None,
        ];
        assert_eq!(
            plan_line(&row, &columns),
            "1 | stock | const | PRIMARY | NULL"
        );
        assert_eq!(row_estimates(&[row], &columns), vec!["1".to_string()]);
    }

    #[test]
    fn every_statement_has_a_unique_name() {
        let mut names: Vec<&str> = STATEMENTS.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), STATEMENTS.len());
    }
}
