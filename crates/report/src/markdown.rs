//! GitHub-flavoured Markdown: the report's tables, warnings and notes, for CI logs and pull requests.

use std::fmt::Write as _;

use crate::model::{Cell, Report, Table};

pub fn write(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n\n{}\n", report.title, inline(&report.subtitle));
    for s in &report.sections {
        let _ = writeln!(out, "## {}\n", inline(&s.title));
        for (kind, msg) in &s.warnings {
            let _ = writeln!(out, "> **Warning** ({kind}): {}", inline(msg));
        }
        if !s.warnings.is_empty() {
            out.push('\n');
        }
        for n in &s.notes {
            let _ = writeln!(out, "- {}", inline(n));
        }
        if !s.notes.is_empty() {
            out.push('\n');
        }
        for t in &s.tables {
            table(&mut out, t);
        }
    }
    out
}

fn table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "### {}\n", inline(&t.title));
    let header: Vec<String> = t
        .columns
        .iter()
        .map(|c| {
            if c.label.is_empty() {
                " ".into()
            } else {
                inline(&c.label)
            }
        })
        .collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    // Figures are right-aligned; a column is numeric when its second row onwards hold numbers.
    let align: Vec<&str> = (0..t.columns.len())
        .map(|j| {
            let numeric = j > 0
                && t.rows
                    .iter()
                    .any(|r| matches!(r[j], Cell::Num(_) | Cell::Val(..)));
            if numeric {
                "---:"
            } else {
                "---"
            }
        })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for (i, row) in t.rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&t.columns)
            .enumerate()
            .map(|(j, (c, col))| {
                let text = inline(&c.show(col.unit));
                if j == 0 && t.highlight.get(i).copied().unwrap_or(false) {
                    format!("**{text}**")
                } else {
                    text
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if t.highlight.iter().any(|h| *h) {
        out.push_str("\nRows in **bold** differ between the results.\n");
    }
    out.push('\n');
}

/// Text that cannot break a table row or start Markdown by accident.
fn inline(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}
