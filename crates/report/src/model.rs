//! The report before it is written out: sections of tables and charts. Every exporter serialises this
//! one structure, so HTML, Markdown and CSV never disagree about a figure.

use crate::fmt::{self, Unit};
use crate::svg::Svg;

pub struct Column {
    /// Machine name with the unit last, used by CSV: `lat_ns_p99`, `iops`.
    pub key: String,
    /// What a reader sees in a table header: `p99`, `IOPS`.
    pub label: String,
    pub unit: Unit,
}

impl Column {
    pub fn new(key: &str, label: &str, unit: Unit) -> Self {
        Self {
            key: key.into(),
            label: label.into(),
            unit,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A figure in its column's unit.
    Num(Option<f64>),
    /// A figure with its own unit, for tables of mixed figures (one per row).
    Val(Option<f64>, Unit),
    Text(String),
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Self {
        Cell::Text(text.into())
    }

    /// The cell as a reader sees it.
    pub fn show(&self, unit: Unit) -> String {
        match self {
            Cell::Num(v) => fmt::value(*v, unit),
            Cell::Val(v, own) => fmt::value(*v, *own),
            Cell::Text(t) if t.is_empty() => fmt::MISSING.into(),
            Cell::Text(t) => t.clone(),
        }
    }

    /// The cell for a machine: full precision, empty when missing.
    pub fn raw(&self) -> String {
        match self {
            Cell::Num(Some(v)) | Cell::Val(Some(v), _) if v.is_finite() => {
                if v.fract() == 0.0 && v.abs() < 1e15 {
                    format!("{v:.0}")
                } else {
                    format!("{v}")
                }
            }
            Cell::Num(_) | Cell::Val(..) => String::new(),
            Cell::Text(t) => t.clone(),
        }
    }
}

/// A table whose first column names the row.
pub struct Table {
    /// Machine name, e.g. `points`; CSV's `table` column.
    pub id: String,
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Rows to emphasise (e.g. configuration values that differ between results).
    pub highlight: Vec<bool>,
    /// Machine names of the rows, where the first cell is prose (CSV's `row` column).
    pub row_keys: Vec<Option<String>>,
}

impl Table {
    pub fn new(id: &str, title: &str, columns: Vec<Column>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            columns,
            rows: Vec::new(),
            highlight: Vec::new(),
            row_keys: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row width of {}", self.id);
        self.rows.push(row);
        self.highlight.push(false);
        self.row_keys.push(None);
    }

    /// A row of a figure/value table: `key` names it for machines, `label` for readers.
    pub fn push_kv(&mut self, key: &str, label: &str, value: Option<f64>, unit: Unit) {
        self.push(vec![Cell::text(label), Cell::Val(value, unit)]);
        *self.row_keys.last_mut().expect("just pushed") = Some(key.into());
    }

    /// The name of row `i` for machines.
    pub fn row_key(&self, i: usize) -> String {
        match (&self.row_keys[i], &self.rows[i][0]) {
            (Some(k), _) => k.clone(),
            (None, cell) => cell.raw(),
        }
    }

    /// True when every numeric cell is missing: such a table is left out rather than shown empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
            || self.rows.iter().all(|r| {
                r.iter()
                    .skip(1)
                    .all(|c| matches!(c, Cell::Num(None) | Cell::Val(None, _)))
            })
    }
}

pub struct Chart {
    pub svg: Svg,
    /// One sentence under the chart saying how to read it.
    pub caption: String,
}

/// One result, or one comparison of several.
pub struct Section {
    /// Anchor for the table of contents.
    pub id: String,
    pub title: String,
    /// Whose figures these are: a result's label, or `comparison`.
    pub result: String,
    pub kind: &'static str,
    /// Plain sentences shown above the charts (e.g. a study's per-device explanations).
    pub notes: Vec<String>,
    pub charts: Vec<Chart>,
    pub tables: Vec<Table>,
    pub warnings: Vec<(String, String)>,
}

impl Section {
    pub fn new(id: String, title: String, result: String, kind: &'static str) -> Self {
        Self {
            id,
            title,
            result,
            kind,
            notes: Vec::new(),
            charts: Vec::new(),
            tables: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn table(&mut self, table: Table) {
        if !table.is_empty() {
            self.tables.push(table);
        }
    }

    pub fn chart(&mut self, svg: Option<Svg>, caption: impl Into<String>) {
        if let Some(svg) = svg {
            self.charts.push(Chart {
                svg,
                caption: caption.into(),
            });
        }
    }
}

pub struct Report {
    pub title: String,
    pub subtitle: String,
    pub sections: Vec<Section>,
}
