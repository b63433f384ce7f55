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

    /// How `check` shows it on the terminal: a violation stands out.
    pub fn shown(self) -> &'static str {
        match self {
            CheckStatus::Holds => "holds",
            CheckStatus::Violated => "VIOLATED",
            CheckStatus::NotApplicable => "not applicable",
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The statuses are an enum in the code and these exact words in JSON.
    #[test]
    fn statuses_are_written_as_their_names() {
        for (status, written, shown) in [
            (CheckStatus::Holds, "holds", "holds"),
            (CheckStatus::Violated, "violated", "VIOLATED"),
            (
                CheckStatus::NotApplicable,
                "not_applicable",
                "not applicable",
            ),
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), written);
            assert_eq!(status.shown(), shown);
        }
    }
}
