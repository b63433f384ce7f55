//! Prints the device models against their published references (`bench/model-validation`):
//! a Markdown table on standard output, and with `--json FILE` the same rows as JSON.
use oltplab_devmodel::validation::{self, Role, TOLERANCE_PCT};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1));
    let rows = validation::run().unwrap_or_else(|e| {
        eprintln!("validate: {e}");
        std::process::exit(2)
    });
    println!(
        "| device | figure | model | reference | error | role | within ±{TOLERANCE_PCT:.0} % |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        let fmt = |v: f64| {
            if v >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        };
        println!(
            "| `{}` | {} | {} {} | {} {} | {:+.1} % | {} | {} |",
            r.check.spec,
            r.what,
            fmt(r.model),
            r.unit,
            fmt(r.check.reference),
            r.unit,
            r.error_pct,
            match r.check.role {
                Role::Calibration => "calibration",
                Role::Validation => "validation",
            },
            if r.within_tolerance() {
                "yes"
            } else {
                "**no**"
            },
        );
    }
    println!();
    for (i, r) in rows.iter().enumerate() {
        let note = if r.check.note.is_empty() {
            String::new()
        } else {
            format!(" — {}", r.check.note)
        };
        println!(
            "{}. `{}`, {}: {}{note}",
            i + 1,
            r.check.spec,
            r.what,
            r.check.source
        );
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&rows).expect("rows serialise");
        std::fs::write(path, text + "\n").unwrap_or_else(|e| {
            eprintln!("validate: cannot write {path}: {e}");
            std::process::exit(2)
        });
    }
}
