//! A consistency condition and how its offending rows are shown: every workload's checks are SQL
//! queries that return the first offending keys (none: the condition holds).

use serde::Serialize;

use crate::sql::{Rows, Val};

/// Violations shown per condition.
pub const EXAMPLES: usize = 5;

#[derive(Clone, Debug, Serialize)]
pub struct Condition {
    pub number: u8,
    pub rule: &'static str,
    /// `holds`, `violated` or `not_applicable`.
    pub status: &'static str,
    /// The first offending rows, as `column=value` lists.
    pub examples: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Condition {
    pub fn holds(&self) -> bool {
        self.status != "violated"
    }
}

fn show(v: &Val) -> String {
    match v {
        Val::I(i) => i.to_string(),
        Val::F(f) => format!("{f:.2}"),
        Val::S(s) => s.clone(),
        Val::Null => "null".into(),
    }
}

/// The first offending rows, as `column=value` lists.
pub fn examples(rows: &Rows, names: &[&str]) -> Vec<String> {
    (0..rows.len().min(EXAMPLES))
        .map(|r| {
            names
                .iter()
                .enumerate()
                .map(|(c, n)| format!("{n}={}", show(rows.get(r, c))))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}
