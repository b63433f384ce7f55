//! The environment stored with every result: kernel, CPU, memory, and where the target lives
//! (file system, block device and its queue settings), so that a figure can be traced to its machine.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Env {
    pub hostname: String,
    pub kernel: String,
    pub cpu: String,
    pub cores: usize,
    pub memory_bytes: u64,
    /// File system type of the benchmark target, e.g. `ext4`, `tmpfs`, or `block device`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_fs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_device: Option<BlockDevice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_settings: BTreeMap<String, String>,
}

/// The block device under a target, as sysfs describes it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BlockDevice {
    /// e.g. `/dev/vda`
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_block_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u64>,
}

impl Env {
    /// The machine's environment; `target` adds the file system and device under that path.
    pub fn collect(target: Option<&Path>) -> Env {
        let mut env = Env {
            hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_default(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
            cpu: cpu_model().unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: meminfo_bytes("MemTotal:").unwrap_or(0),
            ..Env::default()
        };
        if let Some(target) = target {
            use std::os::unix::fs::FileTypeExt;
            let is_block_device =
                fs::metadata(target).is_ok_and(|m| m.file_type().is_block_device());
            if is_block_device {
                env.target_fs = Some("block device".into());
                env.target_device = target.to_str().and_then(block_device);
            } else if let Some((fs_type, source)) = mount_of(target) {
                env.target_fs = Some(fs_type);
                env.target_device = block_device(&source);
            }
        }
        env
    }
}

/// Memory the kernel could give without swapping, for "does it fit in the page cache" warnings.
pub fn available_memory_bytes() -> u64 {
    meminfo_bytes("MemAvailable:").unwrap_or(0)
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn cpu_model() -> Option<String> {
    let info = fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn meminfo_bytes(key: &str) -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The (file system type, mount source) of the mount that holds `path`, from /proc/self/mountinfo.
fn mount_of(path: &Path) -> Option<(String, String)> {
    let path = existing_ancestor(path)?.canonicalize().ok()?;
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String, String)> = None;
    for line in info.lines() {
        // id parent major:minor root mount-point options … - fstype source super-options
        let (left, right) = line.split_once(" - ")?;
        let mount_point = unescape(left.split(' ').nth(4)?);
        let mut right = right.split(' ');
        let (fs_type, source) = (right.next()?.to_string(), right.next()?.to_string());
        if path.starts_with(&mount_point) {
            let depth = mount_point.len();
            if best.as_ref().is_none_or(|b| depth >= b.0) {
                best = Some((depth, fs_type, source));
            }
        }
    }
    best.map(|(_, t, s)| (t, s))
}

fn existing_ancestor(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute
        .ancestors()
        .find(|p| p.exists())
        .map(Path::to_path_buf)
}

/// mountinfo escapes spaces and the like as octal `\040`.
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            if let Ok(v) = u8::from_str_radix(&code, 8) {
                out.push(v as char);
                continue;
            }
            out.push(c);
            out.push_str(&code);
        } else {
            out.push(c);
        }
    }
    out
}

/// sysfs facts about `/dev/NAME`; a partition reports its parent disk's queue settings.
pub fn block_device(source: &str) -> Option<BlockDevice> {
    let dev = Path::new(source).canonicalize().ok()?;
    let name = dev.file_name()?.to_str()?.to_string();
    let sys = Path::new("/sys/class/block").join(&name);
    if !sys.exists() {
        return None;
    }
    let disk = if sys.join("partition").exists() {
        sys.canonicalize().ok()?.parent()?.to_path_buf()
    } else {
        sys.clone()
    };
    let queue = disk.join("queue");
    let scheduler = read_trimmed(queue.join("scheduler")).map(|s| {
        // "none [mq-deadline] kyber" → the bracketed one is in use
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
            .unwrap_or(s)
    });
    Some(BlockDevice {
        name: format!("/dev/{name}"),
        model: read_trimmed(disk.join("device/model")).filter(|m| !m.is_empty()),
        rotational: read_trimmed(queue.join("rotational")).map(|v| v == "1"),
        logical_block_size_bytes: read_trimmed(queue.join("logical_block_size"))
            .and_then(|v| v.parse().ok()),
        scheduler,
        nr_requests: read_trimmed(queue.join("nr_requests")).and_then(|v| v.parse().ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_the_machine() {
        let env = Env::collect(Some(Path::new("/tmp/does-not-exist-yet/file")));
        assert!(!env.kernel.is_empty());
        assert!(env.cores >= 1);
        assert!(env.memory_bytes > 0);
        assert!(env.target_fs.is_some(), "the mount of /tmp must be found");
    }

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape("/plain"), "/plain");
    }
}
