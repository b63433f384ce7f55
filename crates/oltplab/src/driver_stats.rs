//! What turns the driver's statistics into the result types of `oltplab-schema` (which the
//! reports read through too): transaction summaries, the commit round trip, counts by kind,
//! TPC-C's NURand constants.

use std::collections::BTreeMap;

use oltplab_schema::{CommitSummary, MixShare, NurandConstants, TxSummary};
use oltplab_workloads::driver::TxStats;
use oltplab_workloads::sql::ErrorKind;
use oltplab_workloads::tpcc::random::Constants;

/// `summary.errors_by_kind` / `retries_by_kind`: counts by the kind's name.
pub fn counts_by_kind(m: &BTreeMap<ErrorKind, u64>) -> BTreeMap<String, u64> {
    m.iter().map(|(k, v)| (k.name().to_string(), *v)).collect()
}

/// A type's figures from the driver's statistics over `measured_s`. The writer-lock wait and CPU
/// per transaction only where the engine runs on the terminals' threads and takes its writer lock
/// at BEGIN (`in_process`: SQLite); a server's are inside the server.
pub fn tx_summary(s: &TxStats, measured_s: f64, in_process: bool) -> TxSummary {
    let per_tx = |ns: u64| {
        (in_process && s.count + s.errors > 0).then(|| ns as f64 / (s.count + s.errors) as f64)
    };
    TxSummary {
        count: s.count,
        errors: s.errors,
        rollbacks: s.rollbacks,
        retries: s.retries,
        tps: s.count as f64 / measured_s.max(1e-9),
        lat_ns: s.latency.stats(),
        writer_lock_wait_ns_mean: per_tx(s.writer_lock_wait_ns),
        cpu_ns_mean: per_tx(s.cpu_ns),
    }
}

/// Each kind's figures by its name (`summary.tx`) and its latency histogram (the result's
/// `histograms`), from the driver's statistics in the kinds' order.
pub fn kind_figures<'a>(
    kinds: impl IntoIterator<Item = (&'a str, &'a TxStats)>,
    measured_s: f64,
    in_process: bool,
) -> (BTreeMap<String, TxSummary>, BTreeMap<String, String>) {
    let (mut tx, mut histograms) = (BTreeMap::new(), BTreeMap::new());
    for (name, s) in kinds {
        tx.insert(name.to_string(), tx_summary(s, measured_s, in_process));
        histograms.insert(name.to_string(), s.latency.to_base64());
    }
    (tx, histograms)
}

/// `summary.mix`: each kind's share of the completed transactions against its weight (%).
pub fn mix_shares<'a>(
    kinds: impl IntoIterator<Item = (&'a str, &'a TxStats, f64)>,
) -> BTreeMap<String, MixShare> {
    let kinds: Vec<_> = kinds.into_iter().collect();
    let all: u64 = kinds.iter().map(|(_, s, _)| s.count).sum();
    kinds
        .into_iter()
        .map(|(name, s, weight_pct)| {
            let share = MixShare {
                measured_pct: 100.0 * s.count as f64 / all.max(1) as f64,
                weight_pct,
            };
            (name.to_string(), share)
        })
        .collect()
}

/// `summary.commit` from the driver's per-kind statistics: the figures and the merged histogram;
/// None when no commit was timed.
pub fn commit_summary<'a>(
    tx: impl IntoIterator<Item = &'a TxStats>,
) -> Option<(CommitSummary, oltplab_metrics::LatencyHistogram)> {
    let mut all = oltplab_metrics::LatencyHistogram::new();
    let mut with_last_statement = 0;
    for t in tx {
        all.add(&t.commit_latency);
        with_last_statement += t.commits_with_statement;
    }
    (all.count() > 0).then(|| {
        (
            CommitSummary {
                commits: all.count(),
                with_last_statement,
                latency_ns: all.stats(),
                ..CommitSummary::default()
            },
            all,
        )
    })
}

/// The NURand constants as the result records them.
pub fn nurand_constants(c: Constants) -> NurandConstants {
    NurandConstants {
        c_last: c.c_last,
        c_id: c.c_id,
        ol_i_id: c.ol_i_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_schema::WsrepNode;

    #[test]
    fn commits_of_every_kind_add_up_and_a_cluster_splits_the_mean() {
        let mut a = TxStats::default();
        let mut b = TxStats::default();
        for ns in [1_000_000, 3_000_000] {
            a.commit_latency.record(ns);
        }
        b.commit_latency.record(2_000_000);
        b.commits_with_statement = 1;
        assert!(commit_summary([&TxStats::default()]).is_none());
        let (mut c, h) = commit_summary([&a, &b]).unwrap();
        assert_eq!((c.commits, c.with_last_statement, h.count()), (3, 1, 3));
        assert!((c.latency_ns.mean - 2e6).abs() < 2e6 * 1e-3, "{c:?}");
        // One server: nothing to split with.
        c.split_with(&[]);
        assert_eq!(c.replication_ns_mean, None);
        // Two nodes: 300 messages of 400 µs and 100 of 800 µs (mean 500 µs), one node that
        // measured nothing.
        let node = |messages, mean| WsrepNode {
            repl_messages: messages,
            repl_latency_ns_mean: mean,
            ..WsrepNode::default()
        };
        c.split_with(&[
            node(300, Some(400e3)),
            node(100, Some(800e3)),
            node(0, None),
        ]);
        let r = c.replication_ns_mean.unwrap();
        assert!((r - 500e3).abs() < 1e-6, "{c:?}");
        assert!((c.local_ns_mean.unwrap() - (c.latency_ns.mean - r)).abs() < 1e-6);
        assert!((c.replication_share.unwrap() - r / c.latency_ns.mean).abs() < 1e-12);
    }
}
