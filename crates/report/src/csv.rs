//! CSV in long form, one figure per line: `result,kind,table,row,column,value`. Numbers are raw (full
//! precision, no thousands separators, units named in the column: `lat_ns_p99`), so a spreadsheet
//! computes with them and a pivot table gives any layout.

use std::fmt::Write as _;

use crate::model::Report;

pub fn write(report: &Report) -> String {
    let mut out = String::from("result,kind,table,row,column,value\n");
    for s in &report.sections {
        for t in &s.tables {
            for (i, row) in t.rows.iter().enumerate() {
                let row_key = t.row_key(i);
                for (cell, col) in row.iter().zip(&t.columns).skip(1) {
                    let value = cell.raw();
                    if value.is_empty() {
                        continue;
                    }
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{}",
                        field(&s.result),
                        field(s.kind),
                        field(&t.id),
                        field(&row_key),
                        field(&col.key),
                        field(&value)
                    );
                }
            }
        }
    }
    out
}

/// RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled. A leading
/// `=`, `+`, `-` or `@` in text gets a `'` so a spreadsheet does not run it as a formula.
fn field(text: &str) -> String {
    let numeric = text.parse::<f64>().is_ok();
    let text = if !numeric && text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(field("-12.5"), "-12.5");
    }
}
