//! Prints what the model predicts for S1's calibration points and a few datasheet checks.
use oltplab_devmodel::{parse_spec, sim::ClosedLoop};

fn main() {
    let specs: Vec<String> = std::env::args().skip(1).collect();
    let specs = if specs.is_empty() {
        vec![
            "hdd-10k",
            "sata-ssd-2010",
            "pcie-flash-2012",
            "hdd-15k",
            "hdd-7.2k",
            "sas-ssd-2012",
            "nvme-gen4",
            "optane",
            "ram",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    } else {
        specs
    };
    for s in specs {
        let spec = parse_spec(&s).unwrap();
        for (bs, qd) in [(16384u64, 1u32), (16384, 32), (4096, 1), (4096, 32)] {
            let r = ClosedLoop::random_reads(bs, qd).run(&spec).unwrap();
            let mut w = ClosedLoop::random_reads(bs, qd);
            w.read_pct = 0;
            let rw = w.run(&spec).unwrap();
            println!("{s:<40} bs {bs:>6} qd {qd:>3}: read {:>10.0} IOPS {:>10.1} µs | write {:>10.0} IOPS {:>10.1} µs", r.iops, r.lat_ns_mean / 1e3, rw.iops, rw.lat_ns_mean / 1e3);
        }
    }
}
