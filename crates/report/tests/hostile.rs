//! Result files are passed around: a report rendered from a crafted one must carry no markup of
//! the file's, and end. Every string of every kind of result is replaced with markup, every
//! number with an extreme, and the HTML must hold none of it raw.

mod common;

use common::{fixture, orders_run, replay, study, tpcc_run};
use serde_json::Value;

const MARKUP: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>";

/// Every string value (not the keys the reader dispatches on) gets the markup appended.
fn poison_strings(v: &mut Value, key: &str) {
    match v {
        Value::String(s) if !matches!(key, "schema" | "kind" | "unit") => {
            s.push_str(MARKUP);
        }
        Value::Array(items) => items.iter_mut().for_each(|x| poison_strings(x, key)),
        Value::Object(map) => {
            // Keys become series and category names in some charts.
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (k, mut x) in entries {
                poison_strings(&mut x, &k);
                let k = if matches!(
                    key,
                    "tx" | "by_tx" | "waits_per_s" | "waiting_sessions" | "share_by_event"
                ) {
                    format!("{k}{MARKUP}")
                } else {
                    k
                };
                map.insert(k, x);
            }
        }
        _ => {}
    }
}

/// Every number becomes huge (time values included: a tick loop must still end).
fn extreme_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => *v = Value::from(1e300),
        Value::Number(_) => *v = Value::from(u64::MAX / 2),
        Value::Array(items) => items.iter_mut().for_each(extreme_numbers),
        Value::Object(map) => map.values_mut().for_each(extreme_numbers),
        _ => {}
    }
}

fn every_kind() -> Vec<Value> {
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
}

#[test]
fn markup_in_a_result_file_never_reaches_the_report_raw() {
    for mut doc in every_kind() {
        poison_strings(&mut doc, "");
        let kind = doc["kind"].clone();
        // Markup in its strings leaves a result's shape intact: it renders, as text. (A test that
        // let a refusal pass would pass with a reader that refuses everything.)
        let html = oltplab_report::html(std::slice::from_ref(&doc))
            .unwrap_or_else(|e| panic!("{kind}: refused: {e}"));
        assert!(
            !html.contains("<script>alert") && !html.contains("<img src=x"),
            "{kind}: raw markup in the report"
        );
        assert!(
            html.contains("&lt;script&gt;"),
            "{kind}: the text is shown, escaped"
        );
    }
}

#[test]
fn extreme_numbers_end_in_a_report_or_an_error() {
    for mut doc in every_kind() {
        extreme_numbers(&mut doc);
        let kind = doc["kind"].clone();
        let started = std::time::Instant::now();
        let _ = oltplab_report::html(std::slice::from_ref(&doc));
        let _ = oltplab_report::markdown(std::slice::from_ref(&doc));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{kind}: rendering took {:?}",
            started.elapsed()
        );
    }
}

/// Times far from zero with small differences (a crafted `t_s`): a float does not move by a
/// tick's step there, which once kept the tick loop going for ever.
#[test]
fn times_far_from_zero_still_end() {
    for mut doc in every_kind() {
        if let Some(intervals) = doc["intervals"].as_array_mut() {
            for (i, x) in intervals.iter_mut().enumerate() {
                x["t_s"] = serde_json::json!(1e17 + i as f64);
            }
        }
        let kind = doc["kind"].clone();
        let started = std::time::Instant::now();
        let _ = oltplab_report::html(std::slice::from_ref(&doc));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{kind}: rendering took {:?}",
            started.elapsed()
        );
    }
}
