//! Sizes (`16k`, `1G`: powers of 1024) and durations (`500ms`, `10s`, `2m`) as users type them, and
//! their human-readable forms.

use std::time::Duration;

const KIB: u64 = 1024;

/// Parses a size such as `512`, `16k`, `4KiB`, `1G`, `2t` (case-insensitive, powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits_end);
    let bad = || {
        format!("'{text}' is not a size: write a whole number with an optional k, m, g or t suffix, e.g. 16k or 1g")
    };
    if number.is_empty() {
        return Err(bad());
    }
    let multiplier = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => KIB.pow(2),
        "g" | "gb" | "gib" => KIB.pow(3),
        "t" | "tb" | "tib" => KIB.pow(4),
        _ => return Err(bad()),
    };
    let value: u64 = number.parse().map_err(|_| bad())?;
    value
        .checked_mul(multiplier)
        .ok_or_else(|| format!("'{text}' is too large a size"))
}

/// Parses a duration such as `500ms`, `10s`, `2m`, `1h`; a bare number means seconds (as in fio).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let number_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, suffix) = t.split_at(number_end);
    let bad = || {
        format!("'{text}' is not a duration: write a number with an ms, s, m or h suffix, e.g. 10s or 500ms")
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match suffix.to_ascii_lowercase().as_str() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    if !seconds.is_finite() || !(0.0..=1.0e7).contains(&seconds) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `16384` → `16 KiB`, `1536` → `1.5 KiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Compact option-style form: `16384` → `16k`, `1073741824` → `1g`, `1000` → `1000`.
pub fn format_size_short(bytes: u64) -> String {
    for (suffix, unit) in [
        ("t", KIB.pow(4)),
        ("g", KIB.pow(3)),
        ("m", KIB.pow(2)),
        ("k", KIB),
    ] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// Nanoseconds in the unit that keeps 3–4 significant digits: `850ns`, `12.3µs`, `4.56ms`, `1.20s`.
pub fn format_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// `12345.6` → `12,346`.
pub fn format_count(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_powers_of_1024() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("16k"), Ok(16 * 1024));
        assert_eq!(parse_size("16KiB"), Ok(16 * 1024));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("2t"), Ok(2 << 40));
    }

    #[test]
    fn bad_sizes_say_what_is_expected() {
        for bad in [
            "",
            "k",
            "16x",
            "1.5g",
            "-1",
            "16 kk",
            "99999999999999999999",
        ] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.contains("size"), "{bad}: {err}");
        }
        assert!(parse_size("20000000t").unwrap_err().contains("too large"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("0.5s"), Ok(Duration::from_millis(500)));
        for bad in ["", "s", "10x", "-1s", "1e9", "ten"] {
            assert!(
                parse_duration(bad).unwrap_err().contains("duration"),
                "{bad}"
            );
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(16384), "16 KiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_size_short(16384), "16k");
        assert_eq!(format_size_short(1 << 30), "1g");
        assert_eq!(format_size_short(1000), "1000");
        assert_eq!(format_ns(850.0), "850ns");
        assert_eq!(format_ns(12_345.0), "12.3µs");
        assert_eq!(format_count(1234567.4), "1,234,567");
        assert_eq!(format_count(12.0), "12");
    }
}
