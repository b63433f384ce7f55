//! How figures look to a reader. Exporters for machines (CSV) use the raw numbers instead.

use oltplab_core::units::{format_bytes, format_count, format_ns};

/// What a number measures, which decides how it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Operations, transactions, IOPS: `12,346`.
    Count,
    /// A rate or figure with decimals where they matter: `3.47`, `1,234`.
    Number,
    Ns,
    Bytes,
    /// Bytes per second.
    BytesPerS,
    /// A factor relative to a baseline: `43.2×`.
    Ratio,
    /// A share 0…1 shown as percent.
    Share,
    Seconds,
    Text,
}

/// The placeholder for a figure the result does not have.
pub const MISSING: &str = "—";

pub fn value(v: Option<f64>, unit: Unit) -> String {
    match v {
        None => MISSING.to_string(),
        Some(v) if !v.is_finite() => MISSING.to_string(),
        Some(v) => match unit {
            Unit::Count => format_count(v),
            Unit::Number => number(v),
            Unit::Ns => format_ns(v),
            Unit::Bytes => format_bytes(v.max(0.0) as u64),
            Unit::BytesPerS => format!("{}/s", format_bytes(v.max(0.0) as u64)),
            Unit::Ratio => ratio(v),
            Unit::Share => format!("{:.1} %", v * 100.0),
            Unit::Seconds => format!("{} s", number(v)),
            Unit::Text => number(v),
        },
    }
}

/// Three significant digits for small figures, thousands separators for large ones.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        let digits = format_count(a);
        if v < 0.0 {
            format!("-{digits}")
        } else {
            digits
        }
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `43.2×`, `0.87×`, `1/16.7×` for factors well below one (S1 states latencies that way).
pub fn ratio(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        MISSING.to_string()
    } else if v < 0.1 {
        format!("1/{}×", number(1.0 / v))
    } else {
        format!("{}×", number(v))
    }
}

/// Short axis labels: `950`, `12k`, `1.5M`.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if scaled.abs() >= 100.0 || scaled.fract() == 0.0 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// Axis label for a factor: `100×`, `1×`, `1/10×`.
pub fn ratio_short(v: f64) -> String {
    if v >= 1.0 || v <= 0.0 {
        format!("{}×", si(v))
    } else {
        format!("1/{}×", si(1.0 / v))
    }
}

/// Axis label for nanoseconds: `100ns`, `10µs`, `1.5ms`, `2s`.
pub fn ns_short(v: f64) -> String {
    let (scaled, suffix) = if v >= 1e9 {
        (v / 1e9, "s")
    } else if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "µs")
    } else {
        (v, "ns")
    };
    format!("{}{suffix}", si(scaled))
}

/// Escapes text for HTML and SVG content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(value(None, Unit::Count), "—");
        assert_eq!(value(Some(f64::NAN), Unit::Ns), "—");
        assert_eq!(value(Some(12345.6), Unit::Count), "12,346");
        assert_eq!(value(Some(0.734), Unit::Share), "73.4 %");
        assert_eq!(number(-1234.0), "-1,234");
        assert_eq!(number(4.5678), "4.57");
        assert_eq!(ratio(43.2), "43.2×");
        assert_eq!(ratio(1.0 / 16.7), "1/16.7×");
        assert_eq!(ratio(0.0), "—");
        assert_eq!(si(12_000.0), "12k");
        assert_eq!(si(1_500_000.0), "1.5M");
        assert_eq!(si(0.5), "0.5");
        assert_eq!(ns_short(1_500_000.0), "1.5ms");
        assert_eq!(ratio_short(0.01), "1/100×");
        assert_eq!(ratio_short(100.0), "100×");
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
