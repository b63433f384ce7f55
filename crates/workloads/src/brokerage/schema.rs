//! The brokerage schema: TPC-E's customer, broker and market tables in TPC-E's column names, the
//! company and financial tables folded into a padded `security` row, and the indexes DBT-5 builds on
//! trade (by account and time, by security and time, by status). Dates of `daily_market` are day
//! numbers (days since 1970-01-01), times are timestamps.

use crate::sql::Dialect;

/// oltplab's record of a load: scale, seed, the last trade id loaded, the balance total at load.
pub const META_TABLE: &str = "oltplab_brokerage";

pub const BROKER_COLS: &[&str] = &["b_id", "b_st_id", "b_name", "b_num_trades", "b_comm_total"];
pub const CUSTOMER_COLS: &[&str] = &[
    "c_id", "c_tax_id", "c_st_id", "c_l_name", "c_f_name", "c_tier", "c_dob", "c_email", "c_pad",
];
pub const ACCOUNT_COLS: &[&str] = &[
    "ca_id",
    "ca_b_id",
    "ca_c_id",
    "ca_name",
    "ca_tax_st",
    "ca_bal",
];
pub const SECURITY_COLS: &[&str] = &[
    "s_symb",
    "s_name",
    "s_sector",
    "s_industry",
    "s_num_out",
    "s_pe",
    "s_dividend",
    "s_yield",
    "s_pad",
];
pub const LAST_TRADE_COLS: &[&str] =
    &["lt_s_symb", "lt_dts", "lt_price", "lt_open_price", "lt_vol"];
pub const DAILY_MARKET_COLS: &[&str] = &[
    "dm_s_symb",
    "dm_date",
    "dm_close",
    "dm_high",
    "dm_low",
    "dm_vol",
];
pub const TRADE_COLS: &[&str] = &[
    "t_id",
    "t_dts",
    "t_st_id",
    "t_tt_id",
    "t_is_cash",
    "t_s_symb",
    "t_qty",
    "t_bid_price",
    "t_ca_id",
    "t_exec_name",
    "t_trade_price",
    "t_chrg",
    "t_comm",
    "t_tax",
    "t_lifo",
];
pub const TRADE_HISTORY_COLS: &[&str] = &["th_t_id", "th_dts", "th_st_id"];
pub const SETTLEMENT_COLS: &[&str] = &["se_t_id", "se_cash_type", "se_cash_due_date", "se_amt"];
pub const CASH_COLS: &[&str] = &["ct_t_id", "ct_dts", "ct_amt", "ct_name"];
pub const HOLDING_COLS: &[&str] = &["h_t_id", "h_ca_id", "h_s_symb", "h_dts", "h_price", "h_qty"];
pub const HOLDING_HISTORY_COLS: &[&str] =
    &["hh_h_t_id", "hh_t_id", "hh_before_qty", "hh_after_qty"];

struct Table {
    name: &'static str,
    columns: &'static str,
    key: &'static str,
}

const DEFS: [Table; 14] = [
    Table {
        name: "broker",
        columns: "b_id BIGINT NOT NULL, b_st_id CHAR(4), b_name VARCHAR(49), b_num_trades INTEGER, \
                  b_comm_total DECIMAL(12,2)",
        key: "b_id",
    },
    Table {
        name: "customer",
        columns: "c_id BIGINT NOT NULL, c_tax_id VARCHAR(20), c_st_id CHAR(4), c_l_name VARCHAR(25), \
                  c_f_name VARCHAR(20), c_tier SMALLINT, c_dob INTEGER, c_email VARCHAR(50), c_pad VARCHAR(200)",
        key: "c_id",
    },
    Table {
        name: "customer_account",
        columns: "ca_id BIGINT NOT NULL, ca_b_id BIGINT, ca_c_id BIGINT, ca_name VARCHAR(50), \
                  ca_tax_st SMALLINT, ca_bal DECIMAL(12,2)",
        key: "ca_id",
    },
    Table {
        name: "security",
        columns: "s_symb VARCHAR(15) NOT NULL, s_name VARCHAR(70), s_sector INTEGER, s_industry INTEGER, \
                  s_num_out BIGINT, s_pe DECIMAL(10,2), s_dividend DECIMAL(10,2), s_yield DECIMAL(5,2), \
                  s_pad VARCHAR(1000)",
        key: "s_symb",
    },
    Table {
        name: "last_trade",
        columns: "lt_s_symb VARCHAR(15) NOT NULL, lt_dts TIMESTAMP, lt_price DECIMAL(8,2), \
                  lt_open_price DECIMAL(8,2), lt_vol BIGINT",
        key: "lt_s_symb",
    },
    Table {
        name: "daily_market",
        columns: "dm_s_symb VARCHAR(15) NOT NULL, dm_date INTEGER NOT NULL, dm_close DECIMAL(8,2), \
                  dm_high DECIMAL(8,2), dm_low DECIMAL(8,2), dm_vol BIGINT",
        key: "dm_s_symb, dm_date",
    },
    Table {
        name: "trade",
        columns: "t_id BIGINT NOT NULL, t_dts TIMESTAMP, t_st_id CHAR(4), t_tt_id CHAR(3), t_is_cash SMALLINT, \
                  t_s_symb VARCHAR(15), t_qty INTEGER, t_bid_price DECIMAL(8,2), t_ca_id BIGINT, \
                  t_exec_name VARCHAR(49), t_trade_price DECIMAL(8,2), t_chrg DECIMAL(10,2), \
                  t_comm DECIMAL(10,2), t_tax DECIMAL(10,2), t_lifo SMALLINT",
        key: "t_id",
    },
    Table {
        name: "trade_history",
        columns: "th_t_id BIGINT NOT NULL, th_dts TIMESTAMP, th_st_id CHAR(4) NOT NULL",
        key: "th_t_id, th_st_id",
    },
    Table {
        name: "settlement",
        columns: "se_t_id BIGINT NOT NULL, se_cash_type VARCHAR(40), se_cash_due_date INTEGER, \
                  se_amt DECIMAL(12,2)",
        key: "se_t_id",
    },
    Table {
        name: "cash_transaction",
        columns: "ct_t_id BIGINT NOT NULL, ct_dts TIMESTAMP, ct_amt DECIMAL(12,2), ct_name VARCHAR(100)",
        key: "ct_t_id",
    },
    Table {
        name: "holding",
        columns: "h_t_id BIGINT NOT NULL, h_ca_id BIGINT, h_s_symb VARCHAR(15), h_dts TIMESTAMP, \
                  h_price DECIMAL(8,2), h_qty INTEGER",
        key: "h_t_id",
    },
    Table {
        name: "holding_summary",
        columns: "hs_ca_id BIGINT NOT NULL, hs_s_symb VARCHAR(15) NOT NULL, hs_qty INTEGER",
        key: "hs_ca_id, hs_s_symb",
    },
    Table {
        name: "holding_history",
        columns: "hh_h_t_id BIGINT NOT NULL, hh_t_id BIGINT NOT NULL, hh_before_qty INTEGER, hh_after_qty INTEGER",
        key: "hh_h_t_id, hh_t_id",
    },
    Table {
        name: "trade_request",
        columns: "tr_t_id BIGINT NOT NULL, tr_tt_id CHAR(3), tr_s_symb VARCHAR(15), tr_qty INTEGER, \
                  tr_bid_price DECIMAL(8,2), tr_b_id BIGINT",
        key: "tr_t_id",
    },
];

/// The workload's tables, in load order.
pub const TABLES: [&str; 14] = [
    "broker",
    "customer",
    "customer_account",
    "security",
    "last_trade",
    "daily_market",
    "trade",
    "trade_history",
    "settlement",
    "cash_transaction",
    "holding",
    "holding_summary",
    "holding_history",
    "trade_request",
];

/// Secondary indexes, as DBT-5 has them where a transaction's access path needs one.
const INDEXES: [(&str, &str, &str); 9] = [
    ("i_c_tax_id", "customer", "c_tax_id"),
    ("i_ca_c_id", "customer_account", "ca_c_id"),
    ("i_s_industry", "security", "s_industry"),
    ("i_t_ca_id_dts", "trade", "t_ca_id, t_dts"),
    ("i_t_s_symb_dts", "trade", "t_s_symb, t_dts"),
    ("i_t_st_id", "trade", "t_st_id"),
    ("i_h_ca_id_s_symb", "holding", "h_ca_id, h_s_symb, h_dts"),
    ("i_hh_t_id", "holding_history", "hh_t_id"),
    ("i_tr_s_symb", "trade_request", "tr_s_symb"),
];

/// `CREATE TABLE` statements: SQLite and InnoDB store rows in key order (WITHOUT ROWID /
/// clustered), PostgreSQL gets its keys after COPY (see [`create_indexes`]).
pub fn create_tables(dialect: Dialect) -> Vec<String> {
    let mut out: Vec<String> = DEFS
        .iter()
        .map(|t| {
            let cols = if dialect == Dialect::Mysql {
                t.columns.replace("TIMESTAMP", "DATETIME(6)")
            } else {
                t.columns.to_string()
            };
            match dialect {
                Dialect::Sqlite => format!(
                    "CREATE TABLE {} ({cols}, PRIMARY KEY ({})) WITHOUT ROWID",
                    t.name, t.key
                ),
                Dialect::Mysql => format!(
                    "CREATE TABLE {} ({cols}, PRIMARY KEY ({})) ENGINE=InnoDB",
                    t.name, t.key
                ),
                Dialect::Postgres => format!("CREATE TABLE {} ({cols})", t.name),
            }
        })
        .collect();
    out.push(format!(
        "CREATE TABLE {META_TABLE} (name VARCHAR(32) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL)"
    ));
    out
}

/// Keys (PostgreSQL) and secondary indexes, one statement each, built after the data is in.
pub fn create_indexes(dialect: Dialect) -> Vec<String> {
    let keys = DEFS
        .iter()
        .filter(|_| dialect == Dialect::Postgres)
        .map(|t| format!("ALTER TABLE {} ADD PRIMARY KEY ({})", t.name, t.key));
    let indexes = INDEXES
        .iter()
        .map(|(name, table, cols)| format!("CREATE INDEX {name} ON {table} ({cols})"));
    keys.chain(indexes).collect()
}

pub fn drop_tables() -> Vec<String> {
    TABLES
        .iter()
        .chain(std::iter::once(&META_TABLE))
        .map(|t| format!("DROP TABLE IF EXISTS {t}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_a_definition_and_its_columns() {
        let names: Vec<&str> = DEFS.iter().map(|t| t.name).collect();
        assert_eq!(names, TABLES);
        for (table, cols) in [
            ("broker", BROKER_COLS),
            ("customer", CUSTOMER_COLS),
            ("customer_account", ACCOUNT_COLS),
            ("security", SECURITY_COLS),
            ("last_trade", LAST_TRADE_COLS),
            ("daily_market", DAILY_MARKET_COLS),
            ("trade", TRADE_COLS),
            ("trade_history", TRADE_HISTORY_COLS),
            ("settlement", SETTLEMENT_COLS),
            ("cash_transaction", CASH_COLS),
            ("holding", HOLDING_COLS),
            ("holding_history", HOLDING_HISTORY_COLS),
        ] {
            let def = DEFS.iter().find(|t| t.name == table).unwrap();
            let declared: Vec<&str> = def
                .columns
                .split(", ")
                .map(|c| c.split_whitespace().next().unwrap())
                .collect();
            assert_eq!(declared, cols, "{table}");
        }
    }
}
