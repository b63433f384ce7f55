//! The initial database (spec 4.3.3.1), generated in chunks that loader threads take one at a time.
//! Each chunk has its own seed, so a load is reproducible whatever the thread count.

use super::random::{last_name, Constants, TpccRng, A_C_LAST};
use super::schema::*;
use crate::sql::Batch;

pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3000;
pub const ORDERS: i64 = 3000;
pub const ITEMS: i64 = 100_000;
/// Orders with ids from here on are undelivered and have a NEW-ORDER row.
pub const FIRST_NEW_ORDER: i64 = 2101;
const ITEM_CHUNK: i64 = 20_000;
const STOCK_CHUNK: i64 = 20_000;

/// One unit of loading work, committed as one transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunk {
    Items { first: i64, last: i64 },
    Warehouse { w: i64 },
    Stock { w: i64, first: i64, last: i64 },
    Customers { w: i64, d: i64 },
    Orders { w: i64, d: i64 },
}

impl Chunk {
    /// Rows this chunk writes, for the progress bar.
    pub fn rows(&self) -> u64 {
        match *self {
            Chunk::Items { first, last } | Chunk::Stock { first, last, .. } => {
                (last - first + 1) as u64
            }
            Chunk::Warehouse { .. } => 1 + DISTRICTS as u64,
            Chunk::Customers { .. } => 2 * CUSTOMERS as u64,
            // 3,000 orders, ~30,000 lines, 900 new orders.
            Chunk::Orders { .. } => 3000 + 30_000 + 900,
        }
    }
}

/// Every chunk of a database of `warehouses`, items first.
pub fn plan(warehouses: i64) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut first = 1;
    while first <= ITEMS {
        let last = (first + ITEM_CHUNK - 1).min(ITEMS);
        out.push(Chunk::Items { first, last });
        first = last + 1;
    }
    for w in 1..=warehouses {
        out.push(Chunk::Warehouse { w });
        let mut first = 1;
        while first <= ITEMS {
            let last = (first + STOCK_CHUNK - 1).min(ITEMS);
            out.push(Chunk::Stock { w, first, last });
            first = last + 1;
        }
        for d in 1..=DISTRICTS {
            out.push(Chunk::Customers { w, d });
            out.push(Chunk::Orders { w, d });
        }
    }
    out
}

/// Street 1, street 2, city, state, zip.
fn address(rng: &mut TpccRng, b: &mut Batch) {
    for _ in 0..3 {
        b.str_with(|o| rng.astring(10, 20, o));
    }
    b.str_with(|o| rng.state(o));
    b.str_with(|o| rng.zip(o));
}

/// Generates the batches of one chunk. `now_us` is the load's timestamp, `c` its NURand constants.
pub fn generate(chunk: Chunk, seed: u64, c: &Constants, now_us: i64) -> Vec<Batch> {
    let mut rng = TpccRng::new(seed ^ chunk_seed(chunk));
    let money = |cents: i64| cents as f64 / 100.0;
    match chunk {
        Chunk::Items { first, last } => {
            let mut b = Batch::new("item", ITEM_COLS, (last - first + 1) as usize);
            for i in first..=last {
                b.int(i);
                b.int(rng.uniform(1, 10_000));
                b.str_with(|o| rng.astring(14, 24, o));
                b.money(money(rng.uniform(100, 10_000)));
                b.str_with(|o| rng.data_original(o));
            }
            vec![b]
        }
        Chunk::Warehouse { w } => {
            let mut wb = Batch::new("warehouse", WAREHOUSE_COLS, 1);
            wb.int(w);
            wb.str_with(|o| rng.astring(6, 10, o));
            address(&mut rng, &mut wb);
            wb.rate(rng.uniform(0, 2000) as f64 / 10_000.0);
            wb.money(money(30_000_000));
            let mut db = Batch::new("district", DISTRICT_COLS, DISTRICTS as usize);
            for d in 1..=DISTRICTS {
                db.int(d);
                db.int(w);
                db.str_with(|o| rng.astring(6, 10, o));
                address(&mut rng, &mut db);
                db.rate(rng.uniform(0, 2000) as f64 / 10_000.0);
                db.money(money(3_000_000));
                db.int(ORDERS + 1);
            }
            vec![wb, db]
        }
        Chunk::Stock { w, first, last } => {
            let mut b = Batch::new("stock", STOCK_COLS, (last - first + 1) as usize);
            for i in first..=last {
                b.int(i);
                b.int(w);
                b.int(rng.uniform(10, 100));
                for _ in 0..10 {
                    b.str_with(|o| rng.astring(24, 24, o));
                }
                b.int(0);
                b.int(0);
                b.int(0);
                b.str_with(|o| rng.data_original(o));
            }
            vec![b]
        }
        Chunk::Customers { w, d } => {
            let mut cb = Batch::new("customer", CUSTOMER_COLS, CUSTOMERS as usize);
            let mut hb = Batch::new("history", HISTORY_COLS, CUSTOMERS as usize);
            for cid in 1..=CUSTOMERS {
                cb.int(cid);
                cb.int(d);
                cb.int(w);
                cb.str_with(|o| rng.astring(8, 16, o));
                cb.str("OE");
                // The first 1,000 customers get the names 0…999 in order, so every name exists.
                let n = if cid <= 1000 {
                    cid - 1
                } else {
                    rng.nurand(A_C_LAST, 0, 999, c.c_last)
                };
                cb.str_with(|o| last_name(n, o));
                address(&mut rng, &mut cb);
                cb.str_with(|o| rng.nstring(16, 16, o));
                cb.time(now_us);
                cb.str(if rng.percent(10) { "BC" } else { "GC" });
                cb.money(money(5_000_000));
                cb.rate(rng.uniform(0, 5000) as f64 / 10_000.0);
                cb.money(money(-1000));
                cb.money(money(1000));
                cb.int(1);
                cb.int(0);
                cb.str_with(|o| rng.astring(300, 500, o));

                hb.int(cid);
                hb.int(d);
                hb.int(w);
                hb.int(d);
                hb.int(w);
                hb.time(now_us);
                hb.money(money(1000));
                hb.str_with(|o| rng.astring(12, 24, o));
            }
            vec![cb, hb]
        }
        Chunk::Orders { w, d } => {
            let customers = rng.permutation(CUSTOMERS);
            let mut ob = Batch::new("orders", ORDERS_COLS, ORDERS as usize);
            // The lines of delivered and of new orders in two batches (each in key order, the
            // first before the second): in the first, delivery date and amount are the same in
            // every row, which MariaDB's loader then sends once per batch (see
            // `Batch::constant_columns`).
            let mut delivered_lines =
                Batch::new("order_line", ORDER_LINE_COLS, 10 * ORDERS as usize);
            let mut new_lines = Batch::new("order_line", ORDER_LINE_COLS, 10 * 900);
            let mut nb = Batch::new("new_order", NEW_ORDER_COLS, 900);
            for o in 1..=ORDERS {
                let delivered = o < FIRST_NEW_ORDER;
                let lines = rng.uniform(5, 15);
                ob.int(o);
                ob.int(d);
                ob.int(w);
                ob.int(customers[(o - 1) as usize]);
                ob.time(now_us);
                if delivered {
                    ob.int(rng.uniform(1, 10));
                } else {
                    ob.null();
                }
                ob.int(lines);
                ob.int(1);
                let lb = if delivered {
                    &mut delivered_lines
                } else {
                    &mut new_lines
                };
                for n in 1..=lines {
                    lb.int(o);
                    lb.int(d);
                    lb.int(w);
                    lb.int(n);
                    lb.int(rng.uniform(1, ITEMS));
                    lb.int(w);
                    if delivered {
                        lb.time(now_us);
                    } else {
                        lb.null();
                    }
                    lb.int(5);
                    lb.money(if delivered {
                        0.0
                    } else {
                        money(rng.uniform(1, 999_999))
                    });
                    lb.str_with(|o| rng.astring(24, 24, o));
                }
                if !delivered {
                    nb.int(o);
                    nb.int(d);
                    nb.int(w);
                }
            }
            vec![ob, delivered_lines, new_lines, nb]
        }
    }
}

fn chunk_seed(chunk: Chunk) -> u64 {
    let (kind, a, b) = match chunk {
        Chunk::Items { first, .. } => (1u64, first, 0),
        Chunk::Warehouse { w } => (2, w, 0),
        Chunk::Stock { w, first, .. } => (3, w, first),
        Chunk::Customers { w, d } => (4, w, d),
        Chunk::Orders { w, d } => (5, w, d),
    };
    (kind << 56) ^ ((a as u64) << 24) ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::P;

    fn rows_of(warehouses: i64, table: &str) -> usize {
        let c = Constants {
            c_last: 100,
            c_id: 1,
            ol_i_id: 2,
        };
        plan(warehouses)
            .into_iter()
            .filter(|ch| match ch {
                Chunk::Items { .. } => table == "item",
                Chunk::Warehouse { .. } => table == "warehouse" || table == "district",
                Chunk::Stock { .. } => table == "stock",
                Chunk::Customers { .. } => table == "customer" || table == "history",
                Chunk::Orders { .. } => {
                    table == "orders" || table == "order_line" || table == "new_order"
                }
            })
            .flat_map(|ch| generate(ch, 7, &c, 0))
            .filter(|b| b.table == table)
            .map(|b| b.rows())
            .sum()
    }

    #[test]
    fn one_warehouse_has_the_specified_cardinalities() {
        assert_eq!(rows_of(1, "warehouse"), 1);
        assert_eq!(rows_of(1, "district"), 10);
        assert_eq!(rows_of(1, "customer"), 30_000);
        assert_eq!(rows_of(1, "history"), 30_000);
        assert_eq!(rows_of(1, "orders"), 30_000);
        assert_eq!(rows_of(1, "new_order"), 9_000);
        let lines = rows_of(1, "order_line");
        // 5–15 lines per order, 10 on average: 300,000 ± a few thousand.
        assert!((290_000..=310_000).contains(&lines), "{lines}");
    }

    #[test]
    fn chunk_plan_covers_items_and_stock_once() {
        let p = plan(2);
        let items: i64 = p
            .iter()
            .map(|c| match c {
                Chunk::Items { first, last } => last - first + 1,
                _ => 0,
            })
            .sum();
        assert_eq!(items, ITEMS);
        let stock: i64 = p
            .iter()
            .map(|c| match c {
                Chunk::Stock { first, last, .. } => last - first + 1,
                _ => 0,
            })
            .sum();
        assert_eq!(stock, 2 * ITEMS);
    }

    #[test]
    fn customers_get_every_last_name_and_the_spec_values() {
        let c = Constants {
            c_last: 33,
            c_id: 1,
            ol_i_id: 2,
        };
        let batches = generate(Chunk::Customers { w: 1, d: 3 }, 1, &c, 0);
        let cust = &batches[0];
        let ncol = CUSTOMER_COLS.len();
        let last_at = CUSTOMER_COLS.iter().position(|c| *c == "c_last").unwrap();
        let mut names = std::collections::HashSet::new();
        let mut bc = 0;
        assert_eq!(cust.rows(), CUSTOMERS as usize);
        for i in 0..cust.rows() {
            let row: Vec<P> = cust.row(i).collect();
            assert_eq!(row.len(), ncol);
            if let P::S(name) = row[last_at] {
                if i < 1000 {
                    let mut want = String::new();
                    last_name(i as i64, &mut want);
                    assert_eq!(name, want, "customer {} must be named {want}", i + 1);
                }
                names.insert(name.to_string());
            }
            if row[13] == P::S("BC") {
                bc += 1;
            }
            assert_eq!(row[16], P::F(-10.0));
            if let P::S(data) = row[20] {
                assert!((300..=500).contains(&data.len()));
            }
        }
        assert_eq!(names.len(), 1000);
        assert!((200..400).contains(&bc), "10 % bad credit: {bc}");
    }

    #[test]
    fn same_seed_same_data() {
        let c = Constants {
            c_last: 1,
            c_id: 1,
            ol_i_id: 1,
        };
        let a = generate(Chunk::Warehouse { w: 2 }, 9, &c, 5);
        let b = generate(Chunk::Warehouse { w: 2 }, 9, &c, 5);
        assert_eq!(a, b);
    }
}
