//! The TPC-C schema in the specification's names (clause 1.3), per dialect, plus oltplab's own
//! `oltplab_tpcc` table that records the scale and the load's NURand constants (the run needs the
//! load's C for last names to pick its own).

use crate::sql::Dialect;

pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// oltplab's record of a load: warehouses, NURand constants, whether the load finished.
pub const META_TABLE: &str = "oltplab_tpcc";

pub const WAREHOUSE_COLS: &[&str] = &[
    "w_id",
    "w_name",
    "w_street_1",
    "w_street_2",
    "w_city",
    "w_state",
    "w_zip",
    "w_tax",
    "w_ytd",
];
pub const DISTRICT_COLS: &[&str] = &[
    "d_id",
    "d_w_id",
    "d_name",
    "d_street_1",
    "d_street_2",
    "d_city",
    "d_state",
    "d_zip",
    "d_tax",
    "d_ytd",
    "d_next_o_id",
];
pub const CUSTOMER_COLS: &[&str] = &[
    "c_id",
    "c_d_id",
    "c_w_id",
    "c_first",
    "c_middle",
    "c_last",
    "c_street_1",
    "c_street_2",
    "c_city",
    "c_state",
    "c_zip",
    "c_phone",
    "c_since",
    "c_credit",
    "c_credit_lim",
    "c_discount",
    "c_balance",
    "c_ytd_payment",
    "c_payment_cnt",
    "c_delivery_cnt",
    "c_data",
];
pub const HISTORY_COLS: &[&str] = &[
    "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
];
pub const NEW_ORDER_COLS: &[&str] = &["no_o_id", "no_d_id", "no_w_id"];
pub const ORDERS_COLS: &[&str] = &[
    "o_id",
    "o_d_id",
    "o_w_id",
    "o_c_id",
    "o_entry_d",
    "o_carrier_id",
    "o_ol_cnt",
    "o_all_local",
];
pub const ORDER_LINE_COLS: &[&str] = &[
    "ol_o_id",
    "ol_d_id",
    "ol_w_id",
    "ol_number",
    "ol_i_id",
    "ol_supply_w_id",
    "ol_delivery_d",
    "ol_quantity",
    "ol_amount",
    "ol_dist_info",
];
pub const ITEM_COLS: &[&str] = &["i_id", "i_im_id", "i_name", "i_price", "i_data"];
pub const STOCK_COLS: &[&str] = &[
    "s_i_id",
    "s_w_id",
    "s_quantity",
    "s_dist_01",
    "s_dist_02",
    "s_dist_03",
    "s_dist_04",
    "s_dist_05",
    "s_dist_06",
    "s_dist_07",
    "s_dist_08",
    "s_dist_09",
    "s_dist_10",
    "s_ytd",
    "s_order_cnt",
    "s_remote_cnt",
    "s_data",
];

struct Table {
    name: &'static str,
    columns: &'static str,
    key: Option<&'static str>,
}

const DEFS: [Table; 9] = [
    Table {
        name: "warehouse",
        columns: "w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), \
                  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2)",
        key: Some("w_id"),
    },
    Table {
        name: "district",
        columns: "d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), \
                  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), \
                  d_ytd DECIMAL(12,2), d_next_o_id INTEGER",
        key: Some("d_w_id, d_id"),
    },
    Table {
        name: "customer",
        columns: "c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first VARCHAR(16), \
                  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), \
                  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since TIMESTAMP, \
                  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), \
                  c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, c_delivery_cnt INTEGER, c_data VARCHAR(500)",
        key: Some("c_w_id, c_d_id, c_id"),
    },
    Table {
        name: "history",
        columns: "h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, \
                  h_date TIMESTAMP, h_amount DECIMAL(6,2), h_data VARCHAR(24)",
        key: None,
    },
    Table {
        name: "new_order",
        columns: "no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL",
        key: Some("no_w_id, no_d_id, no_o_id"),
    },
    Table {
        name: "orders",
        columns: "o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, \
                  o_entry_d TIMESTAMP, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER",
        key: Some("o_w_id, o_d_id, o_id"),
    },
    Table {
        name: "order_line",
        columns: "ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, \
                  ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TIMESTAMP, \
                  ol_quantity INTEGER, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24)",
        key: Some("ol_w_id, ol_d_id, ol_o_id, ol_number"),
    },
    Table {
        name: "item",
        columns: "i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50)",
        key: Some("i_id"),
    },
    Table {
        name: "stock",
        columns: "s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, s_dist_01 CHAR(24), \
                  s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), \
                  s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, \
                  s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data VARCHAR(50)",
        key: Some("s_w_id, s_i_id"),
    },
];

/// Secondary indexes: customers by last name (Payment, Order-Status) and a customer's latest order.
const INDEXES: [(&str, &str, &str); 2] = [
    (
        "idx_customer_name",
        "customer",
        "c_w_id, c_d_id, c_last, c_first",
    ),
    (
        "idx_orders_customer",
        "orders",
        "o_w_id, o_d_id, o_c_id, o_id",
    ),
];

/// `CREATE TABLE` statements. SQLite and InnoDB get their primary keys here (the rows are stored in
/// key order: WITHOUT ROWID / clustered); PostgreSQL gets them after COPY, which is faster.
pub fn create_tables(dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    for t in &DEFS {
        let ts = if dialect == Dialect::Mysql {
            t.columns.replace("TIMESTAMP", "DATETIME(6)")
        } else {
            t.columns.to_string()
        };
        let sql = match (dialect, t.key) {
            (Dialect::Sqlite, Some(k)) => format!(
                "CREATE TABLE {} ({ts}, PRIMARY KEY ({k})) WITHOUT ROWID",
                t.name
            ),
            (Dialect::Mysql, Some(k)) => {
                format!(
                    "CREATE TABLE {} ({ts}, PRIMARY KEY ({k})) ENGINE=InnoDB",
                    t.name
                )
            }
            (Dialect::Mysql, None) => format!("CREATE TABLE {} ({ts}) ENGINE=InnoDB", t.name),
            _ => format!("CREATE TABLE {} ({ts})", t.name),
        };
        out.push(sql);
    }
    out.push(format!(
        "CREATE TABLE {META_TABLE} (name VARCHAR(32) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL)"
    ));
    out
}

/// Indexes built after the load, one statement per index (they can run in parallel).
pub fn create_indexes(dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    if dialect == Dialect::Postgres {
        for t in &DEFS {
            if let Some(k) = t.key {
                out.push(format!("ALTER TABLE {} ADD PRIMARY KEY ({k})", t.name));
            }
        }
    }
    for (name, table, cols) in INDEXES {
        out.push(format!("CREATE INDEX {name} ON {table} ({cols})"));
    }
    out
}

pub fn drop_tables() -> Vec<String> {
    TABLES
        .iter()
        .chain(std::iter::once(&META_TABLE))
        .map(|t| format!("DROP TABLE IF EXISTS {t}"))
        .collect()
}

/// SQL listing which of the TPC-C tables (and the meta table) exist, one name per row.
pub fn existing_tables_sql(dialect: Dialect) -> String {
    let names: Vec<String> = TABLES
        .iter()
        .chain(std::iter::once(&META_TABLE))
        .map(|t| format!("'{t}'"))
        .collect();
    let names = names.join(", ");
    match dialect {
        Dialect::Sqlite => format!(
            "SELECT DISTINCT name FROM pragma_table_list WHERE schema <> 'temp' AND type = 'table' AND name IN ({names})"
        ),
        Dialect::Postgres => format!(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ({names})"
        ),
        Dialect::Mysql => format!(
            "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ({names})"
        ),
    }
}
