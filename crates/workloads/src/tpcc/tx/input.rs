//! Drawing each transaction's inputs as the spec says: the terminal's home, customers, lines.

use super::TxType;
use crate::tpcc::gen::{CUSTOMERS, DISTRICTS, ITEMS};
use crate::tpcc::random::{last_name, Constants, TpccRng, A_C_ID, A_C_LAST, A_OL_I_ID};

/// Who a terminal is: its warehouse, and with keying/think times its own district (spec 5.5.1.1),
/// which only Stock-Level uses (2.8.1.1); New-Order, Payment and Order-Status draw their district
/// per transaction (2.4.1.2, 2.5.1.2, 2.6.1.2), so a warehouse's ten terminals meet on its
/// district rows as the spec intends.
#[derive(Clone, Copy, Debug)]
pub struct Home {
    /// None: draw a warehouse per transaction (fewer terminals than warehouses).
    pub w: Option<i64>,
    /// Stock-Level's district; None: drawn per transaction.
    pub d: Option<i64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CustomerSel {
    Id(i64),
    Last(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub i_id: i64,
    pub supply_w: i64,
    pub quantity: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    NewOrder {
        w: i64,
        d: i64,
        c: i64,
        lines: Vec<Line>,
        /// The last line names an unused item: the transaction rolls back (spec 2.4.1.4).
        rollback: bool,
    },
    Payment {
        w: i64,
        d: i64,
        c_w: i64,
        c_d: i64,
        customer: CustomerSel,
        amount_cents: i64,
    },
    OrderStatus {
        w: i64,
        d: i64,
        customer: CustomerSel,
    },
    Delivery {
        w: i64,
        carrier: i64,
    },
    StockLevel {
        w: i64,
        d: i64,
        threshold: i64,
    },
}

/// What the inputs are drawn from: the scale and the run's NURand constants.
pub struct InputGen {
    pub warehouses: i64,
    /// First and last warehouse a terminal without a fixed home draws its home from (a driver's
    /// `--warehouse-range`); remote warehouses come from all `warehouses`.
    pub home_warehouses: (i64, i64),
    pub c: Constants,
}

impl InputGen {
    fn other_warehouse(&self, rng: &mut TpccRng, home: i64) -> i64 {
        if self.warehouses == 1 {
            return home;
        }
        let other = rng.uniform(1, self.warehouses - 1);
        if other >= home {
            other + 1
        } else {
            other
        }
    }

    fn customer(&self, rng: &mut TpccRng) -> CustomerSel {
        if rng.percent(60) {
            let mut name = String::with_capacity(16);
            last_name(rng.nurand(A_C_LAST, 0, 999, self.c.c_last), &mut name);
            CustomerSel::Last(name)
        } else {
            CustomerSel::Id(rng.nurand(A_C_ID, 1, CUSTOMERS, self.c.c_id))
        }
    }

    pub fn draw(&self, kind: TxType, home: Home, rng: &mut TpccRng) -> Input {
        let w = home
            .w
            .unwrap_or_else(|| rng.uniform(self.home_warehouses.0, self.home_warehouses.1));
        let d = match (kind, home.d) {
            (TxType::StockLevel, Some(d)) => d,
            _ => rng.uniform(1, DISTRICTS),
        };
        match kind {
            TxType::NewOrder => {
                let n = rng.uniform(5, 15) as usize;
                let rollback = rng.percent(1);
                let lines = (0..n)
                    .map(|k| Line {
                        i_id: if rollback && k == n - 1 {
                            ITEMS + 1
                        } else {
                            rng.nurand(A_OL_I_ID, 1, ITEMS, self.c.ol_i_id)
                        },
                        supply_w: if rng.percent(99) {
                            w
                        } else {
                            self.other_warehouse(rng, w)
                        },
                        quantity: rng.uniform(1, 10),
                    })
                    .collect();
                Input::NewOrder {
                    w,
                    d,
                    c: rng.nurand(A_C_ID, 1, CUSTOMERS, self.c.c_id),
                    lines,
                    rollback,
                }
            }
            TxType::Payment => {
                let (c_w, c_d) = if rng.percent(85) {
                    (w, d)
                } else {
                    (self.other_warehouse(rng, w), rng.uniform(1, DISTRICTS))
                };
                Input::Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    customer: self.customer(rng),
                    amount_cents: rng.uniform(100, 500_000),
                }
            }
            TxType::OrderStatus => Input::OrderStatus {
                w,
                d,
                customer: self.customer(rng),
            },
            TxType::Delivery => Input::Delivery {
                w,
                carrier: rng.uniform(1, 10),
            },
            TxType::StockLevel => Input::StockLevel {
                w,
                d,
                threshold: rng.uniform(10, 20),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With keying/think times a terminal has its own district, but only Stock-Level keeps it:
    /// the others spread evenly over the warehouse's ten (spec 2.4.1.2, 2.5.1.2, 2.6.1.2, 2.8.1.1).
    #[test]
    fn keying_terminals_draw_their_district_except_for_stock_level() {
        let gen = InputGen {
            warehouses: 1,
            home_warehouses: (1, 1),
            c: Constants::default(),
        };
        let home = Home {
            w: Some(1),
            d: Some(7),
        };
        let mut rng = TpccRng::new(3);
        let n = 20_000;
        for kind in TxType::ALL {
            let mut per_district = [0u32; DISTRICTS as usize];
            for _ in 0..n {
                let d = match gen.draw(kind, home, &mut rng) {
                    Input::NewOrder { d, .. }
                    | Input::Payment { d, .. }
                    | Input::OrderStatus { d, .. }
                    | Input::StockLevel { d, .. } => d,
                    Input::Delivery { .. } => continue,
                };
                per_district[(d - 1) as usize] += 1;
            }
            match kind {
                TxType::StockLevel => assert_eq!(per_district[6], n, "{per_district:?}"),
                TxType::Delivery => assert_eq!(per_district.iter().sum::<u32>(), 0),
                _ => {
                    for (i, &c) in per_district.iter().enumerate() {
                        let share = c as f64 / n as f64;
                        assert!(
                            (0.085..0.115).contains(&share),
                            "{kind:?} district {}: {share}",
                            i + 1
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn new_order_inputs() {
        let gen = InputGen {
            warehouses: 4,
            home_warehouses: (1, 4),
            c: Constants {
                c_last: 1,
                c_id: 2,
                ol_i_id: 3,
            },
        };
        let mut rng = TpccRng::new(5);
        let home = Home {
            w: Some(2),
            d: Some(7),
        };
        let (mut orders, mut rollbacks, mut lines_n, mut remote) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            let Input::NewOrder {
                w,
                d,
                lines,
                rollback,
                ..
            } = gen.draw(TxType::NewOrder, home, &mut rng)
            else {
                panic!()
            };
            assert_eq!(w, 2);
            assert!((1..=DISTRICTS).contains(&d));
            assert!((5..=15).contains(&lines.len()));
            orders += 1;
            if rollback {
                rollbacks += 1;
                assert_eq!(lines.last().unwrap().i_id, ITEMS + 1);
            }
            for l in &lines {
                lines_n += 1;
                if l.supply_w != 2 {
                    remote += 1;
                    assert!((1..=4).contains(&l.supply_w));
                }
                assert!((1..=10).contains(&l.quantity));
            }
        }
        let rb = rollbacks as f64 / orders as f64;
        assert!((0.006..0.014).contains(&rb), "rollbacks {rb}");
        let rm = remote as f64 / lines_n as f64;
        assert!((0.007..0.013).contains(&rm), "remote lines {rm}");
    }

    #[test]
    fn payment_inputs() {
        let gen = InputGen {
            warehouses: 3,
            home_warehouses: (1, 3),
            c: Constants {
                c_last: 200,
                c_id: 2,
                ol_i_id: 3,
            },
        };
        let mut rng = TpccRng::new(6);
        let home = Home {
            w: Some(1),
            d: None,
        };
        let (mut by_name, mut remote) = (0, 0);
        let n = 20_000;
        for _ in 0..n {
            let Input::Payment {
                w,
                c_w,
                customer,
                amount_cents,
                ..
            } = gen.draw(TxType::Payment, home, &mut rng)
            else {
                panic!()
            };
            assert_eq!(w, 1);
            assert!((100..=500_000).contains(&amount_cents));
            if c_w != w {
                remote += 1;
            }
            if matches!(customer, CustomerSel::Last(_)) {
                by_name += 1;
            }
        }
        let bn = by_name as f64 / n as f64;
        assert!((0.58..0.62).contains(&bn), "by name {bn}");
        let rm = remote as f64 / n as f64;
        assert!((0.135..0.165).contains(&rm), "remote {rm}");
    }

    #[test]
    fn one_warehouse_never_goes_remote() {
        let gen = InputGen {
            warehouses: 1,
            home_warehouses: (1, 1),
            c: Constants {
                c_last: 0,
                c_id: 0,
                ol_i_id: 0,
            },
        };
        let mut rng = TpccRng::new(1);
        for _ in 0..1000 {
            if let Input::Payment { c_w, .. } =
                gen.draw(TxType::Payment, Home { w: None, d: None }, &mut rng)
            {
                assert_eq!(c_w, 1);
            }
        }
    }
}
