//! What the command line asks to emulate — a device spec, a run's `--emulate`/`--layout` and
//! `--backing` — parsed once where it is read (clap's value parsers) and carried typed from the
//! config to the measurement (issue 33, item 3).

use std::fmt;

use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use serde::{Serialize, Serializer};

/// The prefix that puts every node of a Galera cluster on one shared device: `shared:SPEC`.
pub const SHARED: &str = "shared:";

/// What the database runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// One device or layout (a Galera cluster: each node on its own instance of it).
    Device(Spec),
    /// `node1:SPEC;node2:SPEC…`: each node named once with its own device. The numbers are
    /// checked against the cluster's size when the run starts ([`Emulation::node_specs`]).
    Nodes(Vec<(u32, Spec)>),
    /// `shared:SPEC`: a cluster's nodes on one device (one model, one queue).
    Shared(Spec),
}

/// `--emulate` as given and as parsed. A run's config keeps the user's words (it serializes as the
/// text given); the capture reads only the parsed target.
#[derive(Clone, Debug, PartialEq)]
pub struct Emulation {
    text: String,
    pub target: Target,
}

impl Emulation {
    /// The command line's `--emulate TEXT` (clap's value parser: a bad spec ends there, exit 2).
    pub fn parse(text: &str) -> std::result::Result<Emulation, String> {
        let target = if let Some(shared) = text.trim_start().strip_prefix(SHARED) {
            if node_form(shared) {
                return Err(format!(
                    "one shared device takes one spec, not one per node: give `{SHARED}SPEC`, or drop `{SHARED}` to give each node its own"
                ));
            }
            Target::Shared(spec_arg(shared)?)
        } else if node_form(text) {
            Target::Nodes(nodes(text)?)
        } else {
            Target::Device(spec_arg(text)?)
        };
        Ok(Emulation {
            text: text.to_string(),
            target,
        })
    }

    /// One device, as a study or a profile names it.
    pub fn device(spec: Spec) -> Emulation {
        Emulation {
            text: spec.name(),
            target: Target::Device(spec),
        }
    }

    /// The text given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The device of a run of one database; the cluster forms are refused, naming the fix.
    pub fn single(&self) -> Result<&Spec> {
        match &self.target {
            Target::Device(spec) => Ok(spec),
            Target::Nodes(_) => Err(Error::usage(format!(
                "--emulate `{}` gives each Galera node its own device, but this run has one server: add --engine galera, or give one spec",
                self.text
            ))),
            Target::Shared(_) => Err(Error::usage(format!(
                "--emulate `{}` puts a Galera cluster's nodes on one shared device, but this run has one server: add --engine galera, or drop `{SHARED}`",
                self.text
            ))),
        }
    }

    /// Each node's device, node 1 first, for a cluster of `nodes` (not for `shared:`): the one
    /// spec for every node (each node still gets its own instance of the model), or the per-node
    /// form naming every node once, `node1:data=hdd-10k,log=pcie-flash-2012;node2:hdd-10k;…`.
    pub fn node_specs(&self, nodes: u32) -> Result<Vec<Spec>> {
        let named = match &self.target {
            Target::Device(spec) | Target::Shared(spec) => {
                return Ok(vec![spec.clone(); nodes as usize])
            }
            Target::Nodes(named) => named,
        };
        let mut specs: Vec<Option<Spec>> = vec![None; nodes as usize];
        for (k, spec) in named {
            if *k == 0 || *k > nodes {
                return Err(Error::usage(format!(
                    "--emulate names node{k}, but the cluster has nodes 1 to {nodes}: name only those"
                )));
            }
            specs[*k as usize - 1] = Some(spec.clone());
        }
        specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                s.ok_or_else(|| {
                    Error::usage(format!(
                        "--emulate gives no device for node{}: give every node of the {nodes} (node1:SPEC;node2:SPEC…), or one spec for all",
                        i + 1
                    ))
                })
            })
            .collect()
    }
}

impl fmt::Display for Emulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Emulation {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// `--backing`: where an emulated device's data (a managed server's files, `device`'s region)
/// really lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackingChoice {
    /// ram if the files fit in half the free memory, else disk.
    Auto,
    /// The page cache, for devices faster than the real disk.
    Ram,
    /// The files on the real disk, real I/O first.
    Disk,
}

/// This machine's own storage: the device of a capture that only traces.
pub fn host_spec() -> Spec {
    parse_spec("host").expect("host is in the catalogue")
}

/// clap's value parser for one device spec or layout (`--emulate` of `device`, `trace replay`,
/// `crash`, `devices fit`): a bad spec ends where the command line is read, exit code 2.
pub fn spec_arg(text: &str) -> std::result::Result<Spec, String> {
    parse_spec(text.trim())
        .map_err(|e| format!("{e}; `oltplab devices` lists the devices and the spec syntax"))
}

impl BackingChoice {
    pub fn name(self) -> &'static str {
        match self {
            BackingChoice::Auto => "auto",
            BackingChoice::Ram => "ram",
            BackingChoice::Disk => "disk",
        }
    }
}

/// Whether `text` is the per-node form `nodeK:SPEC;nodeJ:SPEC…`.
fn node_form(text: &str) -> bool {
    text.trim_start()
        .strip_prefix("node")
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// The per-node form's nodes and specs, each node once.
fn nodes(text: &str) -> std::result::Result<Vec<(u32, Spec)>, String> {
    let mut named: Vec<(u32, Spec)> = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            format!(
                "`{part}` is not `nodeK:SPEC`; give every node as node1:SPEC;node2:SPEC…, or one spec for all"
            )
        };
        let (name, spec) = part.split_once(':').ok_or_else(bad)?;
        let k: u32 = name
            .trim()
            .strip_prefix("node")
            .and_then(|k| k.parse().ok())
            .ok_or_else(bad)?;
        if named.iter().any(|(n, _)| *n == k) {
            return Err(format!("node{k} is given twice: give each node once"));
        }
        if spec.trim().is_empty() {
            return Err(bad());
        }
        named.push((k, spec_arg(spec).map_err(|e| format!("node{k}: {e}"))?));
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(specs: Vec<Spec>) -> Vec<String> {
        specs.iter().map(Spec::name).collect()
    }

    #[test]
    fn a_cluster_gets_one_spec_per_node_or_each_node_named_once() {
        let e = Emulation::parse("hdd-10k").unwrap();
        assert_eq!(names(e.node_specs(3).unwrap()), ["hdd-10k"; 3]);
        // A layout's own commas stay inside its node.
        let e = Emulation::parse("node2:pcie-flash-2012; node1:data=hdd-10k,log=pcie-flash-2012")
            .unwrap();
        let specs = e.node_specs(2).unwrap();
        assert!(specs[0].is_layout(), "{:?}", names(specs.clone()));
        assert_eq!(specs[1].name(), "pcie-flash-2012");
        // Refused when the command line is read …
        for (text, says) in [
            ("node1:hdd-10k;node1:hdd-10k", "node1 is given twice"),
            ("node1:hdd-10k;hdd-10k", "is not `nodeK:SPEC`"),
            ("node1:;node2:hdd-10k", "is not `nodeK:SPEC`"),
            ("node1:floppy;node2:hdd-10k", "node1: "),
            ("shared:node1:hdd-10k", "one shared device takes one spec"),
        ] {
            let e = Emulation::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        // … or against the cluster's size when the run starts.
        for (text, says) in [
            ("node1:hdd-10k;node3:hdd-10k", "nodes 1 to 2"),
            ("node1:hdd-10k", "no device for node2"),
            ("node0:hdd-10k;node1:hdd-10k", "nodes 1 to 2"),
        ] {
            let e = Emulation::parse(text).unwrap().node_specs(2).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{text}");
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
        assert!(!node_form("data=hdd-10k,table:stock=pcie-flash-2012"));
        assert!(!node_form("nodes:hdd-10k"));
    }

    #[test]
    fn a_run_of_one_server_refuses_the_cluster_forms_and_the_config_keeps_the_text() {
        let one = Emulation::parse(" hdd-10k").unwrap();
        assert_eq!(one.single().unwrap().name(), "hdd-10k");
        assert_eq!(serde_json::to_value(&one).unwrap(), " hdd-10k");
        for (text, says) in [
            ("node1:hdd-10k;node2:hdd-10k", "add --engine galera"),
            ("shared:hdd-10k", "drop `shared:`"),
        ] {
            let e = Emulation::parse(text).unwrap().single().unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
        assert_eq!(
            serde_json::to_value(BackingChoice::Auto).unwrap(),
            serde_json::json!("auto")
        );
    }
}
