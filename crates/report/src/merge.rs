//! `oltplab merge`: one result from the results of drivers that each ran a part of one workload at the
//! same time (e.g. `--warehouse-range` on several machines against one server).
//!
//! What is exact: histograms are added bucket by bucket, so merged percentiles are those of all
//! operations together (within HdrHistogram's ±0.1 %); counts, bytes and CPU seconds are summed;
//! rates are summed, because the parts ran side by side over the same window, and TPC-C's rates
//! (tpmC, tpmTotal, tps) are recomputed from the summed counts over the merged window; per-second
//! intervals are put on one clock (each part's measured-window start, `summary.measure_started_at`,
//! else `started_at`, + `t_s`) and summed per second. TPC-C parts must drive disjoint home
//! warehouses once any of them names a `--warehouse-range`. The result has kind `merge`,
//! `config.merged_kind` and `config.parts[]`, and `summary.merge` says how well the parts' windows
//! overlapped — a `windows_not_aligned` warning says so when they did not.

use std::collections::BTreeMap;
use std::time::SystemTime;

use oltplab_metrics::schema::{geomean, parse_time, SCHEMA};
use oltplab_metrics::{LatencyHistogram, Warning, WarningKind};
use serde_json::{json, Map, Value};

use crate::doc::{self, num, Kind};
use crate::ReportError;

/// How two or more values of one field combine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rule {
    Sum,
    Max,
    Min,
    Mean,
    /// Identifies a point (queue depth, block size): the same in every part.
    Keep,
}

fn rule(key: &str) -> Rule {
    // A latency figure by its last word (`p99`, `lat_ns_p99`, `new_order_lat_ns_p99`).
    let stat = key.rsplit('_').next().unwrap_or(key);
    match key {
        // The parts ran side by side, so the merged window is as long as the longest part's.
        "measured_s" | "elapsed_s" | "ramp_s" | "runtime_s" | "t_s" | "trace_s" | "duration_s"
        | "warmup_s" => Rule::Max,
        "utilisation" | "jobs_utilisation" | "efficiency" | "ios_per_cpu_s" | "speedup"
        | "cores" => Rule::Mean,
        // Point identities, and TPC-C's NURand constants (the same database and seed).
        "qd" | "connections" | "block_size_bytes" | "read_pct" | "random_pct" | "seed"
        | "c_last" | "c_id" | "ol_i_id" => Rule::Keep,
        // Shares of a machine (`cpu_utilisation`, `db_cpu_utilisation`) average over machines.
        k if k.ends_with("utilisation") || k.ends_with("_share") => Rule::Mean,
        // Percentiles of parts do not add up; without histograms the highest is a bound.
        _ if matches!(stat, "max" | "p50" | "p90" | "p99" | "p999") => Rule::Max,
        _ if stat == "min" => Rule::Min,
        _ if stat == "mean" => Rule::Mean,
        _ => Rule::Sum,
    }
}

/// Fields whose value names an element of a list, so lists merge element by element.
const IDENTITY: [&str; 3] = ["name", "qd", "connections"];

fn merge_value(key: &str, vals: &[&Value]) -> Value {
    let first = vals[0];
    if vals.iter().all(|v| v.is_object()) {
        let mut keys: Vec<&String> = Vec::new();
        for v in vals {
            for k in v.as_object().expect("checked").keys() {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let mut out = Map::new();
        for k in keys {
            let present: Vec<&Value> = vals.iter().filter_map(|v| v.get(k.as_str())).collect();
            out.insert(k.clone(), merge_value(k, &present));
        }
        return Value::Object(out);
    }
    if vals.iter().all(|v| v.is_array()) {
        return merge_arrays(key, vals);
    }
    // `interrupted`: the merge is interrupted if any part was.
    if vals.iter().all(|v| v.is_boolean()) {
        return json!(vals.iter().any(|v| v.as_bool() == Some(true)));
    }
    if vals.iter().all(|v| v.is_number()) {
        let nums: Vec<f64> = vals.iter().filter_map(|v| v.as_f64()).collect();
        let all_int = vals.iter().all(|v| v.is_u64() || v.is_i64());
        let r = match rule(key) {
            Rule::Sum => nums.iter().sum(),
            Rule::Max => nums.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Rule::Min => nums.iter().copied().fold(f64::INFINITY, f64::min),
            Rule::Mean => nums.iter().sum::<f64>() / nums.len() as f64,
            Rule::Keep => nums[0],
        };
        return if all_int && rule(key) != Rule::Mean && (0.0..9.0e15).contains(&r) {
            json!(r as u64)
        } else {
            json!(r)
        };
    }
    first.clone()
}

fn merge_arrays(key: &str, vals: &[&Value]) -> Value {
    let arrays: Vec<&Vec<Value>> = vals.iter().filter_map(|v| v.as_array()).collect();
    let identity = |e: &Value| -> Option<String> {
        IDENTITY
            .iter()
            .find_map(|k| e.get(*k).map(|x| format!("{k}={x}")))
    };
    let keyed = arrays
        .iter()
        .all(|a| !a.is_empty() && a.iter().all(|e| e.is_object() && identity(e).is_some()));
    if keyed {
        let mut order: Vec<String> = Vec::new();
        let mut groups: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
        for a in &arrays {
            for e in a.iter() {
                let id = identity(e).expect("checked");
                if !order.contains(&id) {
                    order.push(id.clone());
                }
                groups.entry(id).or_default().push(e);
            }
        }
        return Value::Array(
            order
                .iter()
                .map(|id| merge_value(key, &groups[id]))
                .collect(),
        );
    }
    let same_len = arrays.windows(2).all(|w| w[0].len() == w[1].len());
    if same_len
        && arrays
            .iter()
            .all(|a| a.iter().all(|e| e.is_object() || e.is_number()))
    {
        let n = arrays[0].len();
        return Value::Array(
            (0..n)
                .map(|i| {
                    let items: Vec<&Value> = arrays.iter().map(|a| &a[i]).collect();
                    merge_value(key, &items)
                })
                .collect(),
        );
    }
    vals[0].clone()
}

fn lat_json(h: &LatencyHistogram) -> Value {
    serde_json::to_value(h.stats()).expect("plain numbers")
}

/// Merged histograms, by name.
fn merge_histograms(parts: &[&Value]) -> Result<BTreeMap<String, LatencyHistogram>, ReportError> {
    let mut out: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
    for (i, p) in parts.iter().enumerate() {
        let Some(map) = p.get("histograms").and_then(Value::as_object) else {
            continue;
        };
        for (name, text) in map {
            let h = text
                .as_str()
                .ok_or_else(|| "is not a string".to_string())
                .and_then(LatencyHistogram::from_base64)
                .map_err(|e| ReportError::Invalid {
                    index: i,
                    reason: format!(
                        "has a damaged histogram '{name}' ({e}): write the result again"
                    ),
                })?;
            out.entry(name.clone()).or_default().add(&h);
        }
    }
    Ok(out)
}

/// Replaces `lat_ns` at `pointer` with the figures of the sum of the named histograms; false if
/// none of them exists (the figures then stay as a bound, and a warning says so).
fn set_lat(
    summary: &mut Value,
    pointer: &str,
    hists: &BTreeMap<String, LatencyHistogram>,
    names: &[String],
) -> bool {
    let mut sum: Option<LatencyHistogram> = None;
    for n in names {
        if let Some(h) = hists.get(n) {
            sum.get_or_insert_with(LatencyHistogram::new).add(h);
        }
    }
    let Some(target) = summary.pointer_mut(pointer) else {
        return true;
    };
    match sum {
        Some(h) => {
            target["lat_ns"] = lat_json(&h);
            true
        }
        None => target.get("lat_ns").is_none(),
    }
}

/// Recomputes every latency figure of a device summary from the merged histograms, and the
/// geometric means from the merged IOPS.
fn finish_device(summary: &mut Value, hists: &BTreeMap<String, LatencyHistogram>) -> Vec<String> {
    let mut unmerged = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            unmerged.push(what);
        }
    };
    let names = |prefix: &str, op: &str| -> Vec<String> {
        if op.is_empty() {
            vec![format!("{prefix}read"), format!("{prefix}write")]
        } else {
            vec![format!("{prefix}{op}")]
        }
    };
    for (ptr, op) in [("", ""), ("/read", "read"), ("/write", "write")] {
        check(
            set_lat(summary, ptr, hists, &names("", op)),
            format!("summary{ptr}"),
        );
    }
    let sweep_qds: Vec<u64> = summary
        .pointer("/sweep")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| p.get("qd").and_then(Value::as_u64))
                .collect()
        })
        .unwrap_or_default();
    for (i, qd) in sweep_qds.iter().enumerate() {
        let prefix = format!("job/qd{qd}/");
        for (sub, op) in [("", ""), ("/read", "read"), ("/write", "write")] {
            let ptr = format!("/sweep/{i}{sub}");
            check(
                set_lat(summary, &ptr, hists, &names(&prefix, op)),
                format!("summary{ptr}"),
            );
        }
    }
    let profiles: Vec<(String, Vec<u64>)> = summary
        .pointer("/profiles")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|p| {
                    let name = p
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let qds = p
                        .get("sweep")
                        .and_then(Value::as_array)
                        .map(|s| {
                            s.iter()
                                .filter_map(|x| x.get("qd").and_then(Value::as_u64))
                                .collect()
                        })
                        .unwrap_or_default();
                    (name, qds)
                })
                .collect()
        })
        .unwrap_or_default();
    for (p, (name, qds)) in profiles.iter().enumerate() {
        for (i, qd) in qds.iter().enumerate() {
            let prefix = format!("{name}/qd{qd}/");
            for (sub, op) in [("", ""), ("/read", "read"), ("/write", "write")] {
                let ptr = format!("/profiles/{p}/sweep/{i}{sub}");
                check(
                    set_lat(summary, &ptr, hists, &names(&prefix, op)),
                    format!("summary{ptr}"),
                );
            }
        }
        for (sub, op) in [("", ""), ("/read", "read"), ("/write", "write")] {
            let all: Vec<String> = qds
                .iter()
                .flat_map(|qd| names(&format!("{name}/qd{qd}/"), op))
                .collect();
            let ptr = format!("/profiles/{p}{sub}");
            check(set_lat(summary, &ptr, hists, &all), format!("summary{ptr}"));
        }
        let iops: Vec<f64> = summary
            .pointer(&format!("/profiles/{p}/sweep"))
            .and_then(Value::as_array)
            .map(|s| s.iter().filter_map(|x| num(x, "/iops")).collect())
            .unwrap_or_default();
        if let Some(target) = summary.pointer_mut(&format!("/profiles/{p}")) {
            target["geomean_iops"] = json!(geomean(&iops));
        }
    }
    if summary.get("geomean_iops").is_some() {
        let mut iops: Vec<f64> = summary
            .pointer("/sweep")
            .and_then(Value::as_array)
            .map(|s| s.iter().filter_map(|x| num(x, "/iops")).collect())
            .unwrap_or_default();
        if let Some(profiles) = summary.pointer("/profiles").and_then(Value::as_array) {
            iops = profiles
                .iter()
                .flat_map(|p| {
                    p.get("sweep")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default()
                })
                .filter_map(|x| num(&x, "/iops"))
                .collect();
        }
        summary["geomean_iops"] = json!(geomean(&iops));
    }
    unmerged
}

/// Recomputes the latency figures of a run or replay summary wherever a histogram of the same name
/// exists: `tx.<type>.lat_ns` from `<type>` (or `tx/<type>`), `read`/`write` from `read`/`write`.
fn finish_generic(summary: &mut Value, hists: &BTreeMap<String, LatencyHistogram>) -> Vec<String> {
    let mut unmerged = Vec::new();
    let mut paths = Vec::new();
    collect_lat_paths(summary, String::new(), &mut paths);
    for path in paths {
        let last = path.rsplit('/').next().unwrap_or("").to_string();
        let trimmed = path.trim_start_matches('/').to_string();
        let candidates: Vec<String> = if path.is_empty() {
            hists
                .keys()
                .filter(|k| *k == "read" || *k == "write")
                .cloned()
                .collect()
        } else {
            [trimmed.clone(), last.clone(), format!("tx/{last}")]
                .into_iter()
                .filter(|c| hists.contains_key(c))
                .take(1)
                .collect()
        };
        if candidates.is_empty() || !set_lat(summary, &path, hists, &candidates) {
            unmerged.push(format!("summary{path}"));
        }
    }
    unmerged
}

fn collect_lat_paths(v: &Value, path: String, out: &mut Vec<String>) {
    if let Some(m) = v.as_object() {
        if m.get("lat_ns").is_some_and(Value::is_object) {
            out.push(path.clone());
        }
        for (k, x) in m {
            if k != "lat_ns" {
                collect_lat_paths(x, format!("{path}/{}", escape_pointer(k)), out);
            }
        }
    } else if let Some(a) = v.as_array() {
        for (i, x) in a.iter().enumerate() {
            collect_lat_paths(x, format!("{path}/{i}"), out);
        }
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Where a part's measured window starts on the wall clock: `summary.measure_started_at` (TPC-C
/// runs, to the microsecond), else `started_at`.
fn window_start(part: &Value) -> Option<SystemTime> {
    ["/summary/measure_started_at", "/started_at"]
        .iter()
        .find_map(|p| part.pointer(p).and_then(Value::as_str).and_then(parse_time))
}

fn measured_s(part: &Value) -> Option<f64> {
    num(part, "/summary/measured_s")
        .or(num(part, "/summary/elapsed_s"))
        .or_else(|| {
            part.get("intervals")
                .and_then(Value::as_array)
                .and_then(|a| a.last())
                .and_then(|iv| num(iv, "/t_s"))
        })
}

/// Per-second intervals of all parts on one clock, summed per second.
fn merge_intervals(parts: &[&Value], offsets_s: &[f64]) -> Vec<Value> {
    let mut buckets: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    for (p, off) in parts.iter().zip(offsets_s) {
        for iv in p
            .get("intervals")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(t) = num(iv, "/t_s") else { continue };
            let mut shifted = iv.clone();
            let t_abs = t + off;
            shifted["t_s"] = json!(t_abs);
            buckets
                .entry(t_abs.round() as i64)
                .or_default()
                .push(shifted);
        }
    }
    buckets
        .into_values()
        .map(|ivs| {
            let refs: Vec<&Value> = ivs.iter().collect();
            let mut merged = merge_value("interval", &refs);
            // One record per second of the common clock; `parts` says how many drivers it covers.
            merged["parts"] = json!(ivs.len());
            merged
        })
        .collect()
}

/// Parts whose measured windows overlap for less than this share of the shortest one get a
/// `windows_not_aligned` warning.
const OVERLAP_MIN: f64 = 0.9;

fn warning(kind: WarningKind, message: String) -> Value {
    serde_json::to_value(Warning::new(kind, message)).expect("a kind and a string")
}

/// A TPC-C part's home warehouses, first and last: its `config.warehouse_range`, else all it loaded
/// (`config.warehouses`); and whether the range was given.
fn home_range(part: &Value) -> Option<((u64, u64), bool)> {
    let r = |p: &str| part.pointer(p).and_then(Value::as_u64);
    match (
        r("/config/warehouse_range/first"),
        r("/config/warehouse_range/last"),
    ) {
        (Some(a), Some(b)) => Some(((a, b), true)),
        _ => Some(((1, r("/config/warehouses")?), false)),
    }
}

/// The parts' home warehouses, if every part is a TPC-C run that names them. Once any part gave a
/// `--warehouse-range`, the parts were meant to partition the warehouses: overlapping ranges are
/// then refused, because the merged run would count some warehouses' terminals twice. Parts that
/// all drove every warehouse (several drivers for more load) merge as they are.
fn check_home_warehouses(parts: &[&Value]) -> Result<Option<Vec<(u64, u64)>>, ReportError> {
    let tpcc = |p: &Value| p.pointer("/summary/tx/new_order").is_some();
    let Some(ranges) = parts
        .iter()
        .map(|p| home_range(p).filter(|_| tpcc(p)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    if ranges.iter().any(|(_, given)| *given) {
        for (j, ((a, b), _)) in ranges.iter().enumerate() {
            if let Some(i) = ranges[..j].iter().position(|((c, d), _)| a <= d && c <= b) {
                let ((c, d), _) = ranges[i];
                return Err(ReportError::Invalid {
                    index: j,
                    reason: format!(
                        "drove home warehouses {a}–{b}, which overlap result {}'s {c}–{d}: merge the results of drivers with disjoint --warehouse-range only",
                        i + 1
                    ),
                });
            }
        }
    }
    Ok(Some(ranges.into_iter().map(|(r, _)| r).collect()))
}

/// Figures a driver reads from its machine rather than from its own work: the device counters
/// (`io.source` `diskstats:…`) and an external server's CPU (its processes, found by name). Drivers
/// on one machine each saw all of it over the same window, so per machine the merge takes the
/// largest part's figure instead of the sum, then adds the machines up.
fn count_machines_once(summary: &mut Value, parts: &[&Value]) {
    fn from_device(p: &Value) -> bool {
        p.pointer("/summary/io/source")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("diskstats"))
    }
    fn external_server(p: &Value) -> bool {
        p.pointer("/config/db/managed") == Some(&json!(false))
            && p.pointer("/config/db/engine").and_then(Value::as_str) != Some("sqlite")
    }
    let io = [
        "reads",
        "writes",
        "syncs",
        "read_bytes",
        "written_bytes",
        "iops",
    ]
    .map(|n| (format!("/io/{n}"), from_device as fn(&Value) -> bool));
    let cpu = ["db_user_s", "db_sys_s"].map(|n| (format!("/cpu/{n}"), external_server as _));
    for (field, machine_wide) in io.into_iter().chain(cpu) {
        let pointer = format!("/summary{field}");
        let mut per_host: BTreeMap<&str, f64> = BTreeMap::new();
        let mut own = 0.0;
        let mut shared = false;
        for p in parts {
            let Some(v) = num(p, &pointer) else { continue };
            let host = p.pointer("/env/hostname").and_then(Value::as_str);
            match host.filter(|_| machine_wide(p)) {
                Some(h) => {
                    let seen = per_host.entry(h).or_insert(f64::NAN);
                    shared |= !seen.is_nan();
                    *seen = seen.max(v);
                }
                None => own += v,
            }
        }
        if let (true, Some(target)) = (shared, summary.pointer_mut(&field)) {
            let total = own + per_host.values().sum::<f64>();
            *target = if target.is_u64() {
                json!(total as u64)
            } else {
                json!(total)
            };
        }
    }
}

/// TPC-C: tpmC, tpmTotal and each type's tps from the summed counts over the merged window, and
/// efficiency over the warehouses the parts drove together.
fn finish_tpcc(summary: &mut Value, parts: &[&Value], homes: Option<&[(u64, u64)]>) {
    let window_s = num(summary, "/measured_s").or(num(summary, "/elapsed_s"));
    let Some(window_s) = window_s.filter(|s| *s > 0.0) else {
        return;
    };
    let counts: Vec<(String, f64)> = summary
        .get("tx")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(t, x)| Some((t.clone(), num(x, "/count")?)))
        .collect();
    let Some(new_orders) = counts.iter().find(|(t, _)| t == "new_order").map(|c| c.1) else {
        return;
    };
    for (t, n) in &counts {
        if let Some(tps) = summary.pointer_mut(&format!("/tx/{t}/tps")) {
            *tps = json!(n / window_s);
        }
    }
    let tpmc = new_orders * 60.0 / window_s;
    summary["tpmc"] = json!(tpmc);
    if summary.get("nopm").is_some() {
        summary["nopm"] = json!(tpmc);
    }
    if let Some(tpm_total) = summary.get_mut("tpm_total") {
        *tpm_total = json!(counts.iter().map(|c| c.1).sum::<f64>() * 60.0 / window_s);
    }
    // Efficiency is tpmC over a ceiling per warehouse driven; the parts' own figures give that
    // ceiling in their unit, and the warehouses driven together are the union of their ranges.
    let Some(homes) = homes else { return };
    let mut driven: Vec<u64> = homes.iter().flat_map(|(a, b)| *a..=*b).collect();
    driven.sort_unstable();
    driven.dedup();
    let (mut part_tpmc, mut part_capacity) = (0.0, 0.0);
    for (p, (a, b)) in parts.iter().zip(homes) {
        if let (Some(t), Some(e)) = (num(p, "/tpmc"), num(p, "/efficiency").filter(|e| *e > 0.0)) {
            part_tpmc += t;
            part_capacity += e * (b - a + 1) as f64;
        }
    }
    if part_tpmc > 0.0 && !driven.is_empty() {
        let ceiling_per_warehouse = part_tpmc / part_capacity;
        summary["efficiency"] = json!(tpmc / (ceiling_per_warehouse * driven.len() as f64));
    }
    if summary.get("warehouses").is_some() {
        summary["warehouses"] = json!(driven.len());
    }
}

/// Merges results of one kind into a `merge` result. Fails, naming the result, on mixed kinds, on
/// studies (merge their runs instead) and on fewer than two results.
pub fn merge(results: &[Value]) -> Result<Value, ReportError> {
    if results.len() < 2 {
        return Err(ReportError::Merge(
            "merge needs at least two results: name the result.json of every driver".into(),
        ));
    }
    let mut kind = None;
    for (i, r) in results.iter().enumerate() {
        let k = doc::validate(r).map_err(|reason| ReportError::Invalid { index: i, reason })?;
        if k == Kind::Study {
            return Err(ReportError::Invalid {
                index: i,
                reason: "is a study, which cannot be merged: merge the run results of one device instead".into(),
            });
        }
        if k == Kind::Crash {
            return Err(ReportError::Invalid {
                index: i,
                reason: "is a crash result, which cannot be merged: report the results side by side instead".into(),
            });
        }
        match kind {
            None => kind = Some(k),
            Some(first) if first != k => {
                return Err(ReportError::Invalid {
                    index: i,
                    reason: format!(
                    "is a {} result but result 1 is a {} result: merge results of one kind only",
                    k.name(),
                    first.name()
                ),
                })
            }
            _ => {}
        }
    }
    let kind = kind.expect("at least two results");
    // A merge of merges is a merge of all their parts' figures: the summaries add up the same way.
    let parts: Vec<&Value> = results.iter().collect();

    let homes = check_home_warehouses(&parts)?;
    let starts: Vec<Option<SystemTime>> = parts.iter().map(|p| window_start(p)).collect();
    let earliest = starts.iter().flatten().min().copied();
    let offsets_s: Vec<f64> = starts
        .iter()
        .map(|s| match (s, earliest) {
            (Some(s), Some(e)) => s.duration_since(e).map_or(0.0, |d| d.as_secs_f64()),
            _ => 0.0,
        })
        .collect();
    let durations: Vec<Option<f64>> = parts.iter().map(|p| measured_s(p)).collect();
    let windows: Vec<(f64, f64)> = offsets_s
        .iter()
        .zip(&durations)
        .map(|(o, d)| (*o, o + d.unwrap_or(0.0)))
        .collect();
    let overlap_s = (windows.iter().map(|w| w.1).fold(f64::INFINITY, f64::min)
        - windows
            .iter()
            .map(|w| w.0)
            .fold(f64::NEG_INFINITY, f64::max))
    .max(0.0);
    let span_s = windows.iter().map(|w| w.1).fold(0.0, f64::max)
        - windows.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
    let shortest_s = durations
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min);

    let summaries: Vec<&Value> = parts.iter().filter_map(|p| p.get("summary")).collect();
    let mut summary = if summaries.is_empty() {
        json!({})
    } else {
        merge_value("summary", &summaries)
    };
    let hists = merge_histograms(&parts)?;
    let unmerged = match kind {
        Kind::Device => finish_device(&mut summary, &hists),
        _ => finish_generic(&mut summary, &hists),
    };
    if kind == Kind::Run {
        count_machines_once(&mut summary, &parts);
        finish_tpcc(&mut summary, &summaries, homes.as_deref());
    }
    if let Some(earliest) = earliest.filter(|_| summary.get("measure_started_at").is_some()) {
        summary["measure_started_at"] = json!(oltplab_metrics::schema::rfc3339_micros(earliest));
    }
    summary["merge"] = json!({
        "parts": parts.len(),
        "start_offsets_s": offsets_s,
        "overlap_s": overlap_s,
        "span_s": span_s,
    });

    let mut warnings: Vec<Value> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        for w in p
            .get("warnings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let mut w = w.clone();
            let msg = w
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            w["message"] = json!(format!("part {}: {msg}", i + 1));
            warnings.push(w);
        }
    }
    if shortest_s.is_finite() && shortest_s > 0.0 && overlap_s < OVERLAP_MIN * shortest_s {
        warnings.push(warning(
            WarningKind::WindowsNotAligned,
            format!(
                "the parts' measured windows overlap for only {overlap_s:.1} s of the shortest part's {shortest_s:.1} s ({:.0} %), so the summed rates overstate what ran at once: start the drivers together, e.g. with the same `oltplab run --start-at TIME`",
                100.0 * overlap_s / shortest_s
            ),
        ));
    }
    if !unmerged.is_empty() {
        warnings.push(warning(
            WarningKind::LatencyNotMerged,
            format!(
                "no histogram was stored for {}, so those latency figures are bounds (highest p-values of the parts), not exact: merge results written by an oltplab that stores them",
                unmerged.join(", ")
            ),
        ));
    }

    let first = parts[0];
    let merged_kind = doc::merged_kind(first).unwrap_or_else(|| kind.name().to_string());
    let config_parts: Vec<Value> = parts
        .iter()
        .map(|p| {
            json!({
                "started_at": p.get("started_at").cloned().unwrap_or(Value::Null),
                "hostname": p.pointer("/env/hostname").cloned().unwrap_or(Value::Null),
                "config": p.get("config").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    let started_at = parts
        .iter()
        .zip(&starts)
        .filter(|(_, s)| **s == earliest)
        .find_map(|(p, _)| p.get("started_at").cloned())
        .unwrap_or(Value::Null);
    let env_refs: Vec<&Value> = parts.iter().filter_map(|p| p.get("env")).collect();
    let mut env = first.get("env").cloned().unwrap_or_else(|| json!({}));
    let hosts: Vec<&str> = env_refs
        .iter()
        .filter_map(|e| e.get("hostname").and_then(Value::as_str))
        .fold(Vec::new(), |mut acc, h| {
            if !acc.contains(&h) {
                acc.push(h);
            }
            acc
        });
    if hosts.len() > 1 {
        env["hostname"] = json!(hosts.join(", "));
    }
    Ok(json!({
        "schema": SCHEMA,
        "kind": "merge",
        "tool": first.get("tool").cloned().unwrap_or(Value::Null),
        "started_at": started_at,
        "config": {
            "merged_kind": merged_kind,
            "parts": config_parts,
        },
        "env": env,
        "summary": summary,
        "intervals": merge_intervals(&parts, &offsets_s),
        "histograms": hists.iter().map(|(k, h)| (k.clone(), json!(h.to_base64()))).collect::<Map<String, Value>>(),
        "warnings": warnings,
    }))
}

/// One sentence about a merge result for its report.
pub fn describe(v: &Value) -> String {
    let parts = num(v, "/summary/merge/parts").unwrap_or(0.0);
    let hosts = v
        .pointer("/env/hostname")
        .and_then(Value::as_str)
        .unwrap_or("?");
    match (num(v, "/summary/merge/overlap_s"), num(v, "/summary/merge/span_s")) {
        (Some(o), Some(s)) => format!(
            "Merged from {parts} results (hosts: {hosts}): histograms added, counts and rates summed; the parts' measured windows overlap for {o:.1} s of {s:.1} s."
        ),
        _ => format!("Merged from {parts} results (hosts: {hosts}): histograms added, counts and rates summed."),
    }
}
