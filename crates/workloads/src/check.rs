//! A consistency condition and how its offending rows are shown: every workload's checks are SQL
//! queries that return the first offending keys (none: the condition holds).

use serde::Serialize;

use crate::sql::{Rows, Val};

/// Violations shown per condition.
pub const EXAMPLES: usize = 5;

/// Whether a consistency condition held; written as `holds`, `violated` or `not_applicable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Holds,
    Violated,
    /// The condition does not apply to this database (e.g. TPC-C's 3.3.2.11 after Deliveries).
    NotApplicable,
}

impl CheckStatus {
    /// Holds when the query found no offending row.
    pub fn of_rows(rows: &Rows) -> CheckStatus {
        if rows.is_empty() {
            CheckStatus::Holds
        } else {
            CheckStatus::Violated
        }
    }

    /// The name the result and the reports use.
    pub fn name(self) -> &'static str {
        match self {
            CheckStatus::Holds => "holds",
            CheckStatus::Violated => "violated",
            CheckStatus::NotApplicable => "not_applicable",
        }
    }
}

/// Compares with the written name, so that a check's status reads as it is shown.
impl PartialEq<&str> for CheckStatus {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Condition {
    pub number: u8,
    pub rule: &'static str,
    pub status: CheckStatus,
    /// The first offending rows, as `column=value` lists.
    pub examples: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Condition {
    pub fn holds(&self) -> bool {
        self.status != CheckStatus::Violated
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
