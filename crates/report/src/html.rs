//! The HTML page: one file with its styles and charts inline — no script, no font, no network — that
//! reflows on a phone and prints cleanly.

use std::fmt::Write as _;

use crate::fmt::esc;
use crate::model::{Cell, Report, Section, Table};

const CSS: &str = r#"
:root{--fg:#1b1b1b;--muted:#5a5a5a;--line:#d9d9d9;--bg-alt:#f5f6f8;--accent:#0b5fa5;--warn:#8a4b00;--warn-bg:#fff4e0}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:var(--fg);background:#fff}
header,main,footer{max-width:76rem;margin:0 auto;padding:0 1rem}
h1{font-size:1.6rem;margin:1.2rem 0 .2rem}
h2{font-size:1.3rem;margin:2rem 0 .6rem;padding-top:.6rem;border-top:2px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.sub{color:var(--muted);margin:0 0 .8rem}
nav ol{margin:.3rem 0 1rem;padding-left:1.4rem}
a{color:var(--accent)}
.notes{padding-left:1.2rem}
.notes li{margin:.2rem 0}
.warnings{background:var(--warn-bg);border-left:4px solid var(--warn);padding:.5rem .9rem;margin:.8rem 0}
.warnings h3{margin:.2rem 0;color:var(--warn)}
.warnings ul{margin:.2rem 0;padding-left:1.2rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,31rem),1fr));gap:1rem 1.5rem}
figure{margin:0;min-width:0}
.scroll,.table-wrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
svg.chart{display:block;width:100%;height:auto;min-width:22rem}
.chart-title{font-weight:600;font-size:.95rem;margin:.4rem 0 0}
figcaption{font-size:.85rem;color:var(--muted);margin-top:.2rem}
svg.chart text{font:13px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:var(--fg)}
svg.chart .tick{fill:var(--muted)}
svg.chart .axis-label{font-weight:600}
svg.chart .grid{stroke:#e6e6e6;stroke-width:1}
svg.chart .axis{stroke:#444;stroke-width:1}
svg.chart .ref{stroke:#b00020;stroke-width:1.5;stroke-dasharray:6 4}
svg.chart .ref-label{fill:#b00020;font-size:11px;paint-order:stroke;stroke:#fff;stroke-width:3px}
svg.chart .mark:hover{opacity:.75}
table{border-collapse:collapse;margin:.3rem 0 1rem;font-size:.9rem;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border-bottom:1px solid var(--line);padding:.25rem .6rem;text-align:left;vertical-align:top}
thead th{border-bottom:2px solid #999;white-space:nowrap}
td.num{text-align:right;white-space:nowrap}
tbody th{white-space:nowrap;font-weight:600}
tbody tr:nth-child(even){background:var(--bg-alt)}
tr.diff th,tr.diff td{background:#fff8c5}
details{margin:.6rem 0}
summary{cursor:pointer;font-weight:600}
footer{color:var(--muted);font-size:.85rem;margin:2rem auto 1rem}
@media (max-width:40rem){body{font-size:14px}h1{font-size:1.3rem}header,main,footer{padding:0 .6rem}}
@media print{
 body{font-size:10pt}
 nav,footer{display:none}
 header,main{max-width:none;padding:0}
 a{color:inherit;text-decoration:none}
 h2{break-before:page;border-top:none}
 section:first-of-type h2{break-before:auto}
 .charts{grid-template-columns:1fr 1fr;gap:.5rem 1rem}
 .scroll,.table-wrap{overflow:visible}
 svg.chart{min-width:0}
 figure,tr,.warnings{break-inside:avoid}
 thead{display:table-header-group}
 tr.diff th,tr.diff td,tbody tr:nth-child(even){background:none}
 tr.diff th{font-style:italic}
 details>summary{list-style:none}
}
"#;

pub fn write(report: &Report) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"oltplab {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n<h1>{}</h1>\n<p class=\"sub\">{}</p>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&report.title),
        esc(&report.title),
        esc(&report.subtitle)
    );
    if report.sections.len() > 1 {
        out.push_str("<nav aria-label=\"Contents\"><ol>\n");
        for s in &report.sections {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a></li>",
                esc(&s.id),
                esc(&s.title)
            );
        }
        out.push_str("</ol></nav>\n");
    }
    out.push_str("</header>\n<main>\n");
    for s in &report.sections {
        section(&mut out, s);
    }
    let _ = write!(
        out,
        "</main>\n<footer>Rendered by oltplab {} from saved results only: <code>oltplab report RESULT.json…</code> draws it again. Charts are SVG; hover a mark for its exact value.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn section(out: &mut String, s: &Section) {
    let _ = write!(
        out,
        "<section id=\"{id}\" aria-labelledby=\"{id}-h\" data-kind=\"{}\">\n<h2 id=\"{id}-h\">{}</h2>\n",
        s.kind,
        esc(&s.title),
        id = esc(&s.id)
    );
    if !s.warnings.is_empty() {
        out.push_str("<div class=\"warnings\" role=\"note\"><h3>Warnings</h3><ul>\n");
        for (kind, msg) in &s.warnings {
            let _ = writeln!(out, "<li><strong>{}</strong>: {}</li>", esc(kind), esc(msg));
        }
        out.push_str("</ul></div>\n");
    }
    if !s.notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in &s.notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    if !s.charts.is_empty() {
        out.push_str("<div class=\"charts\">\n");
        for c in &s.charts {
            let _ = write!(
                out,
                "<figure>\n<div class=\"chart-title\" aria-hidden=\"true\">{}</div>\n<div class=\"scroll\">{}</div>\n<figcaption>{}</figcaption>\n</figure>\n",
                esc(&c.svg.title),
                c.svg.markup,
                esc(&c.caption)
            );
        }
        out.push_str("</div>\n");
    }
    for t in &s.tables {
        // Environment and configuration are reference material: shown, but folded away on demand.
        let folded = t.id == "env" || t.id == "config";
        if folded {
            let _ = write!(
                out,
                "<details open>\n<summary>{}</summary>\n",
                esc(&t.title)
            );
        }
        table(out, t, !folded);
        if folded {
            out.push_str("</details>\n");
        }
    }
    out.push_str("</section>\n");
}

fn table(out: &mut String, t: &Table, with_caption: bool) {
    out.push_str("<div class=\"table-wrap\"><table>\n");
    if with_caption {
        let _ = writeln!(out, "<caption>{}</caption>", esc(&t.title));
    }
    out.push_str("<thead><tr>");
    for c in &t.columns {
        let _ = write!(out, "<th scope=\"col\">{}</th>", esc(&c.label));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, row) in t.rows.iter().enumerate() {
        let class = if t.highlight.get(i).copied().unwrap_or(false) {
            " class=\"diff\" title=\"differs between the results\""
        } else {
            ""
        };
        let _ = write!(out, "<tr{class}>");
        for (j, (cell, col)) in row.iter().zip(&t.columns).enumerate() {
            let text = esc(&cell.show(col.unit));
            if j == 0 {
                let _ = write!(out, "<th scope=\"row\">{text}</th>");
            } else if matches!(cell, Cell::Text(_)) {
                let _ = write!(out, "<td>{text}</td>");
            } else {
                let _ = write!(out, "<td class=\"num\">{text}</td>");
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}
