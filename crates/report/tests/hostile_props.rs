//! Property tests of reports on crafted results (the fixed cases are in hostile.rs): any strings in
//! names, labels and values never put markup of their own into the HTML or SVG, and any numbers —
//! NaN, infinities, 1e308, subnormals, negatives — end in a report or an error, quickly.

mod common;

use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

use common::{fixture, orders_run, replay, study, tpcc_run};
use oltplab_report::fmt::{self as rfmt, Unit};
use oltplab_report::svg::{self, Axis, Reference, Scale, Series};
use oltplab_report::Format;
use proptest::prelude::*;
use serde_json::Value;

/// Every element the report writes. A `<` followed by anything else came from the data.
const ELEMENTS: [&str; 42] = [
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "p",
    "nav",
    "ol",
    "ul",
    "li",
    "a",
    "main",
    "section",
    "div",
    "strong",
    "figure",
    "figcaption",
    "svg",
    "desc",
    "g",
    "line",
    "text",
    "rect",
    "path",
    "circle",
    "details",
    "summary",
    "table",
    "caption",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "footer",
    "code",
];

/// Appended to every injected string: each must come out escaped, never as written.
const MARKERS: [&str; 4] = ["zz<q", "zz>q", "zz\"q", "zz'q"];

/// Fails if `markup` holds an element the report does not write, or a marker unescaped.
fn assert_own_markup_only(markup: &str) {
    for (i, _) in markup.match_indices('<') {
        let rest = markup[i + 1..].trim_start_matches('/');
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        assert!(
            ELEMENTS.contains(&name.as_str()),
            "raw '<{name}' at byte {i}: {}",
            &markup[i.saturating_sub(80)..(i + 80).min(markup.len())]
        );
    }
    for m in MARKERS {
        assert!(!markup.contains(m), "unescaped {m:?}");
    }
}

/// Runs `f` on a thread and fails if it takes longer than `secs`: a loop that does not end is a
/// failure here, not a hung test.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("did not end within {secs} s"),
    }
}

fn every_kind() -> &'static [Value] {
    static DOCS: OnceLock<Vec<Value>> = OnceLock::new();
    DOCS.get_or_init(|| {
        vec![
            fixture("device-sweep.json"),
            fixture("device-profiles.json"),
            fixture("run-orders-postgres.json"),
            fixture("study-in-memory.json"),
            fixture("study-profiles.json"),
            fixture("study-placement.json"),
            fixture("run-tpcc-ramp.json"),
            tpcc_run(1, 1, 1, 0),
            orders_run(),
            replay(3, 1000.0),
            study(),
        ]
    })
}

/// Text of any kind, with markup and quotes often, and a marker at its end.
fn hostile_string() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            "\\PC{0,24}",
            "[<>&\"' a-z=/;:]{0,24}",
            Just("<script>alert(1)</script>".to_string()),
            Just("\"><img src=x onerror=alert(1)>".to_string()),
            Just("</svg></div><b>".to_string()),
            Just(String::new()),
        ],
        prop::sample::select(MARKERS.to_vec()),
    )
        .prop_map(|(s, m)| format!("{s}{m}"))
}

/// Numbers JSON can hold, from the ordinary to the extreme.
fn json_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO)
            .prop_map(Value::from),
        prop::sample::select(vec![
            f64::MAX,
            -f64::MAX,
            1e308,
            -1e308,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            1e17,
            -1.0,
            0.0,
            -0.0,
            0.5,
        ])
        .prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::MIN)),
    ]
}

/// Any f64, NaN and infinities included.
fn any_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        prop::sample::select(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            -f64::MAX,
            5e-324,
            f64::MIN_POSITIVE,
            1e17,
            0.0,
            -0.0,
        ]),
        (-1e6..1e6f64),
    ]
}

/// Every string value (except those the reader dispatches on, and histograms when `keep_hist`)
/// gets a string of `strings` appended, in turn; object keys of series-like maps too.
fn poison(v: &mut Value, key: &str, strings: &[String], next: &mut usize, keep_hist: bool) {
    let mut take = || {
        let s = &strings[*next % strings.len()];
        *next += 1;
        s.clone()
    };
    match v {
        Value::String(s) if !matches!(key, "schema" | "kind" | "unit" | "merged_kind") => {
            s.push_str(&take());
        }
        Value::Array(items) => {
            for x in items {
                poison(x, key, strings, next, keep_hist);
            }
        }
        Value::Object(map) => {
            if keep_hist && key == "histograms" {
                return;
            }
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (k, mut x) in entries {
                poison(&mut x, &k, strings, next, keep_hist);
                let k = if matches!(
                    key,
                    "tx" | "by_tx" | "waits_per_s" | "waiting_sessions" | "share_by_event"
                ) {
                    let s = &strings[*next % strings.len()];
                    *next += 1;
                    format!("{k}{s}")
                } else {
                    k
                };
                map.insert(k, x);
            }
        }
        _ => {}
    }
}

/// Numbers where `mask` says so become numbers of `numbers`, in turn.
fn extreme(v: &mut Value, numbers: &[Value], mask: &[bool], next: &mut usize) {
    match v {
        Value::Number(_) => {
            let i = *next;
            *next += 1;
            if mask[i % mask.len()] {
                *v = numbers[i % numbers.len()].clone();
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|x| extreme(x, numbers, mask, next)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|x| extreme(x, numbers, mask, next)),
        _ => {}
    }
}

/// Renders `docs` in every format within a few seconds; the HTML carries only its own markup.
fn render_all(docs: Vec<Value>, labels: Vec<String>) {
    within(20, move || {
        if let Ok(html) = oltplab_report::render(&docs, &labels, Format::Html) {
            assert_own_markup_only(&html);
        }
        let _ = oltplab_report::render(&docs, &labels, Format::Markdown);
        let _ = oltplab_report::render(&docs, &labels, Format::Csv);
    });
}

fn axis(log: bool, label: String) -> Axis {
    Axis::new(
        label,
        if log { Scale::Log } else { Scale::Linear },
        rfmt::si,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 256, ..ProptestConfig::default() })]

    /// Bar charts of any numbers and names.
    #[test]
    fn bars_of_any_numbers_end_escaped(
        title in hostile_string(),
        categories in prop::collection::vec(hostile_string(), 0..6),
        series in prop::collection::vec((hostile_string(), prop::collection::vec(prop::option::of(any_number()), 0..6)), 0..4),
        log in any::<bool>(),
        stacked in any::<bool>(),
        reference in prop::option::of((any_number(), hostile_string())),
        label in hostile_string(),
    ) {
        let svg = within(5, move || {
            let series: Vec<Series> = series.into_iter().map(|(n, v)| Series::bars(n, v)).collect();
            let reference = reference.map(|(value, label)| Reference { value, label });
            svg::bars("c1", &title, &title, &categories, &series, &axis(log, label), stacked, reference.as_ref())
        });
        if let Some(svg) = svg {
            assert_own_markup_only(&svg.markup);
        }
    }

    /// Line charts of any points and names, on linear and logarithmic axes.
    #[test]
    fn lines_of_any_numbers_end_escaped(
        title in hostile_string(),
        series in prop::collection::vec((hostile_string(), prop::collection::vec((any_number(), any_number()), 0..30)), 0..4),
        x_log in any::<bool>(),
        y_log in any::<bool>(),
        reference in prop::option::of((any_number(), hostile_string())),
        label in hostile_string(),
    ) {
        let svg = within(5, move || {
            let series: Vec<Series> = series.into_iter().map(|(n, p)| Series::line(n, p)).collect();
            let reference = reference.map(|(value, label)| Reference { value, label });
            svg::lines("c1", &title, &title, &series, &axis(x_log, label.clone()), &axis(y_log, label), reference.as_ref())
        });
        if let Some(svg) = svg {
            assert_own_markup_only(&svg.markup);
        }
    }

    /// Every way a figure is shown takes any number.
    #[test]
    fn figures_of_any_number_are_text(v in any_number(), s in hostile_string()) {
        for unit in [Unit::Count, Unit::Number, Unit::Ns, Unit::Bytes, Unit::BytesPerS, Unit::Ratio, Unit::Share, Unit::Seconds, Unit::Text] {
            prop_assert!(!rfmt::value(Some(v), unit).is_empty());
        }
        let shorts: [fn(f64) -> String; 5] = [rfmt::number, rfmt::ratio, rfmt::si, rfmt::ratio_short, rfmt::ns_short];
        for f in shorts {
            prop_assert!(!f(v).is_empty());
        }
        let e = rfmt::esc(&s);
        prop_assert!(!e.contains(['<', '>', '"', '\'']));
    }
}

proptest! {
    // Each case renders a whole report (about 50 ms in a debug build): few cases; hostile.rs
    // holds the fixed ones.
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 64, ..ProptestConfig::default() })]

    /// Any strings in any field, and any labels, of results of every kind.
    #[test]
    fn reports_of_hostile_strings_carry_no_markup(
        which in prop::collection::vec(0..9usize, 1..3),
        strings in prop::collection::vec(hostile_string(), 1..8),
        labels in prop::collection::vec(hostile_string(), 0..3),
        keep_hist in any::<bool>(),
    ) {
        let docs: Vec<Value> = which
            .iter()
            .map(|&i| {
                let mut doc = every_kind()[i].clone();
                poison(&mut doc, "", &strings, &mut 0, keep_hist);
                doc
            })
            .collect();
        render_all(docs, labels);
    }

    /// Any numbers in any field of results of every kind.
    #[test]
    fn reports_of_extreme_numbers_end(
        which in 0..9usize,
        numbers in prop::collection::vec(json_number(), 1..6),
        mask in prop::collection::vec(any::<bool>(), 1..7),
    ) {
        let mut doc = every_kind()[which].clone();
        extreme(&mut doc, &numbers, &mask, &mut 0);
        render_all(vec![doc], Vec::new());
    }

    /// A merge of runs or replays with extreme numbers and hostile strings ends in a result (whose
    /// report carries no markup) or an error.
    #[test]
    fn merges_of_hostile_results_end(
        replays in any::<bool>(),
        numbers in prop::collection::vec(json_number(), 1..6),
        mask in prop::collection::vec(any::<bool>(), 1..7),
        strings in prop::collection::vec(hostile_string(), 1..4),
    ) {
        static PAIRS: OnceLock<[[Value; 2]; 2]> = OnceLock::new();
        let pairs = PAIRS.get_or_init(|| {
            [
                [tpcc_run(1, 1, 1, 0), tpcc_run(2, 1, 1, 1)],
                [replay(1, 1000.0), replay(2, 2000.0)],
            ]
        });
        let docs: Vec<Value> = pairs[replays as usize]
            .iter()
            .cloned()
            .map(|mut d| {
                extreme(&mut d, &numbers, &mask, &mut 0);
                poison(&mut d, "", &strings, &mut 0, true);
                d
            })
            .collect();
        let merged = within(20, move || oltplab_report::merge(&docs));
        if let Ok(m) = merged {
            render_all(vec![m], Vec::new());
        }
    }
}
