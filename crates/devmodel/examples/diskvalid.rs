//! The HDD model on DiskSim 4.0's validation traces (issue 31; bench/model-validation/disksim-valid.sh).
//!
//! For each drive: reads its extracted parameters (`DRIVE.diskspecs`, the `.model` it names and the
//! `.seek` that names), configures `hdd-10k` with them (`oltplab_devmodel::diskvalid`), runs
//! `DRIVE.trace` through the model in virtual time, one request at a time with the trace's think
//! times, and prints the rms distance between the modelled and the measured response-time
//! distributions beside DiskSim's own figure for the drive.
//!
//! ```text
//! cargo run --release -p oltplab-devmodel --example diskvalid -- --dir bench/model-validation/disksim-valid [--json FILE] [--dump DIR] [--seed N] [--open-loop] [DRIVE…]
//! ```
//! `--dump DIR` writes each drive's requests with their measured and modelled times (`DRIVE.tsv`);
//! `--seed` (42) sets the platters' starting angles; `--open-loop` issues each request when it
//! arrived on the traced drive instead of its think time after the model's previous completion.
use std::path::PathBuf;

use oltplab_devmodel::diskvalid::{self, Issue, DRIVES};

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut json, mut dump, mut drives) = (None, None, None, Vec::new());
    let mut seed = 42u64;
    let mut issue = Issue::AfterCompletion;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--dir" => dir = args.next().map(PathBuf::from),
            "--json" => json = args.next().map(PathBuf::from),
            "--dump" => dump = args.next().map(PathBuf::from),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(seed),
            "--open-loop" => issue = Issue::AsTraced,
            _ => drives.push(a),
        }
    }
    let Some(dir) = dir else {
        eprintln!("diskvalid: give --dir DIR, the directory holding DiskSim's valid/ files");
        std::process::exit(2)
    };
    if drives.is_empty() {
        drives = DRIVES.iter().map(|d| d.0.to_string()).collect();
    }
    println!(
        "| drive | requests | measured mean | model mean | rms (oltplab) | rms (DiskSim) | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mean = |v: &mut dyn Iterator<Item = f64>| {
        let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
        s / n.max(1) as f64
    };
    let (mut rows, mut specs) = (Vec::new(), Vec::new());
    for d in &drives {
        let Some(&(_, name, ds)) = DRIVES.iter().find(|x| x.0 == d) else {
            eprintln!("diskvalid: {d} is not one of runvalid's drives");
            std::process::exit(2)
        };
        let o = match diskvalid::validate(&dir, d, seed, issue) {
            Ok(o) => o,
            Err(e) => {
                println!("| {d} ({name}) | — | — | — | not run: {e} | {ds:.3} ms | — |");
                continue;
            }
        };
        let measured = mean(&mut o.trace.iter().map(|r| r.measured_ms));
        let modelled = mean(&mut o.modelled_ms.iter().copied());
        println!(
            "| {d} ({name}) | {} | {measured:.2} ms | {modelled:.2} ms | {:.3} ms | {ds:.3} ms | {:.2}× |",
            o.trace.len(),
            o.rms_ms,
            o.rms_ms / ds
        );
        if let Some(dump) = &dump {
            // One line per request: direction, first sector, sectors, measured and modelled ms.
            let lines: String = o
                .trace
                .iter()
                .zip(&o.modelled_ms)
                .map(|(r, m)| {
                    let rw = if r.write { 'W' } else { 'R' };
                    format!(
                        "{rw}\t{}\t{}\t{:.3}\t{m:.3}\n",
                        r.sector, r.sectors, r.measured_ms
                    )
                })
                .collect();
            let path = dump.join(format!("{d}.tsv"));
            if let Err(e) = std::fs::write(&path, lines) {
                eprintln!("diskvalid: cannot write {}: {e}", path.display());
                std::process::exit(1)
            }
        }
        rows.push(serde_json::json!({
            "drive": d, "name": name, "requests": o.trace.len(),
            "measured_mean_ms": measured, "model_mean_ms": modelled,
            "rms_ms": o.rms_ms, "disksim_rms_ms": ds, "ratio": o.rms_ms / ds, "spec": o.spec,
        }));
        specs.push(format!("- {d}: `{}`", o.spec));
    }
    println!();
    println!("{}", specs.join("\n"));
    // The one measured queueing gain of a drive DiskSim validated (MSR-TR-2000-55: a Quantum
    // Atlas 10K, 8 KB random reads over the whole drive, about 105/s one at a time and 183/s
    // 32 deep): the validated configuration, given a 32-command queue (the trace ran at depth 1).
    if let Some(spec) = rows.iter().find(|r| r["drive"] == "atlas10k") {
        let text = spec["spec"]
            .as_str()
            .unwrap()
            .replace("queue_max=1.", "queue_max=32.");
        let at = |text: &str, qd: u32| {
            let parsed = oltplab_devmodel::parse_spec(text).unwrap();
            let capacity = parsed.capacity_bytes();
            let mut l = oltplab_devmodel::sim::ClosedLoop::random_reads(8 << 10, qd);
            (l.region_bytes, l.stroke_bytes, l.seed) = (capacity, capacity, seed);
            l.run(&parsed).unwrap().iops
        };
        // The traced host's path moved a sector in about 0.1 ms; MSR's adapter is not stated, so
        // also on an 80 MB/s (Ultra2 SCSI) link.
        let link = text.find("link_mb_s=").expect("a link rate");
        let end = link + text[link..].find(',').expect("more after the link");
        let ultra2 = format!("{}link_mb_s=80{}", &text[..link], &text[end..]);
        let (one, deep) = (at(&text, 1), at(&text, 32));
        let (one80, deep80) = (at(&ultra2, 1), at(&ultra2, 32));
        println!();
        println!(
            "atlas10k with queue_max=32, 8 KiB random reads over the whole drive: {one:.0}/s at QD 1, {deep:.0}/s at QD 32 ({:.2}×); on an 80 MB/s link {one80:.0}/s and {deep80:.0}/s ({:.2}×); MSR-TR-2000-55 measured about 105/s and 183/s (1.75×)",
            deep / one,
            deep80 / one80
        );
    }
    if let Some(path) = json {
        if let Err(e) = std::fs::write(&path, serde_json::to_string_pretty(&rows).unwrap()) {
            eprintln!("diskvalid: cannot write {}: {e}", path.display());
            std::process::exit(1)
        }
    }
}
