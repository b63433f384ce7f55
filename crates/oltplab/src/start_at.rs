//! `--start-at TIME`: a measurement (`oltplab device`, a TPC-C driver) starts at one wall-clock
//! time, so that drivers on several machines measure the same window. Below every command and
//! workload, which all may read it.

use std::time::{Duration, SystemTime};

use oltplab_core::{Error, Result};
use oltplab_metrics::schema::{parse_time, rfc3339_micros};

/// A wait longer than this is more likely a mistyped date than a plan.
const START_AT_AHEAD_MAX: Duration = Duration::from_secs(24 * 3600);

/// Parses `--start-at` (RFC 3339 or unix seconds) into the canonical RFC 3339 form stored in the
/// config; refuses a time that has passed or lies more than a day ahead.
pub fn parse_start_at(text: &str) -> Result<String> {
    let t = parse_time(text).ok_or_else(|| {
        Error::usage(format!(
            "--start-at {text} is not a time: write RFC 3339 (e.g. 2026-11-22T10:00:00Z or 2026-11-22T19:00:00+09:00) or unix seconds"
        ))
    })?;
    let now = SystemTime::now();
    if t <= now {
        return Err(Error::usage(format!(
            "--start-at {text} has passed: give a time a little ahead, so that every driver is connected by then (e.g. date -u -d '+1 min' +%FT%TZ)"
        )));
    }
    if t.duration_since(now).unwrap_or_default() > START_AT_AHEAD_MAX {
        return Err(Error::usage(format!(
            "--start-at {text} is more than a day ahead: check the date (times without a zone are UTC)"
        )));
    }
    Ok(rfc3339_micros(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times() {
        let ahead = SystemTime::now() + Duration::from_secs(60);
        let secs = ahead
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let canonical = parse_start_at(&secs.to_string()).unwrap();
        assert!(canonical.ends_with('Z'), "{canonical}");
        assert_eq!(
            parse_time(&canonical).unwrap(),
            parse_time(&secs.to_string()).unwrap()
        );
        for (bad, says) in [
            ("soon", "is not a time"),
            ("2020-01-01T00:00:00Z", "has passed"),
            ("4102444800", "more than a day ahead"),
        ] {
            let e = parse_start_at(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }
}
