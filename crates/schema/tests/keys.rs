//! The field names of `oltplab.result/1` are a contract with readers outside this repository. Real
//! results of each kind (the report's fixtures, written by oltplab) are read through their typed
//! documents and written again: every key the file had must still be there, under the same path —
//! a renamed or dropped field in a schema type fails here.

use std::collections::BTreeSet;
use std::path::Path;

use oltplab_schema::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// `name` from this crate's fixtures (results of this version: the README's quick study's, on
/// SQLite) or else the report's (older versions').
fn fixture(name: &str) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let own = dir.join("tests/fixtures").join(name);
    let path = if own.exists() {
        own
    } else {
        dir.join("../report/tests/fixtures").join(name)
    };
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Every key path in `v`, array elements as `[]`.
fn paths(v: &Value, at: String, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                paths(x, p, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                paths(x, format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

fn key_set(v: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    paths(v, String::new(), &mut out);
    out
}

/// Reads `name` as `T`, writes it again, and returns the keys the file had that are gone.
fn lost_keys<T: DeserializeOwned + Serialize>(name: &str) -> Vec<String> {
    let before = fixture(name);
    let typed: T = match read_value(&before) {
        Ok(t) => t,
        Err(e) => return vec![format!("unreadable: {e}")],
    };
    let after = serde_json::to_value(&typed).unwrap();
    let after = key_set(&after);
    key_set(&before)
        .into_iter()
        .filter(|k| !after.contains(k))
        .collect()
}

#[test]
fn every_key_of_a_real_result_survives_its_typed_document() {
    let lost = [
        (
            "run-tpcc-sqlite-hdd-10k.json",
            lost_keys::<TpccResult>("run-tpcc-sqlite-hdd-10k.json"),
        ),
        (
            "device-hdd-10k.json",
            lost_keys::<DeviceResult>("device-hdd-10k.json"),
        ),
        (
            "replay-hdd-10k.json",
            lost_keys::<ReplayResult>("replay-hdd-10k.json"),
        ),
        (
            "study-s1-quick.json",
            lost_keys::<StudyResult>("study-s1-quick.json"),
        ),
        (
            "run-tpcc-galera.json",
            lost_keys::<TpccResult>("run-tpcc-galera.json"),
        ),
        (
            "run-brokerage-postgres.json",
            lost_keys::<BrokerageResult>("run-brokerage-postgres.json"),
        ),
        (
            "device-sweep.json",
            lost_keys::<DeviceResult>("device-sweep.json"),
        ),
        (
            "device-profiles.json",
            lost_keys::<DeviceResult>("device-profiles.json"),
        ),
        (
            "device-randrw.json",
            lost_keys::<DeviceResult>("device-randrw.json"),
        ),
        (
            "crash-sqlite.json",
            lost_keys::<CrashResult>("crash-sqlite.json"),
        ),
        (
            "crash-postgres.json",
            lost_keys::<CrashResult>("crash-postgres.json"),
        ),
        (
            "study-in-memory.json",
            lost_keys::<InMemoryResult>("study-in-memory.json"),
        ),
        (
            "study-file.json",
            lost_keys::<StudyResult>("study-file.json"),
        ),
        (
            "study-file-layouts.json",
            lost_keys::<StudyResult>("study-file-layouts.json"),
        ),
        (
            "study-profiles.json",
            lost_keys::<ProfilesResult>("study-profiles.json"),
        ),
    ];
    let lost: Vec<_> = lost.into_iter().filter(|(_, l)| !l.is_empty()).collect();
    assert!(lost.is_empty(), "keys a typed read drops: {lost:#?}");
}

/// Results of older versions lack fields this one writes: they are refused with the field's path,
/// not read as zeros.
#[test]
fn an_older_result_is_refused_naming_the_field() {
    let e = read_value::<OrdersResult>(&fixture("run-orders-postgres.json")).unwrap_err();
    assert_eq!(e.path, "summary.sweep[0].tx_per_connection", "{e}");
    // S4 before its sets said whether Ctrl-C cut them short (2026-11-25).
    let e = read_value::<ProfilesResult>(&fixture("study-profiles-2026-11-25.json")).unwrap_err();
    assert_eq!(e.path, "summary.sets[0].complete", "{e}");
    assert!(e.to_string().contains("`summary.sets[0].complete`"), "{e}");
}

/// Where `before` differs from `after`, every value and member of `before` being in `after` as it
/// was (`after` may have more: fields a later version added, written with their default).
fn first_difference(before: &Value, after: &Value, at: &str) -> Option<String> {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => b.iter().find_map(|(k, x)| match a.get(k) {
            Some(y) => first_difference(x, y, &format!("{at}/{k}")),
            None => Some(format!("{at}/{k} is gone")),
        }),
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => (b.iter().zip(a))
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}[{i}]"))),
        (b, a) if b == a => None,
        (b, a) => Some(format!("{at}: {b} became {a}")),
    }
}

/// This version's results read back into their types and write out the same JSON, value for value
/// (numbers to the last bit): what oltplab writes through these types is what it reads.
#[test]
fn a_result_of_this_version_round_trips_exactly() {
    fn same<T: DeserializeOwned + Serialize>(name: &str) {
        let before = fixture(name);
        let typed: T = read_value(&before).unwrap_or_else(|e| panic!("{name}: {e}"));
        let after = serde_json::to_value(&typed).unwrap();
        if let Some(d) = first_difference(&before, &after, "") {
            panic!("{name}: the typed round trip changed the JSON: {d}");
        }
    }
    same::<TpccResult>("run-tpcc-sqlite-hdd-10k.json");
    same::<DeviceResult>("device-hdd-10k.json");
    same::<ReplayResult>("replay-hdd-10k.json");
    same::<StudyResult>("study-s1-quick.json");
    same::<CrashResult>("crash-tpcc-sqlite.json");
    same::<ProfilesResult>("study-profiles.json");
}

/// α without a figure is None in the type and 0.0 in the file, as results have always stored it.
#[test]
fn alpha_without_a_bound_is_none_and_written_as_zero() {
    let mut doc = fixture("study-s1-quick.json");
    let typed: StudyResult = read_value(&doc).unwrap();
    assert!(typed.summary.devices.iter().all(|d| d.alpha.is_some()));
    doc["summary"]["devices"][1]["alpha"] = serde_json::json!(0.0);
    let mut typed: StudyResult = read_value(&doc).unwrap();
    assert_eq!(typed.summary.devices[1].alpha, None);
    typed.summary.devices[2].alpha = None;
    let written = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        written["summary"]["devices"][1]["alpha"],
        serde_json::json!(0.0)
    );
    assert_eq!(
        written["summary"]["devices"][2]["alpha"],
        serde_json::json!(0.0)
    );
}

/// The storage (S3 placement) and cluster studies the report reads typed: their real results read
/// back into their types and write out the same JSON, value for value.
#[test]
fn storage_and_cluster_studies_round_trip_exactly() {
    for (name, after) in [
        (
            "study-placement.json",
            read_value::<ResultDoc<StorageStudySummary, Value>>(&fixture("study-placement.json"))
                .map(|t| serde_json::to_value(t).unwrap()),
        ),
        (
            "study-cluster.json",
            read_value::<ResultDoc<ClusterStudySummary, Value>>(&fixture("study-cluster.json"))
                .map(|t| serde_json::to_value(t).unwrap()),
        ),
    ] {
        let after = after.unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Some(d) = first_difference(&fixture(name), &after, "") {
            panic!("{name}: the typed round trip changed the JSON: {d}");
        }
    }
}

/// A brokerage storage study has no warehouses: None in the type, 0 in the file as always.
#[test]
fn a_brokerage_storage_study_has_no_warehouses() {
    let mut doc = fixture("study-placement.json");
    let typed: ResultDoc<StorageStudySummary, Value> = read_value(&doc).unwrap();
    assert_eq!(typed.summary.warehouses, Some(1));
    doc["summary"]["warehouses"] = serde_json::json!(0);
    let mut typed: ResultDoc<StorageStudySummary, Value> = read_value(&doc).unwrap();
    assert_eq!(typed.summary.warehouses, None);
    typed.summary.warehouses = None;
    let written = serde_json::to_value(&typed).unwrap();
    assert_eq!(written["summary"]["warehouses"], serde_json::json!(0));
}
