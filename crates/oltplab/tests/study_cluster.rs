//! `oltplab study --scenario cluster` refuses what it cannot run before it writes or loads
//! anything. (The study itself takes minutes; its figures are measured by hand, docs/cluster.md.)

mod common;

use common::{assert_usage_error, oltplab, scratch};

#[test]
fn the_cluster_study_refuses_bad_input_before_anything_runs() {
    let dir = scratch("study-cluster-bad");
    for (args, says) in [
        (vec!["--repeat", "2"], "--repeat belongs to the s1"),
        (vec!["--engine", "postgres"], "drop --engine"),
        (vec!["--devices", "hdd-10k,hdd-10k"], "twice"),
        (vec!["--devices", "hdd-10k,nvme-9"], "nvme-9"),
        (vec!["--workload", "brokerage"], "--workload belongs"),
        (vec!["--server-setting", "x=1"], "--server-setting is for"),
    ] {
        let mut all = vec![
            "study",
            "--scenario",
            "cluster",
            "--out",
            "out",
            "--data-dir",
            "data",
        ];
        all.extend(args.iter().copied());
        assert_usage_error(&oltplab(&dir, &all), says);
        assert!(!dir.join("out").exists(), "{args:?}: nothing written");
        assert!(!dir.join("data").exists(), "{args:?}: nothing loaded");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
