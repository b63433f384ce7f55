//! The import circles issue 33 (item 6) removed stay removed: `scripts/module-cycles.py` finds
//! no circle between the top-level modules of any crate. A new import that closes one fails
//! here with the circle and the file:line of each of its edges.

use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    if !common::program_installed("python3", "python3") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/module-cycles.py"))
        .arg("--check")
        .arg(&root)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("module-cycles: 0 circle(s)"),
        "an import circle between modules (break it where an edge goes up a level, see \
         ARCHITECTURE.md, \"Modules by level\"):\n{text}"
    );
}
