//! Without io_uring, `oltplab device` runs psync and says so. A test binary of its own: it turns
//! io_uring off machine-wide (sysctl kernel.io_uring_disabled), so no other test may run meanwhile.

use std::process::Command;

use oltplab_core::testing::{root_or_skip, skip, Need};

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// Restores the sysctl even if the test fails.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, &self.0);
    }
}

#[test]
fn without_io_uring_it_falls_back_to_psync_with_a_warning() {
    let Ok(before) = std::fs::read_to_string(SYSCTL) else {
        // Linux before 6.6.
        skip(Need::Kernel, &format!("this kernel has no {SYSCTL}"));
        return;
    };
    if !root_or_skip("switch io_uring off machine-wide") {
        return;
    }
    if let Err(e) = std::fs::write(SYSCTL, "2") {
        // Root, but a read-only /proc/sys: a container.
        skip(Need::Kernel, &format!("cannot write {SYSCTL}: {e}"));
        return;
    }
    let _restore = Restore(before.trim().to_string());
    let dir = std::env::temp_dir().join(format!("oltplab-it-nouring-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir(&dir)
        .args([
            "device",
            "--size",
            "8m",
            "--runtime",
            "300ms",
            "--ramp",
            "0s",
            "--json",
            "r.json",
        ])
        .output()
        .unwrap();
    drop(_restore);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["config"]["engine"], "psync");
    assert_eq!(r["config"]["queue_depths"][0], 1);
    let warning = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "io_uring_unavailable")
        .expect("a warning");
    assert!(warning["message"].as_str().unwrap().contains("psync"));
    assert!(r["summary"]["read"]["ios"].as_u64().unwrap() > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
