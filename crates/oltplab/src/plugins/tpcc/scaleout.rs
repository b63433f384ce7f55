//! Several drivers against one database: `--warehouse-range A:B` gives this driver's terminals the
//! home warehouses A…B, and `--start-at TIME` (`crate::start_at`) starts the warm-up at one
//! wall-clock time so that the drivers' measured windows coincide; `oltplab merge` then adds their
//! results up.

use oltplab_core::{Error, Result};
use serde::Serialize;

/// Home warehouses `first..=last`, 1-based (`config.warehouse_range`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarehouseRange {
    pub first: u32,
    pub last: u32,
}

impl WarehouseRange {
    /// Parses `A:B` (or `A`, one warehouse).
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || {
            Error::usage(format!(
                "--warehouse-range {text} is not a range: write the first and last home warehouse, e.g. --warehouse-range 1:10"
            ))
        };
        let (a, b) = text.split_once(':').unwrap_or((text, text));
        let first: u32 = a.trim().parse().map_err(|_| bad())?;
        let last: u32 = b.trim().parse().map_err(|_| bad())?;
        if first == 0 {
            return Err(Error::usage(format!(
                "--warehouse-range {text} starts at 0, but warehouses are numbered from 1: write e.g. --warehouse-range 1:{}",
                last.max(1)
            )));
        }
        if first > last {
            return Err(Error::usage(format!(
                "--warehouse-range {text} ends before it starts: write the lower warehouse first, --warehouse-range {last}:{first}"
            )));
        }
        Ok(WarehouseRange { first, last })
    }

    pub fn count(&self) -> u32 {
        self.last - self.first + 1
    }

    /// Refuses a range beyond the loaded warehouses.
    pub fn check_loaded(&self, loaded: u32, location: &str) -> Result<()> {
        if self.last > loaded {
            return Err(Error::usage(format!(
                "--warehouse-range {}:{} goes beyond the {loaded} warehouse{} {location} was loaded with: end it at {loaded} at most",
                self.first,
                self.last,
                if loaded == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }

    pub fn home_warehouses(&self) -> (i64, i64) {
        (self.first as i64, self.last as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(
            WarehouseRange::parse("3:7").unwrap(),
            WarehouseRange { first: 3, last: 7 }
        );
        assert_eq!(WarehouseRange::parse("4").unwrap().count(), 1);
        for (bad, says) in [
            ("x:2", "is not a range"),
            ("1-2", "is not a range"),
            ("0:2", "numbered from 1"),
            ("5:2", "--warehouse-range 2:5"),
            (":", "is not a range"),
        ] {
            let e = WarehouseRange::parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
        let r = WarehouseRange::parse("2:3").unwrap();
        assert!(r.check_loaded(3, "db").is_ok());
        let e = r.check_loaded(2, "db").unwrap_err();
        assert!(
            e.to_string().contains("2 warehouses db was loaded with"),
            "{e}"
        );
    }
}
