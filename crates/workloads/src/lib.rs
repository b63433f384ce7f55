//! OLTP workloads and the driver that runs them ([`driver`]). A workload draws a terminal's next
//! transaction and executes one against a [`sql::Conn`], returning its outcome; the driver owns
//! terminals, keying/think times, warm-up, the measured window, retries and statistics.

pub mod attempt;
pub mod brokerage;
pub mod bulk;
pub mod check;
pub mod driver;
pub mod orders;
pub mod random;
pub mod sql;
pub mod tatp;
pub mod tpcc;
