//! Renders result files without the oltplab binary: `cargo run -p oltplab-report --example render --
//! html|md|csv RESULT.json… > out` (handy while the report's look is being worked on).

fn main() {
    let mut args = std::env::args().skip(1);
    let format = args
        .next()
        .and_then(|f| oltplab_report::Format::parse(&f))
        .expect("usage: render html|md|csv RESULT.json…");
    let values: Vec<serde_json::Value> = args
        .map(|p| {
            serde_json::from_str(&std::fs::read_to_string(&p).expect("readable file"))
                .expect("JSON")
        })
        .collect();
    match oltplab_report::render(&values, &[], format) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("render: {e}");
            std::process::exit(2);
        }
    }
}
