//! The device models against published measurements and datasheets: one table, run in virtual
//! time, that the model tests assert and `bench/model-validation` prints. Each row says whether
//! its reference was used to set the model's parameters (calibration) or was left out of that
//! (validation), so a reader can tell a fit from a check.

use serde::Serialize;

use crate::parse_spec;
use crate::sim::ClosedLoop;

/// What a row measures, in virtual time on a fresh model.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Random reads over the whole drive (a region that stands for the full stroke): IOPS.
    RandomReadIops { block_bytes: u64, queue_depth: u32 },
    /// Random reads over the whole drive: IOPS at `queue_depth` over IOPS at QD 1 (reordering's gain).
    QueueGain { block_bytes: u64, queue_depth: u32 },
    /// Random reads over `span_pct` of the drive: IOPS.
    SpanReadIops {
        block_bytes: u64,
        queue_depth: u32,
        span_pct: u32,
    },
    /// Random writes: IOPS.
    RandomWriteIops { block_bytes: u64, queue_depth: u32 },
    /// Mean latency of random reads, µs.
    RandomReadLatencyUs { block_bytes: u64, queue_depth: u32 },
    /// Mean latency of random writes, µs.
    RandomWriteLatencyUs { block_bytes: u64, queue_depth: u32 },
    /// Sequential reads: MB/s.
    SequentialReadMbS { block_bytes: u64, queue_depth: u32 },
    /// Random writes, 20,000 of them (a burst a write-back cache takes whole): IOPS.
    BurstWriteIops { block_bytes: u64, queue_depth: u32 },
    /// Sequential writes: MB/s (20,000 of them: past a small write-back cache).
    SequentialWriteMbS { block_bytes: u64, queue_depth: u32 },
    /// Appends of `block_bytes` each followed by a flush, one at a time: commits per second.
    CommitsPerS { block_bytes: u64 },
}

/// Was the reference used to set the parameters, or only compared with afterwards?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Calibration,
    Validation,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Check {
    pub spec: &'static str,
    pub figure: Figure,
    pub reference: f64,
    pub role: Role,
    pub source: &'static str,
    /// Why the model may stand off this reference, where it does.
    pub note: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    #[serde(flatten)]
    pub check: Check,
    pub what: String,
    pub unit: &'static str,
    pub model: f64,
    /// (model − reference) / reference, in percent.
    pub error_pct: f64,
}

/// The goal for every row: the model within this share of its reference.
pub const TOLERANCE_PCT: f64 = 15.0;

impl Outcome {
    pub fn within_tolerance(&self) -> bool {
        self.error_pct.abs() <= TOLERANCE_PCT
    }
}

impl Figure {
    fn describe(self) -> (String, &'static str) {
        let k = |b: u64| format!("{} KiB", b / 1024);
        match self {
            Figure::RandomReadIops {
                block_bytes,
                queue_depth,
            } => (
                format!("{} random reads, QD {queue_depth}", k(block_bytes)),
                "IOPS",
            ),
            Figure::QueueGain {
                block_bytes,
                queue_depth,
            } => (
                format!(
                    "{} random reads, QD {queue_depth} over QD 1",
                    k(block_bytes)
                ),
                "×",
            ),
            Figure::SpanReadIops {
                block_bytes,
                queue_depth,
                span_pct,
            } => (
                format!(
                    "{} random reads, QD {queue_depth}, {span_pct} % of the drive",
                    k(block_bytes)
                ),
                "IOPS",
            ),
            Figure::RandomWriteIops {
                block_bytes,
                queue_depth,
            } => (
                format!("{} random writes, QD {queue_depth}", k(block_bytes)),
                "IOPS",
            ),
            Figure::RandomReadLatencyUs {
                block_bytes,
                queue_depth,
            } => (
                format!("{} random read latency, QD {queue_depth}", k(block_bytes)),
                "µs",
            ),
            Figure::RandomWriteLatencyUs {
                block_bytes,
                queue_depth,
            } => (
                format!("{} random write latency, QD {queue_depth}", k(block_bytes)),
                "µs",
            ),
            Figure::SequentialReadMbS {
                block_bytes,
                queue_depth,
            } => (
                format!("{} sequential reads, QD {queue_depth}", k(block_bytes)),
                "MB/s",
            ),
            Figure::BurstWriteIops {
                block_bytes,
                queue_depth,
            } => (
                format!(
                    "{} random write burst (20,000), QD {queue_depth}",
                    k(block_bytes)
                ),
                "IOPS",
            ),
            Figure::SequentialWriteMbS {
                block_bytes,
                queue_depth,
            } => (
                format!("{} sequential writes, QD {queue_depth}", k(block_bytes)),
                "MB/s",
            ),
            Figure::CommitsPerS { block_bytes } => (
                format!("{} append + flush, one at a time", k(block_bytes)),
                "commits/s",
            ),
        }
    }

    /// The model's figure, in virtual time.
    pub fn model(self, spec: &str) -> oltplab_core::Result<f64> {
        let spec = parse_spec(spec).map_err(|e| oltplab_core::Error::usage(e.to_string()))?;
        let reads = |bs: u64, qd: u32| {
            let mut l = ClosedLoop::random_reads(bs, qd);
            // Deep queues need more I/Os to settle; shallow ones fewer to be exact.
            l.ios = 20_000 + 500 * qd as u64;
            l
        };
        Ok(match self {
            Figure::RandomReadIops {
                block_bytes,
                queue_depth,
            } => reads(block_bytes, queue_depth).run(&spec)?.iops,
            Figure::QueueGain {
                block_bytes,
                queue_depth,
            } => {
                reads(block_bytes, queue_depth).run(&spec)?.iops
                    / reads(block_bytes, 1).run(&spec)?.iops
            }
            Figure::SpanReadIops {
                block_bytes,
                queue_depth,
                span_pct,
            } => {
                // A region of the drive: seeks over it are that share of the stroke.
                let mut l = reads(block_bytes, queue_depth);
                l.stroke_bytes = l.region_bytes * 100 / span_pct.max(1) as u64;
                l.run(&spec)?.iops
            }
            Figure::RandomWriteIops {
                block_bytes,
                queue_depth,
            } => {
                ClosedLoop {
                    read_pct: 0,
                    ios: 200_000,
                    ..reads(block_bytes, queue_depth)
                }
                .run(&spec)?
                .iops
            }
            Figure::RandomReadLatencyUs {
                block_bytes,
                queue_depth,
            } => reads(block_bytes, queue_depth).run(&spec)?.lat_ns_mean / 1e3,
            Figure::RandomWriteLatencyUs {
                block_bytes,
                queue_depth,
            } => {
                ClosedLoop {
                    read_pct: 0,
                    ..reads(block_bytes, queue_depth)
                }
                .run(&spec)?
                .lat_ns_mean
                    / 1e3
            }
            Figure::SequentialReadMbS {
                block_bytes,
                queue_depth,
            } => {
                let r = ClosedLoop {
                    random_pct: 0,
                    ..reads(block_bytes, queue_depth)
                }
                .run(&spec)?;
                r.iops * block_bytes as f64 / 1e6
            }
            Figure::BurstWriteIops {
                block_bytes,
                queue_depth,
            } => {
                ClosedLoop {
                    read_pct: 0,
                    ..reads(block_bytes, queue_depth)
                }
                .run(&spec)?
                .iops
            }
            Figure::SequentialWriteMbS {
                block_bytes,
                queue_depth,
            } => {
                let r = ClosedLoop {
                    random_pct: 0,
                    read_pct: 0,
                    ..reads(block_bytes, queue_depth)
                }
                .run(&spec)?;
                r.iops * block_bytes as f64 / 1e6
            }
            Figure::CommitsPerS { block_bytes } => {
                ClosedLoop::commits(block_bytes).run(&spec)?.iops
            }
        })
    }
}

/// Runs every row of [`CHECKS`].
pub fn run() -> oltplab_core::Result<Vec<Outcome>> {
    CHECKS
        .iter()
        .map(|c| {
            let model = c.figure.model(c.spec)?;
            let (what, unit) = c.figure.describe();
            Ok(Outcome {
                check: *c,
                what,
                unit,
                model,
                error_pct: (model - c.reference) / c.reference * 100.0,
            })
        })
        .collect()
}

// The references, named once.
const SAVVIO_DS: &str = "Seagate Savvio 10K.4 product manual: 3.8 ms average read seek + 2.99 ms average rotational latency + 0.2 ms controller overhead → 1/7.0 ms ≈ 143 random reads/s at QD 1";
const SAVVIO_DEEP: &str = "Seagate on the Savvio 10K family: over 400 random IOPS with a deep command queue, more than double the single-command figure";
const CHEETAH_DS: &str = "Seagate Cheetah 15K.7 product manual 100516226: 3.4 ms average read seek + 2.0 ms average rotational latency + ~0.1 ms overhead → ≈ 182 random reads/s at QD 1";
const CONSTELLATION_DS: &str = "Seagate Constellation ES product manual 100516240: 8.5 ms average read seek + 4.16 ms average rotational latency + ~0.1 ms overhead → ≈ 78 random reads/s at QD 1";
const ATLAS: &str = "L. Chung, J. Gray, B. Worthington, R. Horst, Windows 2000 Disk IO Performance, MSR-TR-2000-55 (2000): a Quantum Atlas 10K (10,000 rpm SCSI) read 8 KB random requests over the whole drive at about 105/s one at a time and 1.1 per revolution (≈ 183/s) 32 deep: a gain of about 1.75×";
const PG_HP: &str = "G. Smith, PostgreSQL 9.0 High Performance (Packt, 2010), ch. 2: a commit waits for one rotation with the write cache off — at most 120 (7,200 rpm), 166 (10,000 rpm), 250 (15,000 rpm) commits/s";
const X25E_DS: &str = "Intel X25-E SATA SSD datasheet (319984): 35,000 / 3,300 random 4 KB read / write IOPS, 75 / 85 µs read / write latency, 250 MB/s sequential read";
const IODRIVE_DS: &str = "Fusion-io ioDrive Duo SLC datasheet: 186,000 / 167,000 random 4 KB read / write IOPS; ioDrive2 SLC datasheet: 47 µs read, 15 µs write access latency";

const CHEETAH_SEQ: &str = "Seagate Cheetah 15K.7 product manual 100516226, 4.2.3: sustainable disk transfer rate 122 (inner) to 204 (outer) MB/s; HP, \"Technology considerations in selecting a direct attached storage solution for HP ProLiant Gen8 servers\": a 15,000 rpm SAS drive sustains about 200 MB/s of sequential reads, and HP's \"Smart Array Controllers and basic RAID performance factors\": the drive's throughput is the upper limit on sequential performance behind the controller";
const HP_CTRL: &str = "HP technology brief \"HP Smart Array Controllers and basic RAID performance factors\" (2012): the P410i generation's RAID-on-chip supports up to 60,000 4 KB random IOPS; posted (write-back) writes complete in microseconds";

/// Every row of the validation table.
pub const CHECKS: &[Check] = &[
    // The RAID controller of S2 and S4 (`wbcache`, issue 31): one 15k drive behind it, write back
    // and read ahead, against the drive without it. The region is the drive's outer zone.
    Check {
        spec: "hdd-15k",
        figure: Figure::SequentialWriteMbS {
            block_bytes: 16 << 10,
            queue_depth: 1,
        },
        reference: 250.0 * 16384.0 / 1e6,
        role: Role::Validation,
        source: PG_HP,
        note: "",
    },
    Check {
        spec: "wbcache(hdd-15k,size=16m)",
        figure: Figure::SequentialWriteMbS {
            block_bytes: 16 << 10,
            queue_depth: 1,
        },
        reference: 204.0,
        role: Role::Validation,
        source: CHEETAH_SEQ,
        note: "",
    },
    Check {
        spec: "wbcache(hdd-15k,size=1g,readahead=on)",
        figure: Figure::SequentialReadMbS {
            block_bytes: 16 << 10,
            queue_depth: 1,
        },
        reference: 204.0,
        role: Role::Validation,
        source: CHEETAH_SEQ,
        note: "",
    },
    Check {
        spec: "wbcache(hdd-15k,size=1g)",
        figure: Figure::BurstWriteIops {
            block_bytes: 4 << 10,
            queue_depth: 32,
        },
        reference: 60_000.0,
        role: Role::Calibration,
        source: HP_CTRL,
        note: "",
    },
    Check {
        spec: "hdd-10k",
        figure: Figure::RandomReadIops {
            block_bytes: 4 << 10,
            queue_depth: 1,
        },
        reference: 143.0,
        role: Role::Calibration,
        source: SAVVIO_DS,
        note: "",
    },
    Check {
        spec: "hdd-10k",
        figure: Figure::RandomReadIops {
            block_bytes: 4 << 10,
            queue_depth: 32,
        },
        reference: 400.0,
        role: Role::Validation,
        source: SAVVIO_DEEP,
        note: "",
    },
    Check {
        spec: "hdd-10k",
        figure: Figure::CommitsPerS {
            block_bytes: 8 << 10,
        },
        reference: 166.0,
        role: Role::Validation,
        source: PG_HP,
        note: "",
    },
    Check {
        spec: "hdd-10k",
        figure: Figure::QueueGain {
            block_bytes: 8 << 10,
            queue_depth: 32,
        },
        reference: 1.75,
        role: Role::Validation,
        source: ATLAS,
        note: "a 1999 drive measured through NTFS and a SCSI adapter; the Savvio-era drives this model stands for publish over 400 IOPS against about 143 (2.8×), and the model's reordering over every queued request follows those: it overstates an older drive's gain",
    },
    Check {
        spec: "hdd-15k",
        figure: Figure::RandomReadIops {
            block_bytes: 4 << 10,
            queue_depth: 1,
        },
        reference: 182.0,
        role: Role::Calibration,
        source: CHEETAH_DS,
        note: "",
    },
    Check {
        spec: "hdd-15k",
        figure: Figure::CommitsPerS {
            block_bytes: 8 << 10,
        },
        reference: 250.0,
        role: Role::Validation,
        source: PG_HP,
        note: "",
    },
    Check {
        spec: "hdd-7.2k",
        figure: Figure::RandomReadIops {
            block_bytes: 4 << 10,
            queue_depth: 1,
        },
        reference: 78.0,
        role: Role::Calibration,
        source: CONSTELLATION_DS,
        note: "",
    },
    Check {
        spec: "hdd-7.2k",
        figure: Figure::CommitsPerS {
            block_bytes: 8 << 10,
        },
        reference: 120.0,
        role: Role::Validation,
        source: PG_HP,
        note: "",
    },
    Check {
        spec: "sata-ssd-2010",
        figure: Figure::RandomReadIops {
            block_bytes: 4 << 10,
            queue_depth: 32,
        },
        reference: 35_000.0,
        role: Role::Calibration,
        source: X25E_DS,
        note: "",
    },
    Check {
        spec: "sata-ssd-2010",
        figure: Figure::RandomReadLatencyUs {
            block_bytes: 4 << 10,
            queue_depth: 1,
        },
        reference: 75.0,
        role: Role::Validation,
        source: X25E_DS,
        note: "the catalogue keeps S1's calibration (240 µs read overhead: S1's SATA SSD behind its RAID controller read 16 KB in 1/16.7 of the HDD's time), because reproducing S1 is what the study is for; even without it the catalogue's 40 MB/s channels move a 4 KiB page in 102 µs, so the datasheet's 75 µs is out of the model's reach",
    },
    Check {
        spec: "sata-ssd-2010",
        figure: Figure::RandomWriteIops {
            block_bytes: 4 << 10,
            queue_depth: 32,
        },
        reference: 3_300.0,
        role: Role::Calibration,
        source: X25E_DS,
        note: "",
    },
    Check {
        spec: "sata-ssd-2010",
        figure: Figure::SequentialReadMbS {
            block_bytes: 128 << 10,
            queue_depth: 1,
        },
        reference: 250.0,
        role: Role::Validation,
        source: X25E_DS,
        note: "",
    },
    Check {
        spec: "pcie-flash-2012",
        figure: Figure::RandomReadIops {
            block_bytes: 4 << 10,
            queue_depth: 64,
        },
        reference: 186_000.0,
        role: Role::Calibration,
        source: IODRIVE_DS,
        note: "",
    },
    Check {
        spec: "pcie-flash-2012",
        figure: Figure::RandomWriteIops {
            block_bytes: 4 << 10,
            queue_depth: 64,
        },
        reference: 167_000.0,
        role: Role::Calibration,
        source: IODRIVE_DS,
        note: "",
    },
    Check {
        spec: "pcie-flash-2012",
        figure: Figure::RandomReadLatencyUs {
            block_bytes: 4 << 10,
            queue_depth: 1,
        },
        reference: 47.0,
        role: Role::Validation,
        source: IODRIVE_DS,
        note: "",
    },
    Check {
        spec: "pcie-flash-2012",
        figure: Figure::RandomWriteLatencyUs {
            block_bytes: 4 << 10,
            queue_depth: 1,
        },
        reference: 15.0,
        role: Role::Calibration,
        source: IODRIVE_DS,
        note: "",
    },
];
