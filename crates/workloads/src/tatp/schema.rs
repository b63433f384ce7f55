//! TATP's four tables in the description's column names, and oltplab's record of the load.
//! Keys are the description's; `sub_nbr` has a unique index (UPDATE_LOCATION and the call
//! forwarding transactions find the subscriber by it).

use crate::sql::Dialect;

/// oltplab's record of a load: subscribers, seed, whether it finished.
pub const META_TABLE: &str = "oltplab_tatp";

/// The workload's tables, in load order.
pub const TABLES: [&str; 4] = [
    "subscriber",
    "access_info",
    "special_facility",
    "call_forwarding",
];

pub const SUBSCRIBER_COLS: &[&str] = &[
    "s_id",
    "sub_nbr",
    "bit_1",
    "bit_2",
    "bit_3",
    "bit_4",
    "bit_5",
    "bit_6",
    "bit_7",
    "bit_8",
    "bit_9",
    "bit_10",
    "hex_1",
    "hex_2",
    "hex_3",
    "hex_4",
    "hex_5",
    "hex_6",
    "hex_7",
    "hex_8",
    "hex_9",
    "hex_10",
    "byte2_1",
    "byte2_2",
    "byte2_3",
    "byte2_4",
    "byte2_5",
    "byte2_6",
    "byte2_7",
    "byte2_8",
    "byte2_9",
    "byte2_10",
    "msc_location",
    "vlr_location",
];
pub const ACCESS_INFO_COLS: &[&str] = &["s_id", "ai_type", "data1", "data2", "data3", "data4"];
pub const SPECIAL_FACILITY_COLS: &[&str] = &[
    "s_id",
    "sf_type",
    "is_active",
    "error_cntrl",
    "data_a",
    "data_b",
];
pub const CALL_FORWARDING_COLS: &[&str] = &["s_id", "sf_type", "start_time", "end_time", "numberx"];

/// (table, columns with types, primary key).
fn defs() -> [(&'static str, String, &'static str); 4] {
    let mut sub = String::from("s_id INTEGER NOT NULL, sub_nbr VARCHAR(15) NOT NULL");
    for group in ["bit", "hex", "byte2"] {
        for i in 1..=10 {
            sub.push_str(&format!(", {group}_{i} SMALLINT NOT NULL"));
        }
    }
    sub.push_str(", msc_location BIGINT NOT NULL, vlr_location BIGINT NOT NULL");
    [
        ("subscriber", sub, "s_id"),
        (
            "access_info",
            "s_id INTEGER NOT NULL, ai_type SMALLINT NOT NULL, data1 SMALLINT NOT NULL, \
             data2 SMALLINT NOT NULL, data3 CHAR(3) NOT NULL, data4 CHAR(5) NOT NULL"
                .into(),
            "s_id, ai_type",
        ),
        (
            "special_facility",
            "s_id INTEGER NOT NULL, sf_type SMALLINT NOT NULL, is_active SMALLINT NOT NULL, \
             error_cntrl SMALLINT NOT NULL, data_a SMALLINT NOT NULL, data_b CHAR(5) NOT NULL"
                .into(),
            "s_id, sf_type",
        ),
        (
            "call_forwarding",
            "s_id INTEGER NOT NULL, sf_type SMALLINT NOT NULL, start_time SMALLINT NOT NULL, \
             end_time SMALLINT NOT NULL, numberx VARCHAR(15) NOT NULL"
                .into(),
            "s_id, sf_type, start_time",
        ),
    ]
}

/// `CREATE TABLE` statements: SQLite and InnoDB store rows in key order (WITHOUT ROWID /
/// clustered), PostgreSQL gets its keys after COPY (see [`create_indexes`]).
pub fn create_tables(dialect: Dialect) -> Vec<String> {
    let mut out: Vec<String> = defs()
        .iter()
        .map(|(name, cols, key)| match dialect {
            Dialect::Sqlite => {
                format!("CREATE TABLE {name} ({cols}, PRIMARY KEY ({key})) WITHOUT ROWID")
            }
            Dialect::Mysql => {
                format!("CREATE TABLE {name} ({cols}, PRIMARY KEY ({key})) ENGINE=InnoDB")
            }
            Dialect::Postgres => format!("CREATE TABLE {name} ({cols})"),
        })
        .collect();
    out.push(format!(
        "CREATE TABLE {META_TABLE} (name VARCHAR(32) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL)"
    ));
    out
}

/// Keys (PostgreSQL) and the unique index on `sub_nbr`, built after the data is in.
pub fn create_indexes(dialect: Dialect) -> Vec<String> {
    let keys = defs()
        .into_iter()
        .filter(|_| dialect == Dialect::Postgres)
        .map(|(name, _, key)| format!("ALTER TABLE {name} ADD PRIMARY KEY ({key})"));
    keys.chain(std::iter::once(
        "CREATE UNIQUE INDEX i_sub_nbr ON subscriber (sub_nbr)".to_string(),
    ))
    .collect()
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
    fn every_table_declares_its_columns_in_order() {
        let cols = [
            SUBSCRIBER_COLS,
            ACCESS_INFO_COLS,
            SPECIAL_FACILITY_COLS,
            CALL_FORWARDING_COLS,
        ];
        for ((name, def, _), cols) in defs().iter().zip(cols) {
            let declared: Vec<&str> = def
                .split(", ")
                .map(|c| c.split_whitespace().next().unwrap())
                .collect();
            assert_eq!(declared, cols, "{name}");
        }
    }
}
