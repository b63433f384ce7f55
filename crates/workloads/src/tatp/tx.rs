//! TATP's seven transactions (description section 4), each written once for the three engines.
//! A transaction that finds nothing to read or change ends "unsuccessful" as the description
//! expects (GET_NEW_DESTINATION about 24 % successful, GET_ACCESS_DATA and UPDATE_SUBSCRIBER_DATA
//! 62.5 %, the call-forwarding inserts and deletes about 31 %): it rolls back and counts.

use crate::sql::{Conn, DbResult, Dialect, Rows, Stmt, StmtBuilder, TxMode, P};

/// The transaction types, in the mix's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxType {
    GetSubscriberData,
    GetNewDestination,
    GetAccessData,
    UpdateSubscriberData,
    UpdateLocation,
    InsertCallForwarding,
    DeleteCallForwarding,
}

impl TxType {
    pub const ALL: [TxType; 7] = [
        TxType::GetSubscriberData,
        TxType::GetNewDestination,
        TxType::GetAccessData,
        TxType::UpdateSubscriberData,
        TxType::UpdateLocation,
        TxType::InsertCallForwarding,
        TxType::DeleteCallForwarding,
    ];

    /// The types' names, in [`TxType::ALL`] order (the driver's kinds).
    pub const NAMES: [&'static str; 7] = [
        "get_subscriber_data",
        "get_new_destination",
        "get_access_data",
        "update_subscriber_data",
        "update_location",
        "insert_call_forwarding",
        "delete_call_forwarding",
    ];

    /// The mix in percent (TATP 4: 35/10/35/2/14/2/2).
    pub const MIX_PCT: [u32; 7] = [35, 10, 35, 2, 14, 2, 2];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// Its tag in traces: after TPC-C's 1–5 and the brokerage's 11–20.
    pub fn tag(self) -> u8 {
        self as u8 + FIRST_TAG
    }

    pub fn mix_pct(self) -> u32 {
        Self::MIX_PCT[self as usize]
    }
}

/// The trace tag of [`TxType::GetSubscriberData`]; the seven take 31–37, which traces name.
pub const FIRST_TAG: u8 = oltplab_trace::TATP_FIRST_TAG;

/// One transaction's input (TATP 4.1–4.7).
#[derive(Clone, Debug)]
pub enum Input {
    GetSubscriberData {
        s_id: i64,
    },
    GetNewDestination {
        s_id: i64,
        sf_type: i64,
        start_time: i64,
        end_time: i64,
    },
    GetAccessData {
        s_id: i64,
        ai_type: i64,
    },
    UpdateSubscriberData {
        s_id: i64,
        sf_type: i64,
        bit_1: i64,
        data_a: i64,
    },
    UpdateLocation {
        sub_nbr: String,
        vlr_location: i64,
    },
    InsertCallForwarding {
        sub_nbr: String,
        sf_type: i64,
        start_time: i64,
        end_time: i64,
        numberx: String,
    },
    DeleteCallForwarding {
        sub_nbr: String,
        sf_type: i64,
        start_time: i64,
    },
}

/// How a transaction that did not fail ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// Found nothing to read or change, as TATP expects of a share of them; rolled back.
    Unsuccessful,
}

/// The statements of one dialect.
pub struct Statements {
    dialect: Dialect,
    subscriber: Stmt,
    new_destination: Stmt,
    access_data: Stmt,
    update_bit: Stmt,
    update_data_a: Stmt,
    facility_exists: Stmt,
    update_location: Stmt,
    s_id_of: Stmt,
    facilities: Stmt,
    insert_cf: Stmt,
    delete_cf: Stmt,
}

impl Statements {
    pub fn new(dialect: Dialect) -> Statements {
        let mut b = StmtBuilder::new(dialect);
        let insert_cf = match dialect {
            Dialect::Mysql => "INSERT IGNORE INTO call_forwarding (s_id, sf_type, start_time, end_time, numberx) VALUES (?, ?, ?, ?, ?)",
            _ => "INSERT INTO call_forwarding (s_id, sf_type, start_time, end_time, numberx) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        };
        Statements {
            dialect,
            subscriber: b.make(
                "SELECT s_id, sub_nbr, bit_1, bit_2, bit_3, bit_4, bit_5, bit_6, bit_7, bit_8, bit_9, bit_10, \
                 hex_1, hex_2, hex_3, hex_4, hex_5, hex_6, hex_7, hex_8, hex_9, hex_10, \
                 byte2_1, byte2_2, byte2_3, byte2_4, byte2_5, byte2_6, byte2_7, byte2_8, byte2_9, byte2_10, \
                 msc_location, vlr_location FROM subscriber WHERE s_id = ?",
            ),
            new_destination: b.make(
                "SELECT cf.numberx FROM special_facility sf JOIN call_forwarding cf \
                 ON cf.s_id = sf.s_id AND cf.sf_type = sf.sf_type \
                 WHERE sf.s_id = ? AND sf.sf_type = ? AND sf.is_active = 1 \
                 AND cf.start_time <= ? AND cf.end_time > ?",
            ),
            access_data: b.make(
                "SELECT data1, data2, data3, data4 FROM access_info WHERE s_id = ? AND ai_type = ?",
            ),
            update_bit: b.make("UPDATE subscriber SET bit_1 = ? WHERE s_id = ?"),
            update_data_a: b
                .make("UPDATE special_facility SET data_a = ? WHERE s_id = ? AND sf_type = ?"),
            facility_exists: b
                .make("SELECT 1 FROM special_facility WHERE s_id = ? AND sf_type = ?"),
            update_location: b.make("UPDATE subscriber SET vlr_location = ? WHERE sub_nbr = ?"),
            s_id_of: b.make("SELECT s_id FROM subscriber WHERE sub_nbr = ?"),
            facilities: b.make("SELECT sf_type FROM special_facility WHERE s_id = ?"),
            insert_cf: b.make(insert_cf),
            delete_cf: b.make(
                "DELETE FROM call_forwarding WHERE s_id = ? AND sf_type = ? AND start_time = ?",
            ),
        }
    }
}

/// Runs one transaction from its begin to its commit, or to the rollback of an unsuccessful one.
/// On an error the caller rolls back.
pub fn execute(
    conn: &mut dyn Conn,
    st: &Statements,
    input: &Input,
    rows: &mut Rows,
) -> DbResult<Outcome> {
    let found = match input {
        Input::GetSubscriberData { s_id } => {
            conn.begin(TxMode::Read)?;
            conn.run(&st.subscriber, &[P::I(*s_id)], rows)? > 0
        }
        Input::GetNewDestination {
            s_id,
            sf_type,
            start_time,
            end_time,
        } => {
            conn.begin(TxMode::Read)?;
            let params = [
                P::I(*s_id),
                P::I(*sf_type),
                P::I(*start_time),
                P::I(*end_time),
            ];
            conn.run(&st.new_destination, &params, rows)? > 0
        }
        Input::GetAccessData { s_id, ai_type } => {
            conn.begin(TxMode::Read)?;
            conn.run(&st.access_data, &[P::I(*s_id), P::I(*ai_type)], rows)? > 0
        }
        Input::UpdateSubscriberData {
            s_id,
            sf_type,
            bit_1,
            data_a,
        } => {
            conn.begin(TxMode::Write)?;
            conn.run(&st.update_bit, &[P::I(*bit_1), P::I(*s_id)], rows)?;
            let key = [P::I(*s_id), P::I(*sf_type)];
            let changed = conn.run(&st.update_data_a, &[P::I(*data_a), key[0], key[1]], rows)?;
            // MariaDB counts rows changed, not rows found: an unchanged value is not a miss.
            changed > 0
                || (st.dialect == Dialect::Mysql && conn.run(&st.facility_exists, &key, rows)? > 0)
        }
        Input::UpdateLocation {
            sub_nbr,
            vlr_location,
        } => {
            conn.begin(TxMode::Write)?;
            conn.run(
                &st.update_location,
                &[P::I(*vlr_location), P::S(sub_nbr)],
                rows,
            )?;
            true
        }
        Input::InsertCallForwarding {
            sub_nbr,
            sf_type,
            start_time,
            end_time,
            numberx,
        } => {
            conn.begin(TxMode::Write)?;
            match s_id_of(conn, st, sub_nbr, rows)? {
                None => false,
                Some(s_id) => {
                    conn.run(&st.facilities, &[P::I(s_id)], rows)?;
                    let has = (0..rows.len()).any(|r| rows.get(r, 0).i64() == *sf_type);
                    // Without its special facility, or with the key taken, the insert fails.
                    has && conn.run(
                        &st.insert_cf,
                        &[
                            P::I(s_id),
                            P::I(*sf_type),
                            P::I(*start_time),
                            P::I(*end_time),
                            P::S(numberx),
                        ],
                        rows,
                    )? > 0
                }
            }
        }
        Input::DeleteCallForwarding {
            sub_nbr,
            sf_type,
            start_time,
        } => {
            conn.begin(TxMode::Write)?;
            match s_id_of(conn, st, sub_nbr, rows)? {
                None => false,
                Some(s_id) => {
                    let params = [P::I(s_id), P::I(*sf_type), P::I(*start_time)];
                    conn.run(&st.delete_cf, &params, rows)? > 0
                }
            }
        }
    };
    if found {
        conn.commit()?;
        Ok(Outcome::Committed)
    } else {
        conn.rollback()?;
        Ok(Outcome::Unsuccessful)
    }
}

fn s_id_of(
    conn: &mut dyn Conn,
    st: &Statements,
    sub_nbr: &str,
    rows: &mut Rows,
) -> DbResult<Option<i64>> {
    conn.run(&st.s_id_of, &[P::S(sub_nbr)], rows)?;
    Ok((!rows.is_empty()).then(|| rows.get(0, 0).i64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_adds_up_and_tags_follow_the_brokerage() {
        assert_eq!(TxType::MIX_PCT.iter().sum::<u32>(), 100);
        assert_eq!(TxType::GetSubscriberData.tag(), 31);
        assert_eq!(TxType::DeleteCallForwarding.tag(), 37);
        const { assert!(FIRST_TAG > oltplab_trace::BROKERAGE_FIRST_TAG + 9) };
        for (t, n) in TxType::ALL.iter().zip(TxType::NAMES) {
            assert_eq!(t.name(), n);
            assert_eq!(oltplab_trace::tag_name(t.tag()), n, "traces name the tag");
        }
    }
}
