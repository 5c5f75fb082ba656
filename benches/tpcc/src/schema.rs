//! The nine TPC-C tables, with the primary keys and secondary indexes of tpcc-mysql and
//! HammerDB and no foreign keys (MyRocks has none).
//!
//! Column types follow tpcc-mysql's `create_table.sql`, with the specification's
//! precision where tpcc-mysql departs from it (taxes and discounts `DECIMAL(4,4)`), and
//! `INT` for the counters that a long run increments (`c_payment_cnt`, `s_order_cnt`, ...;
//! tpcc-mysql's `SMALLINT` overflows on hot rows). Secondary indexes: `idx_customer`
//! (customer by last name, Payment and Order-Status) and `idx_orders` (a customer's newest
//! order, Order-Status), the two both tools create for the transactions; tpcc-mysql's other
//! indexes only back its foreign keys. `history` has no primary key in either tool (each
//! engine adds its hidden one).

/// The database the benchmark creates.
pub const DATABASE: &str = "tpcc";

/// Items (clause 4.3.3.1: a fixed 100,000).
pub const ITEMS: u64 = 100_000;
/// Districts per warehouse.
pub const DISTRICTS: u64 = 10;
/// Customers per district.
pub const CUSTOMERS: u64 = 3_000;
/// Orders per district after the load.
pub const ORDERS: u64 = 3_000;
/// The first undelivered order of the load (orders 2,101 to 3,000 have a new_order row).
pub const FIRST_UNDELIVERED: u64 = 2_101;

/// The nine tables, in creation order.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_orders",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// The `CREATE TABLE` statements for `engine` (the `ENGINE=` value), in [`TABLES`] order.
pub fn create_tables(engine: &str) -> Vec<String> {
    let bodies = [
        "w_id SMALLINT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), \
         w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), \
         w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id)",
        "d_id TINYINT NOT NULL, d_w_id SMALLINT NOT NULL, d_name VARCHAR(10), \
         d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), \
         d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT, \
         PRIMARY KEY (d_w_id, d_id)",
        "c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL, \
         c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), \
         c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), \
         c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), \
         c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), \
         c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), \
         PRIMARY KEY (c_w_id, c_d_id, c_id), KEY idx_customer (c_w_id, c_d_id, c_last, c_first)",
        "h_c_id INT, h_c_d_id TINYINT, h_c_w_id SMALLINT, h_d_id TINYINT, h_w_id SMALLINT, \
         h_date DATETIME, h_amount DECIMAL(6,2), h_data VARCHAR(24)",
        "no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id SMALLINT NOT NULL, \
         PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
        "o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL, o_c_id INT, \
         o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT, \
         PRIMARY KEY (o_w_id, o_d_id, o_id), KEY idx_orders (o_w_id, o_d_id, o_c_id, o_id)",
        "ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, \
         ol_number TINYINT NOT NULL, ol_i_id INT, ol_supply_w_id SMALLINT, \
         ol_delivery_d DATETIME, ol_quantity TINYINT, ol_amount DECIMAL(6,2), \
         ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
        "i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), \
         i_data VARCHAR(50), PRIMARY KEY (i_id)",
        "s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT, \
         s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), \
         s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), \
         s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd DECIMAL(8,0), s_order_cnt INT, \
         s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id)",
    ];
    TABLES
        .iter()
        .zip(bodies)
        .map(|(t, b)| format!("CREATE TABLE {t} ({b}) ENGINE={engine}"))
        .collect()
}

/// The rows a load of `warehouses` writes, per table (order lines: the expected 10 per
/// order), for the progress bar.
pub fn expected_rows(warehouses: u64) -> u64 {
    let per_district = CUSTOMERS * 2 + ORDERS * 11 + (ORDERS - FIRST_UNDELIVERED + 1);
    ITEMS + warehouses * (1 + ITEMS + DISTRICTS * (1 + per_district))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_tables_with_their_keys() {
        let t = create_tables("RIPTIDE");
        assert_eq!(t.len(), 9);
        assert!(t.iter().all(|s| s.ends_with("ENGINE=RIPTIDE")));
        assert!(t.iter().all(|s| !s.contains("FOREIGN")));
        assert!(t[2].contains("KEY idx_customer (c_w_id, c_d_id, c_last, c_first)"));
        assert!(t[5].contains("KEY idx_orders (o_w_id, o_d_id, o_c_id, o_id)"));
        assert!(!t[3].contains("PRIMARY KEY"));
        // 1 warehouse: 100,000 items and stock rows, 10 districts of 3,000 customers,
        // 3,000 history rows, 3,000 orders with 30,000 lines, 900 new orders.
        assert_eq!(
            expected_rows(1),
            100_000 + 1 + 100_000 + 10 * (1 + 6_000 + 33_000 + 900)
        );
    }
}
