//! Layouts: several devices, each with its own model state, chosen by a file's slot.

use oltplab_devmodel::{parse_spec, slot, slot_device, Emulator, IoKind, Role};

#[test]
fn a_layout_parses_into_roles_on_shared_devices() {
    let s =
        parse_spec("log=pcie-flash-2012, data=raid10(4,hdd-15k), temp=pcie-flash-2012,table:Stock=sas-ssd-2012")
            .unwrap();
    assert!(s.is_layout());
    assert_eq!(s.devices().len(), 3, "log and temp share one card");
    assert_eq!(s.device_of(&Role::Data), 0, "data's device comes first");
    assert_eq!(s.device_of(&Role::Log), 1);
    assert_eq!(s.device_of(&Role::Temp), 1);
    assert_eq!(s.device_of(&Role::Table("stock".into())), 2);
    assert_eq!(
        s.device_of(&Role::Table("orders".into())),
        0,
        "unplaced: data"
    );
    assert_eq!(s.device_label(1), "log+temp=pcie-flash-2012");
    let name = s.name();
    assert!(name.starts_with("data=raid10(4,hdd-15k"), "{name}");
    assert_eq!(
        parse_spec(&name).unwrap(),
        s,
        "the canonical name parses back"
    );
    // A plain spec is a one-device layout for every question.
    let one = parse_spec("hdd-15k").unwrap();
    assert_eq!(one.devices().len(), 1);
    assert_eq!(one.device_of(&Role::Log), 0);
}

#[test]
fn bad_layouts_say_what_is_wrong() {
    for (text, says) in [
        ("log=pcie-flash-2012", "names the data device"),
        ("data=hdd-15k,wal=pcie-flash-2012", "unknown role 'wal'"),
        ("data=hdd-15k,log=ssd-9", "unknown device 'ssd-9'"),
        ("data=hdd-15k,data=hdd-10k", "given twice"),
        ("data=hdd-15k,table:=hdd-10k", "table name"),
        ("data=host,log=pcie-flash-2012", "host is the real device"),
        ("data=hdd-15k;log=hdd-10k", "expected ','"),
    ] {
        let e = parse_spec(text).unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn each_device_of_a_layout_has_its_own_state() {
    let layout = parse_spec("data=hdd-15k,log=hdd-15k{rpm=10000}").unwrap();
    let e = Emulator::new(&layout, 1).unwrap();
    let alone = Emulator::new(&parse_spec("hdd-15k").unwrap(), 1).unwrap();
    let t = 1_000_000_000;
    // A burst of scattered reads keeps the second disk busy for a while …
    let data_file = slot(0, 0);
    let log_file = slot(1, 1);
    assert_eq!(slot_device(log_file), 1);
    let mut log_done = t;
    for i in 0..50 {
        log_done = e.submit(t, IoKind::Read, e.place(log_file, i * (7 << 20)), 16 << 10);
    }
    assert!(
        log_done - t > 50_000_000,
        "50 scattered reads take an HDD long"
    );
    // … but a read on the data disk at the same moment is served as on an idle disk.
    let read = e.submit(t, IoKind::Read, e.place(data_file, 8 << 20), 16 << 10) - t;
    let idle = alone.submit(t, IoKind::Read, alone.place(0, 8 << 20), 16 << 10) - t;
    assert_eq!(read, idle, "the data disk did not wait for the log disk");
    // On a single device the same I/Os queue behind each other.
    for i in 0..50 {
        alone.submit(t, IoKind::Read, alone.place(1, i * (7 << 20)), 16 << 10);
    }
    let queued = alone.submit(t, IoKind::Read, alone.place(0, 8 << 20), 16 << 10) - t;
    assert!(queued > 10 * idle, "{queued} vs {idle}");
}

#[test]
fn a_layout_is_shared_between_processes_by_its_text() {
    let path = std::env::temp_dir().join(format!("oltplab-layout-{}", std::process::id()));
    let spec = parse_spec("data=hdd-15k,log=pcie-flash-2012").unwrap();
    let a = Emulator::create_shared(&spec, 3, &path).unwrap();
    let b = Emulator::open_shared(&path).unwrap();
    assert_eq!(b.spec(), &spec);
    let t = 5_000_000_000;
    let first = a.submit(t, IoKind::Read, a.place(slot(0, 2), 0), 16 << 10);
    // The second process sees the first's read on the same disk.
    let second = b.submit(t, IoKind::Read, b.place(slot(0, 2), 64 << 20), 16 << 10);
    assert!(second > first);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn each_device_counts_its_ios_and_busy_time() {
    let e = Emulator::new(&parse_spec("data=hdd-15k,log=pcie-flash-2012").unwrap(), 1).unwrap();
    let t = 1_000_000_000;
    let d1 = e.submit(t, IoKind::Read, e.place(slot(0, 0), 0), 16 << 10);
    // Queued behind the first: the disk is busy from t to the second's completion, once.
    let d2 = e.submit(t, IoKind::Read, e.place(slot(0, 0), 500 << 20), 16 << 10);
    assert!(d2 > d1);
    let w = e.submit(d2, IoKind::Write, e.place(slot(1, 1), 0), 8 << 10);
    let c = e.device_counts(u64::MAX);
    assert_eq!((c[0].reads, c[0].writes, c[0].read_bytes), (2, 0, 32 << 10));
    assert_eq!(
        c[0].busy_ns,
        d2 - t,
        "the union of the two reads' intervals"
    );
    assert_eq!(
        (c[1].reads, c[1].writes, c[1].written_bytes),
        (0, 1, 8 << 10)
    );
    assert_eq!(c[1].busy_ns, w - d2);
    // Read before the work is done, the time still ahead is not counted yet.
    let early = e.device_counts(t + (d2 - t) / 2);
    assert_eq!(early[0].busy_ns, (d2 - t) / 2);
    assert_eq!(c[0].since(&early[0]).busy_ns, (d2 - t) - (d2 - t) / 2);
}

#[test]
fn a_read_cache_counts_its_hits_after_promotion() {
    let e = Emulator::new(
        &parse_spec("readcache(raid10(4,hdd-15k),sas-ssd-2012,size=1g)").unwrap(),
        1,
    )
    .unwrap();
    let mut t = 1_000_000_000;
    // Ten 64 KiB regions read four times each: the first two reads of a region count towards its
    // promotion (the second copies it to the SSD), the next two are hits.
    for round in 0..4 {
        for region in 0..10u64 {
            t = e.submit(t, IoKind::Read, region * (64 << 20), 16 << 10) + 1_000;
        }
        let c = e.device_counts(u64::MAX)[0];
        assert_eq!(c.cache_reads, 10 * (round + 1));
        assert_eq!(c.cache_hits, 10 * round.saturating_sub(1), "round {round}");
    }
    // Writes go through to the backing disks and are not reads of the cache.
    e.submit(t, IoKind::Write, 0, 16 << 10);
    assert_eq!(e.device_counts(u64::MAX)[0].cache_reads, 40);
}
