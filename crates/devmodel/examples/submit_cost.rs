//! The model's own CPU per I/O: a closed loop in virtual time (no waiting, no real I/O), best of five
//! runs of 200,000 I/Os per point, the loop's own cost included. `bench/model-validation` records it.
use oltplab_devmodel::{parse_spec, sim::ClosedLoop};
fn main() {
    for spec in [
        "hdd-10k",
        "hdd-15k",
        "raid5(4,hdd-15k)",
        "sata-ssd-2010",
        "pcie-flash-2012",
        // Layouts: the I/O goes to the data device; the cost of choosing it is the difference.
        "data=hdd-15k,log=pcie-flash-2012",
        "data=pcie-flash-2012,log=hdd-15k,table:stock=sas-ssd-2012",
    ] {
        let s = parse_spec(spec).unwrap();
        for qd in [1u32, 32] {
            let mut best = f64::MAX;
            for _ in 0..5 {
                let mut l = ClosedLoop::random_reads(16 << 10, qd);
                l.ios = 200_000;
                let t = std::time::Instant::now();
                let r = l.run(&s).unwrap();
                std::hint::black_box(r);
                best = best.min(t.elapsed().as_nanos() as f64 / 200_000.0);
            }
            println!("{spec:<20} QD {qd:>2}: {best:>6.0} ns per I/O (model + loop)");
        }
    }
}
