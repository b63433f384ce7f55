//! The virtual-time replay: a trace run through a device model with no waiting, in the two orders.

use oltplab_devmodel::parse_spec;
use oltplab_devmodel::sim::ClosedLoop;
use oltplab_trace::replay::sim::{replay_virtual, ReplayOrder};
use oltplab_trace::{Op, Record, TraceData};

fn read(tid: u32, submit_ns: u64, latency_ns: u32, offset: u64) -> Record {
    Record {
        submit_ns,
        latency_ns,
        offset,
        len: 16 << 10,
        file: 0,
        op: Op::Read as u8,
        tag: 0,
        tid,
        cpu: None,
    }
}

fn trace(mut records: Vec<Record>) -> TraceData {
    records.sort_by_key(|r| r.submit_ns);
    TraceData {
        files: vec!["/db/data".into()],
        records,
        complete: true,
        ..TraceData::default()
    }
}

/// A pseudo-random 16 KiB-aligned offset in the first GiB.
fn offset(i: u64) -> u64 {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 65_536 * (16 << 10)
}

#[test]
fn causal_order_keeps_what_the_database_serialised_and_lanes_do_not() {
    // Two threads taking turns, as SQLite's writers do: each I/O starts when the other thread's
    // has ended, so there was never more than one at the device.
    let records: Vec<Record> = (0..4_000u64)
        .map(|i| read((i % 2) as u32, i * 100_000, 90_000, offset(i)))
        .collect();
    let t = trace(records);
    for device in ["pcie-flash-2012", "sata-ssd-2010"] {
        let spec = parse_spec(device).unwrap();
        let causal = replay_virtual(&t, &spec, 1, ReplayOrder::Causal).unwrap();
        let lanes = replay_virtual(&t, &spec, 1, ReplayOrder::Lanes).unwrap();
        // Serial: one read at a time, each taking the device's QD 1 latency.
        let qd1 = ClosedLoop::random_reads(16 << 10, 1).run(&spec).unwrap();
        assert!(
            (causal.iops / qd1.iops - 1.0).abs() < 0.05,
            "{device}: causal {} vs QD 1 {}",
            causal.iops,
            qd1.iops
        );
        // Lanes give each thread its own: two reads at a time on a device with parallel dies.
        assert!(
            lanes.iops > 1.6 * causal.iops,
            "{device}: lanes {} causal {}",
            lanes.iops,
            causal.iops
        );
        assert_eq!(causal.counts.read, 4_000);
        assert_eq!(causal.read_latency.count(), 4_000);
    }
}

#[test]
fn virtual_replay_of_a_closed_loop_gives_the_models_own_figure() {
    // Eight threads, each reading back to back: the trace of a closed loop at QD 8. Replayed in
    // lanes it is a closed loop at QD 8 again. (In causal order each round waits for the one
    // before, because in this trace every read of a round ended before the next round began.)
    let mut records = Vec::new();
    for tid in 0..8u64 {
        for k in 0..2_000u64 {
            records.push(read(
                tid as u32,
                k * 1_000_000 + tid,
                999_000,
                offset(tid * 1_000_003 + k),
            ));
        }
    }
    let t = trace(records);
    for device in ["pcie-flash-2012", "sata-ssd-2010", "hdd-10k"] {
        let spec = parse_spec(device).unwrap();
        // The replay places the file at the device's start without stretching it over the stroke:
        // the model's loop over the same first GiB of a whole drive.
        let model = ClosedLoop {
            stroke_bytes: spec.capacity_bytes(),
            ..ClosedLoop::random_reads(16 << 10, 8)
        }
        .run(&spec)
        .unwrap();
        let lanes = replay_virtual(&t, &spec, 1, ReplayOrder::Lanes).unwrap();
        assert!(
            (lanes.iops / model.iops - 1.0).abs() < 0.08,
            "{device}: replay {} model {}",
            lanes.iops,
            model.iops
        );
        let causal = replay_virtual(&t, &spec, 1, ReplayOrder::Causal).unwrap();
        assert!(
            causal.iops <= 1.01 * lanes.iops && causal.iops > 0.3 * lanes.iops,
            "{device}: causal {} lanes {}",
            causal.iops,
            lanes.iops
        );
    }
    // Fast: a few hundred thousand I/Os in well under a second (debug builds are slower).
    let big = trace(
        (0..200_000u64)
            .map(|i| read((i % 4) as u32, i * 10_000, 9_000, offset(i)))
            .collect(),
    );
    let started = std::time::Instant::now();
    replay_virtual(
        &big,
        &parse_spec("pcie-flash-2012").unwrap(),
        1,
        ReplayOrder::Causal,
    )
    .unwrap();
    let limit = if cfg!(debug_assertions) { 10.0 } else { 1.0 };
    assert!(
        started.elapsed().as_secs_f64() < limit,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn host_has_no_model_to_replay_on() {
    let t = trace(vec![read(1, 0, 1000, 0)]);
    let err = replay_virtual(&t, &parse_spec("host").unwrap(), 1, ReplayOrder::Lanes).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("--emulate"), "{err}");
}
