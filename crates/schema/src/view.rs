//! Read-side views of what a result *describes*, as the reports read it: its `config` (which
//! device, engine, workload, trace …; [`ConfigView`]) and, before a study's summary type is known,
//! which study it is ([`StudyHead`]). The config is every resolved option of the command that
//! wrote it, written by each command's own config type in the binary crate (`DeviceConfig`, TPC-C's
//! `RunConfig`, the studies' configs, …); the envelope keeps it whole as JSON (the report's
//! configuration table lists every option), and these views name the few fields the headings and
//! labels use, so that the reader spells each of them in one place.
//!
//! These are descriptions, not figures: a field that is absent — or written in a shape the view
//! does not know (another kind's option of the same name, a result of another version) — reads as
//! absent, and the report leaves its words out as it always did, rather than refusing the whole
//! result over a heading. A figure a kind needs is read strictly, by its summary's type.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A result's `config`, as far as the reports describe a result by it. Every field is optional:
/// each kind writes its own options (see the fields), and a merge writes only `merged_kind` and
/// its parts.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ConfigView {
    /// A merge's: the kind of the results it merged (`run`, `device`, `replay`).
    #[serde(default, deserialize_with = "lenient")]
    pub merged_kind: Option<String>,
    /// A run's workload (`tpcc`, `orders`, `brokerage`, `tatp`), a crash's or a storage study's.
    #[serde(default, deserialize_with = "lenient")]
    pub workload: Option<String>,
    /// The I/O engine of a device or replay result; the database engine of a study or crash
    /// result. A run writes its database's under `db` ([`ConfigView::engine`] reads either).
    #[serde(default, deserialize_with = "lenient")]
    pub engine: Option<String>,
    /// No oltplab writes it; the report has always read it as the database engine, so a result
    /// that has it keeps its label.
    #[serde(default, deserialize_with = "lenient")]
    pub db_engine: Option<String>,
    /// A run's database (`DbSpec`).
    #[serde(default, deserialize_with = "object")]
    pub db: Option<DbView>,
    /// TPC-C (a run, a crash): the warehouses driven.
    #[serde(default, deserialize_with = "lenient")]
    pub warehouses: Option<u64>,
    /// A run's or crash's terminals.
    #[serde(default, deserialize_with = "lenient")]
    pub terminals: Option<u64>,
    /// The emulated device's spec (device, replay and run results), as given or canonical.
    #[serde(default, deserialize_with = "lenient")]
    pub emulate: Option<String>,
    /// A replay's trace file; a run's captured trace (null without `--trace`).
    #[serde(default, deserialize_with = "lenient")]
    pub trace: Option<String>,
    /// A study's study file (TOML); read as a replay's trace too (see [`ConfigView::trace_file`]).
    #[serde(default, deserialize_with = "lenient")]
    pub file: Option<String>,
    /// A study's scenario (`s1`, `file`, `placement`, …).
    #[serde(default, deserialize_with = "lenient")]
    pub scenario: Option<String>,
    /// A crash result's power cuts per device and setting, and on-disk states checked per cut.
    #[serde(default, deserialize_with = "lenient")]
    pub cuts: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub states: Option<u64>,
    /// A TPC-C or brokerage run's `--procedures`: each transaction one call of server-side code.
    #[serde(default, deserialize_with = "lenient")]
    pub procedures: Option<bool>,
    /// The seed of a crash result's cuts, devices and states (and of most kinds' draws).
    #[serde(default, deserialize_with = "lenient")]
    pub seed: Option<u64>,
    /// A device result's access patterns, in order (an entry that does not read is one without
    /// name, direction or block size: it still counts).
    #[serde(default, deserialize_with = "each_object")]
    pub workloads: Vec<WorkloadView>,
    /// A device result's queue depths, in order (an entry that is no count is left out).
    #[serde(default, deserialize_with = "each_readable")]
    pub queue_depths: Vec<u64>,
}

/// `config.db` of a run: the database it ran on.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct DbView {
    #[serde(default, deserialize_with = "lenient")]
    pub engine: Option<String>,
}

/// `config.workloads[]` of a device result: a named profile, or the `--rw/--bs` job.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct WorkloadView {
    /// The profile's name; absent (null) for the `--rw` job.
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    /// The job's direction, e.g. `randread`.
    #[serde(default, deserialize_with = "lenient")]
    pub rw: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub block_size_bytes: Option<u64>,
}

impl ConfigView {
    /// The view of `config` (a result's `config` member); a config that is no JSON object reads
    /// as one without any of the fields.
    pub fn of(config: &Value) -> ConfigView {
        // Only an object: serde would read a list's entries as the fields in their order.
        match config {
            Value::Object(_) => ConfigView::deserialize(config).unwrap_or_default(),
            _ => ConfigView::default(),
        }
    }

    /// The engine a result ran on. The kinds spell it differently: device, replay, study and
    /// crash results write `engine` at the top (the I/O engine of a device or replay, the
    /// database of a study or crash), a run writes its database under `db` (`db.engine`), and
    /// `db_engine` is read as the report always read it; the first that is there holds.
    pub fn engine(&self) -> Option<&str> {
        self.engine
            .as_deref()
            .or(self.db_engine.as_deref())
            .or(self.db.as_ref().and_then(|d| d.engine.as_deref()))
    }

    /// A replay's trace file. Replays write it as `trace` (and a run its captured trace, under
    /// the same name); `file` — a study's study file — is read when there is no `trace`, as the
    /// report always did.
    pub fn trace_file(&self) -> Option<&str> {
        self.trace.as_deref().or(self.file.as_deref())
    }
}

/// A study's `summary` as far as the report reads it before its type is known: which study it
/// is decides that type, and a study of a scenario this version does not know is labelled by its
/// scenario and its number of devices alone.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct StudyHead {
    #[serde(default, deserialize_with = "lenient")]
    pub scenario: Option<String>,
    /// `summary.devices[]`, counted (S1's and a study file's; 0 when there is no such list).
    #[serde(default, deserialize_with = "count")]
    pub devices: usize,
}

impl StudyHead {
    /// The head of a result's `summary`; a summary that is no JSON object reads as one without
    /// any of the fields.
    pub fn of(summary: &Value) -> StudyHead {
        match summary {
            Value::Object(_) => StudyHead::deserialize(summary).unwrap_or_default(),
            _ => StudyHead::default(),
        }
    }
}

/// A field in the shape `T` reads as `Some`; any other (null, another type) as `None`.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).ok())
}

/// A list's entries in the shape `T`, the others left out; anything but a list is empty.
fn each_readable<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|x| T::deserialize(x).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// An object read as `T` (a field of another shape as `T::default()` by `T`'s own lenient
/// fields); anything but an object is `None`. (Only an object: serde would read a list's entries
/// as `T`'s fields in their order.)
fn object<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        x @ Value::Object(_) => T::deserialize(x).ok(),
        _ => None,
    })
}

/// A list's entries, each an object read as `T` or, if it is none, `T::default()`: every entry
/// counts. Anything but a list is empty.
fn each_object<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .map(|x| match x {
                Value::Object(_) => T::deserialize(x).unwrap_or_default(),
                _ => T::default(),
            })
            .collect(),
        _ => Vec::new(),
    })
}

/// The number of entries of a list; anything but a list counts 0.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items.len(),
        _ => 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_config_with_the_fields_reads_into_the_view() {
        let device = ConfigView::of(&json!({
            "engine": "io_uring", "emulate": "hdd-10k", "queue_depths": [1, 32],
            "workloads": [{"name": "oltp-db", "rw": null, "block_size_bytes": 8192},
                          {"name": null, "rw": "randread", "block_size_bytes": 16384}],
            "target": "/dev/sdb", "seed": 1
        }));
        assert_eq!(device.seed, Some(1));
        assert_eq!(device.engine(), Some("io_uring"));
        assert_eq!(device.emulate.as_deref(), Some("hdd-10k"));
        assert_eq!(device.queue_depths, [1, 32]);
        assert_eq!(
            device.workloads,
            [
                WorkloadView {
                    name: Some("oltp-db".into()),
                    rw: None,
                    block_size_bytes: Some(8192)
                },
                WorkloadView {
                    name: None,
                    rw: Some("randread".into()),
                    block_size_bytes: Some(16384)
                },
            ]
        );

        let run = ConfigView::of(&json!({
            "workload": "tpcc", "db": {"engine": "postgres", "managed": true},
            "warehouses": 3, "terminals": 30, "emulate": "sata-ssd-2010", "trace": null
        }));
        assert_eq!(run.engine(), Some("postgres"));
        assert_eq!(run.workload.as_deref(), Some("tpcc"));
        assert_eq!((run.warehouses, run.terminals), (Some(3), Some(30)));
        assert_eq!(run.trace_file(), None);

        let crash = ConfigView::of(&json!({"workload": "tpcc", "engine": "sqlite", "cuts": 2,
                                           "states": 4, "seed": 7, "rows": []}));
        assert_eq!(
            (crash.cuts, crash.states, crash.seed),
            (Some(2), Some(4), Some(7))
        );

        let replay = ConfigView::of(&json!({"trace": "a.trace", "engine": "io_uring"}));
        assert_eq!(replay.trace_file(), Some("a.trace"));
        let older = ConfigView::of(&json!({"file": "b.trace", "db_engine": "sqlite"}));
        assert_eq!(older.trace_file(), Some("b.trace"));
        assert_eq!(older.engine(), Some("sqlite"));

        let merge = ConfigView::of(&json!({"merged_kind": "device", "parts": []}));
        assert_eq!(merge.merged_kind.as_deref(), Some("device"));

        let study = ConfigView::of(&json!({"scenario": "file", "file": "s.toml"}));
        assert_eq!(study.scenario.as_deref(), Some("file"));
        let head = StudyHead::of(&json!({"scenario": "s9", "devices": [{}, {}, {}]}));
        assert_eq!((head.scenario.as_deref(), head.devices), (Some("s9"), 3));
    }

    #[test]
    fn a_config_without_the_fields_reads_as_absent() {
        for config in [
            json!({}),
            json!({"out": null, "force": false}),
            json!(null),
            json!(["x"]),
        ] {
            let view = ConfigView::of(&config);
            assert_eq!(view, ConfigView::default(), "{config}");
            assert_eq!(view.engine(), None);
            assert_eq!(view.trace_file(), None);
        }
        assert_eq!(StudyHead::of(&json!({})), StudyHead::default());
        assert_eq!(StudyHead::of(&json!("text")), StudyHead::default());
    }

    /// Another kind's option of the same name, or another version's shape, reads as absent and
    /// leaves the other fields readable.
    #[test]
    fn a_field_in_another_shape_reads_as_absent() {
        let view = ConfigView::of(&json!({
            "engine": 3, "db": "postgres://h/db", "warehouses": -1, "terminals": 0.5,
            "emulate": ["hdd-10k", "ssd"], "trace": true, "file": "f.trace",
            "scenario": {"name": "s1"}, "workloads": [{"name": 7, "rw": "write"}, "text"],
            "queue_depths": [1, "2", -4, 8], "merged_kind": null, "workload": "tpcc"
        }));
        assert_eq!(view.engine(), None);
        assert_eq!(view.db, None);
        assert_eq!((view.warehouses, view.terminals), (None, None));
        assert_eq!(view.emulate, None);
        assert_eq!(view.trace_file(), Some("f.trace"));
        assert_eq!(view.scenario, None);
        assert_eq!(view.workloads.len(), 2);
        assert_eq!(view.workloads[0].name, None);
        assert_eq!(view.workloads[0].rw.as_deref(), Some("write"));
        assert_eq!(view.workloads[1], WorkloadView::default());
        assert_eq!(view.queue_depths, [1, 8]);
        assert_eq!(view.merged_kind, None);
        assert_eq!(view.workload.as_deref(), Some("tpcc"));
        let head = StudyHead::of(&json!({"scenario": 1, "devices": {"a": 1}}));
        assert_eq!(head, StudyHead::default());
    }
}
