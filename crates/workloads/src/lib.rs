//! OLTP workloads and the driver loop that runs them. A workload executes one transaction against a
//! [`sql::Conn`] and returns its status; the driver owns terminals, the mix, keying/think times,
//! warm-up, retries and measurement.

pub mod attempt;
pub mod brokerage;
pub mod bulk;
pub mod check;
pub mod driver;
pub mod orders;
pub mod random;
pub mod sql;
pub mod tpcc;
