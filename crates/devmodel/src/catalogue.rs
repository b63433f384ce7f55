//! The device catalogue: every named device, its parameters, and where each number comes from.
//!
//! Parameters are plain numbers with their unit last in the name (`seek_avg_ms`, `link_mb_s`); a
//! spec can override any of them (`hdd-15k{rpm=10000}`). MB and GB are decimal, as datasheets use
//! them; KiB/MiB are binary.

use serde::Serialize;

/// What kind of model a catalogue entry builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// No emulation: the real device under the path.
    Host,
    /// One actuator, seek curve, rotation, zoned media rate, command-queue reordering.
    Hdd,
    /// Channels × dies of NAND (or 3D XPoint), a controller, a host link and a write buffer.
    Flash,
    /// Memory: a fixed latency and a bandwidth.
    Ram,
}

/// One parameter of a catalogue device.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Param {
    pub key: &'static str,
    pub value: f64,
    /// What the number means.
    pub about: &'static str,
    /// Datasheet, paper or calibration the number comes from.
    pub source: &'static str,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct CatalogueEntry {
    pub name: &'static str,
    pub kind: DeviceKind,
    pub summary: &'static str,
    pub params: &'static [Param],
}

/// Entries are unique by name.
impl PartialEq for CatalogueEntry {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl CatalogueEntry {
    pub fn param(&self, key: &str) -> Option<f64> {
        self.params.iter().find(|p| p.key == key).map(|p| p.value)
    }
}

/// Every device the spec language knows by name.
pub fn catalogue() -> &'static [CatalogueEntry] {
    CATALOGUE
}

/// The entry called `name`, if any.
pub fn lookup(name: &str) -> Option<&'static CatalogueEntry> {
    CATALOGUE.iter().find(|e| e.name == name)
}

/// The catalogue's names, comma-separated, for error messages.
pub fn names() -> String {
    CATALOGUE
        .iter()
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the RAID controller of `wbcache(…)` does per command, with its sources: S2's PERC H710P
/// and S1's Smart Array P410i class (1 GB battery/flash-backed cache, PCIe 2.0 ×8, 6 Gb/s SAS).
pub fn controller() -> &'static [Param] {
    CONTROLLER
}

const HP_RAID: &str = "HP technology brief \"HP Smart Array Controllers and basic RAID performance factors\" (Dec 2012): the previous generation's RAID-on-chip (the P410i's) \"supports up to 60,000 4 KB random IOPS\"; posted writes complete \"in microseconds instead of milliseconds\"; the write cache is destaged with write coalescing and command reordering";
const PCIE2: &str = "PCI Express 2.0: 500 MB/s per lane and direction (Tom's Hardware, \"6 Gb SAS, 16 SSDs, 3.4 GB/s\"); the PERC H710P, the Smart Array P410i and LSI SAS2208 cards are PCIe 2.0 ×8";
const READ_AHEAD: &str = "Dell PERC H710/H710P/H810 User's Guide, virtual disk read policies: read-ahead reads sequentially ahead of requested data into the cache; adaptive read-ahead begins when the two most recent accesses were sequential and reverts on random ones. How far ahead: a full stripe of the array (Gateway 840 RAID manual: \"read in advance a full 256 KB\" stripe for a 64 KB request); two such chunks are kept in flight (assumed, so that the drives stream)";
const CACHE_1G: &str = "S2's PERC H710P: 1 GB non-volatile cache (Dell); the Smart Array P410i with its 1 GB flash-backed cache (hpacucli: \"Total Cache Size: 1024 MB\")";

const CONTROLLER: &[Param] = &[
    p("size_mib", 1024.0, "battery/flash-backed cache; writes wait for destaging when it is full (`size=`)", CACHE_1G),
    p("cmd_us", 16.7, "controller time per command served from the cache (an acknowledged write, a read-ahead hit, a flush): 60,000 commands/s", HP_RAID),
    p("link_mb_s", 4000.0, "host link: a cache hit's bytes cross PCIe 2.0 ×8", PCIE2),
    p("destage_round", 8.0, "dirty extents written to the drives per round (about 1 MiB at most), sorted by address and merged when contiguous: write coalescing and command reordering; the next round is queued when the drives begin one, so a read waits behind two rounds at most (the round size is assumed)", HP_RAID),
    p("readahead_chunks", 2.0, "read-ahead chunks in flight per detected stream (`readahead=on`: a chunk is a full stripe of the array behind)", READ_AHEAD),
    p("readahead_streams", 8.0, "sequential streams the controller follows at once (assumed; the most recently used are kept)", READ_AHEAD),
];

const fn p(key: &'static str, value: f64, about: &'static str, source: &'static str) -> Param {
    Param {
        key,
        value,
        about,
        source,
    }
}

// Sources, named once so every parameter cites the same document the same way.
const RW94: &str =
    "Ruemmler & Wilkes, \"An introduction to disk drive modeling\", IEEE Computer 27(3), 1994";
const CHEETAH: &str =
    "Seagate Cheetah 15K.7 SAS product manual 100516226 (ST3600057SS), performance section";
const MBF: &str = "Toshiba MBF2600RC (S1's drive): 2.5\" SAS, 600 GB, 10,025 rpm";
const SAVVIO: &str = "Seagate Savvio 10K.4 SAS product manual (2.5\" 10k rpm 600 GB, the MBF2600RC's class), access-time table: read/write, with and without controller overhead";
const CLASS: &str = "class-typical value, assumed: the datasheets consulted did not state it";
const WCE_OFF: &str = "write cache off, as databases and RAID controllers run drives (HP Smart Array controllers such as S1's P410i disable the drives' write cache by default): a write completes when it is on the media; `write_cache=on` models a drive with it on";
const HIT: &str = "class-typical command time of a read served from the drive's buffer, assumed (the datasheets give only the media-access overhead)";
const HIT_WRITE: &str = "class-typical, assumed equal to a read hit's command time (the datasheets do not give it; DiskSim 4.0's extracted parameters of six 1998–2000 SCSI drives put write hits at 0.1–1.0 ms against read hits of 0.07–0.37 ms)";
const CONSTELLATION: &str =
    "Seagate Constellation ES (ST32000644NS) product manual 100516240, performance section";
const S1: &str = "S1 (docs/studies.md): 16 KB random reads measured 1/16.7 of the HDD's latency and 43.2× its IOPS on the SATA SSD, 1/160 and 208.1× on the PCIe flash";
const SATA2: &str =
    "SATA 3 Gb/s: 8b/10b coding gives 300 MB/s, less frame overhead (SATA-IO revision 2.6)";
const SS805: &str = "Samsung SS805 / Intel X25-E class 2010 SLC SATA SSD datasheets (X25-E: 250/170 MB/s, 35,000/3,300 IOPS 4 KB)";
const SLC_NAND: &str =
    "SLC NAND datasheets of the period (e.g. Micron MT29F SLC: tR 25 µs, tPROG 200–250 µs typical)";
const SAS_SSD: &str = "HGST Ultrastar SSD400M / SSD400S.B class 2012 SAS 6 Gb/s SSD datasheets (MLC-eX / SLC; ~500/450 MB/s, ~50k/20k+ IOPS 4 KB)";
const SAS6: &str = "SAS 6 Gb/s: 600 MB/s per lane after 8b/10b coding (T10 SAS-2)";
const IODRIVE: &str = "Fusion-io ioDrive Duo SLC datasheet (1.5/1.4 GB/s, 186,000/167,000 IOPS) and ioDrive2 SLC datasheet (47 µs read, 15 µs write access latency)";
const NVME4: &str = "Samsung PM9A3 / 980 PRO class PCIe 4.0 ×4 NVMe datasheets (~7 GB/s read, ~1M IOPS 4 KB random read, TLC tR ~45–60 µs)";
const PCIE4: &str = "PCIe 4.0 ×4: 16 GT/s × 4 lanes, 128b/130b ≈ 7.9 GB/s raw";
const OPTANE: &str = "Intel Optane SSD DC P4800X datasheet (10 µs read/write latency, 550k/500k IOPS 4 KB, 2.4/2.0 GB/s)";
const DRAM: &str =
    "DDR4 memory: ~0.1 µs access, one memcpy stream ~10 GB/s; plus a system call's ~1 µs";

const HDD_15K: &[Param] = &[
    p(
        "capacity_gb",
        600.0,
        "formatted capacity (decimal GB)",
        CHEETAH,
    ),
    p(
        "rpm",
        15_000.0,
        "spindle speed (2.0 ms average rotational latency)",
        CHEETAH,
    ),
    p("seek_track_ms", 0.2, "track-to-track seek, read", CHEETAH),
    p(
        "seek_avg_ms",
        3.4,
        "average seek, read (weighted over all seek lengths)",
        CHEETAH,
    ),
    p("seek_full_ms", 6.6, "full-stroke seek, read", CLASS),
    p(
        "write_settle_ms",
        0.5,
        "extra settling before a write (average write seek 3.9 ms minus read 3.4 ms)",
        CHEETAH,
    ),
    p(
        "media_outer_mb_s",
        204.0,
        "sustainable transfer rate, outer zone (maximum)",
        CHEETAH,
    ),
    p(
        "media_inner_mb_s",
        122.0,
        "sustainable transfer rate, inner zone (minimum)",
        CHEETAH,
    ),
    p(
        "overhead_us",
        100.0,
        "command overhead per I/O (controller, bus)",
        RW94,
    ),
    p(
        "queue_max",
        32.0,
        "commands the drive reorders at once (tagged command queueing)",
        CLASS,
    ),
    p("link_mb_s", 600.0, "host interface payload rate", SAS6),
    p(
        "cache_mib",
        16.0,
        "drive buffer: segments that read ahead, and the write cache when it is on",
        CHEETAH,
    ),
    p(
        "cache_segments",
        16.0,
        "segments the buffer is divided into, each holding and reading ahead one stream (1–16)",
        CLASS,
    ),
    p(
        "hit_overhead_us",
        50.0,
        "command time of a read served from the buffer",
        HIT,
    ),
    p(
        "write_hit_overhead_us",
        50.0,
        "command time of a write the buffer takes, with the write cache on (then acknowledged before it is on the media)",
        HIT_WRITE,
    ),
    p(
        "write_cache",
        0.0,
        "1 (on) acknowledges writes from the buffer; 0 (off) writes through",
        WCE_OFF,
    ),
];

const HDD_10K: &[Param] = &[
    p("capacity_gb", 600.0, "formatted capacity (decimal GB)", MBF),
    p("rpm", 10_025.0, "spindle speed", MBF),
    p(
        "seek_track_ms",
        0.3,
        "single-track seek, read, without controller overhead",
        SAVVIO,
    ),
    p(
        "seek_avg_ms",
        3.8,
        "average seek, read, without controller overhead",
        SAVVIO,
    ),
    p(
        "seek_full_ms",
        7.81,
        "full-stroke seek, read, without controller overhead",
        SAVVIO,
    ),
    p(
        "write_settle_ms",
        0.6,
        "extra settling before a write (average write seek 4.4 ms minus read 3.8 ms)",
        SAVVIO,
    ),
    p(
        "media_outer_mb_s",
        157.0,
        "sustained media rate, outer zone",
        CLASS,
    ),
    p(
        "media_inner_mb_s",
        83.0,
        "sustained media rate, inner zone",
        CLASS,
    ),
    p(
        "overhead_us",
        200.0,
        "controller overhead per command (access time 4.0 ms with it, 3.8 ms without)",
        SAVVIO,
    ),
    p(
        "queue_max",
        32.0,
        "commands the drive reorders at once (tagged command queueing)",
        CLASS,
    ),
    p("link_mb_s", 600.0, "host interface payload rate", SAS6),
    p(
        "cache_mib",
        16.0,
        "drive buffer: segments that read ahead, and the write cache when it is on",
        MBF,
    ),
    p(
        "cache_segments",
        16.0,
        "segments the buffer is divided into, each holding and reading ahead one stream (1–16)",
        CLASS,
    ),
    p(
        "hit_overhead_us",
        50.0,
        "command time of a read served from the buffer",
        HIT,
    ),
    p(
        "write_hit_overhead_us",
        50.0,
        "command time of a write the buffer takes, with the write cache on (then acknowledged before it is on the media)",
        HIT_WRITE,
    ),
    p(
        "write_cache",
        0.0,
        "1 (on) acknowledges writes from the buffer; 0 (off) writes through",
        WCE_OFF,
    ),
];

const HDD_7K: &[Param] = &[
    p(
        "capacity_gb",
        2000.0,
        "formatted capacity (decimal GB)",
        CONSTELLATION,
    ),
    p("rpm", 7_200.0, "spindle speed", CONSTELLATION),
    p("seek_track_ms", 0.5, "track-to-track seek, read", CLASS),
    p("seek_avg_ms", 8.5, "average seek, read", CONSTELLATION),
    p("seek_full_ms", 17.0, "full-stroke seek, read", CLASS),
    p(
        "write_settle_ms",
        1.0,
        "extra settling before a write (average write seek 9.5 ms minus read 8.5 ms)",
        CONSTELLATION,
    ),
    p(
        "media_outer_mb_s",
        150.0,
        "sustained media rate, outer zone",
        CONSTELLATION,
    ),
    p(
        "media_inner_mb_s",
        75.0,
        "sustained media rate, inner zone",
        CLASS,
    ),
    p(
        "overhead_us",
        100.0,
        "command overhead per I/O (controller, bus)",
        RW94,
    ),
    p(
        "queue_max",
        32.0,
        "commands the drive reorders at once (NCQ)",
        CLASS,
    ),
    p("link_mb_s", 285.0, "host interface payload rate", SATA2),
    p(
        "cache_mib",
        16.0,
        "drive buffer: segments that read ahead, and the write cache when it is on",
        CONSTELLATION,
    ),
    p(
        "cache_segments",
        16.0,
        "segments the buffer is divided into, each holding and reading ahead one stream (1–16)",
        CLASS,
    ),
    p(
        "hit_overhead_us",
        50.0,
        "command time of a read served from the buffer",
        HIT,
    ),
    p(
        "write_hit_overhead_us",
        50.0,
        "command time of a write the buffer takes, with the write cache on (then acknowledged before it is on the media)",
        HIT_WRITE,
    ),
    p(
        "write_cache",
        0.0,
        "1 (on) acknowledges writes from the buffer; 0 (off) writes through",
        WCE_OFF,
    ),
];

const SATA_SSD_2010: &[Param] = &[
    p("capacity_gb", 100.0, "capacity (decimal GB)", SS805),
    p("channels", 10.0, "flash channels", SS805),
    p("dies_per_channel", 2.0, "dies per channel", SS805),
    p("page_kib", 4.0, "flash page", SLC_NAND),
    p("read_us", 25.0, "array read time per page (tR), SLC", SLC_NAND),
    p("program_us", 482.0, "effective program time per page: 20 dies × 4 KiB / 482 µs = the 170 MB/s sequential write", SS805),
    p("waf_random", 12.6, "program-time factor for random writes (garbage collection): 170 MB/s ÷ 3,300 random 4 KB writes/s", SS805),
    p("channel_mb_s", 40.0, "flash bus rate per channel (ONFI 1.0 asynchronous)", SLC_NAND),
    p("link_mb_s", 285.0, "host link payload rate (SATA 3 Gb/s)", SATA2),
    p("read_overhead_us", 240.0, "fixed firmware + host-stack latency per read, pipelined: S1's SSD took 1/16.7 of the HDD's 16 KB read latency", S1),
    p("cmd_occupancy_us", 28.6, "controller time per command: bounds IOPS at 35,000 4 KB reads/s", SS805),
    p("controllers", 1.0, "controller processors", SS805),
    p("write_buffer_mib", 16.0, "volatile DRAM write buffer (write cache on)", SS805),
    p("write_ack_us", 70.0, "write acknowledged from the buffer after the transfer (85 µs 4 KB write latency in all)", SS805),
    p("power_loss_protected", 0.0, "1 if the write buffer survives power loss (then a flush is free); X25-E class drives have no capacitor", SS805),
];

const SAS_SSD_2012: &[Param] = &[
    p("capacity_gb", 400.0, "capacity (decimal GB)", SAS_SSD),
    p("channels", 16.0, "flash channels", SAS_SSD),
    p("dies_per_channel", 4.0, "dies per channel", SAS_SSD),
    p("page_kib", 8.0, "flash page", SAS_SSD),
    p(
        "read_us",
        50.0,
        "array read time per page (tR), eMLC",
        SAS_SSD,
    ),
    p(
        "program_us",
        1360.0,
        "effective program time per page: 64 dies × 8 KiB / 1.36 ms ≈ 385 MB/s sequential write",
        SAS_SSD,
    ),
    p(
        "waf_random",
        3.9,
        "program-time factor for random writes: 385 MB/s ÷ 24,000 random 4 KB writes/s",
        SAS_SSD,
    ),
    p(
        "channel_mb_s",
        100.0,
        "flash bus rate per channel (ONFI 2 synchronous)",
        SAS_SSD,
    ),
    p(
        "link_mb_s",
        550.0,
        "host link payload rate (SAS 6 Gb/s, one lane)",
        SAS6,
    ),
    p(
        "read_overhead_us",
        40.0,
        "fixed firmware latency per read, pipelined",
        SAS_SSD,
    ),
    p(
        "cmd_occupancy_us",
        17.9,
        "controller time per command: bounds IOPS at ~56,000 4 KB reads/s",
        SAS_SSD,
    ),
    p("controllers", 1.0, "controller processors", SAS_SSD),
    p(
        "write_buffer_mib",
        32.0,
        "power-loss-protected write buffer",
        SAS_SSD,
    ),
    p(
        "write_ack_us",
        30.0,
        "write acknowledged from the buffer after the transfer",
        SAS_SSD,
    ),
    p(
        "power_loss_protected",
        1.0,
        "1 if the write buffer survives power loss (then a flush is free)",
        SAS_SSD,
    ),
];

const PCIE_FLASH_2012: &[Param] = &[
    p("capacity_gb", 640.0, "capacity of the Duo (two 320 GB SLC modules)", IODRIVE),
    p("channels", 16.0, "flash channels, both modules", IODRIVE),
    p("dies_per_channel", 4.0, "dies per channel", IODRIVE),
    p("page_kib", 4.0, "flash page", SLC_NAND),
    p("read_us", 25.0, "array read time per page (tR), SLC", SLC_NAND),
    p("program_us", 187.0, "effective program time per page: 64 dies × 4 KiB / 187 µs = the 1.4 GB/s write bandwidth", IODRIVE),
    p("waf_random", 2.05, "program-time factor for random writes: 1.4 GB/s ÷ 167,000 random 4 KB writes/s", IODRIVE),
    p("channel_mb_s", 800.0, "page transfer rate: ioMemory stripes each page over a wide bank of dies", IODRIVE),
    p("link_mb_s", 1500.0, "sustained read bandwidth (PCIe 1.1 ×8 shared by both modules)", IODRIVE),
    p("read_overhead_us", 8.0, "fixed driver + controller latency per read, pipelined (4 KB reads come to 41 µs, 16 KB to 49 µs: S1's 1/160 ratio pulls below the 47 µs datasheet figure)", S1),
    p("cmd_occupancy_us", 10.7, "controller time per command per module: two modules give 186,000 IOPS", IODRIVE),
    p("controllers", 2.0, "controllers (one per ioMemory module)", IODRIVE),
    p("write_buffer_mib", 64.0, "write buffer (driver-side, power-cut protected)", IODRIVE),
    p("write_ack_us", 12.3, "write acknowledged after the transfer: 15 µs 4 KB write latency in all", IODRIVE),
    p("power_loss_protected", 1.0, "1 if the write buffer survives power loss (then a flush is free)", IODRIVE),
];

const NVME_GEN4: &[Param] = &[
    p("capacity_gb", 3840.0, "capacity (decimal GB)", NVME4),
    p("channels", 16.0, "flash channels", NVME4),
    p("dies_per_channel", 8.0, "dies per channel", NVME4),
    p("page_kib", 16.0, "flash page", NVME4),
    p("read_us", 50.0, "array read time per page (tR), TLC", NVME4),
    p(
        "program_us",
        511.0,
        "effective program time per page: 128 dies × 16 KiB / 511 µs ≈ 4.1 GB/s sequential write",
        NVME4,
    ),
    p(
        "waf_random",
        5.6,
        "program-time factor for random writes: 4.1 GB/s ÷ 180,000 random 4 KB writes/s",
        NVME4,
    ),
    p(
        "channel_mb_s",
        1200.0,
        "flash bus rate per channel (Toggle 4.0 / ONFI 4.x)",
        NVME4,
    ),
    p(
        "link_mb_s",
        6900.0,
        "host link payload rate, sequential read",
        PCIE4,
    ),
    p(
        "read_overhead_us",
        10.0,
        "fixed controller latency per read, pipelined",
        NVME4,
    ),
    p(
        "cmd_occupancy_us",
        4.0,
        "controller time per command per core: four cores give ~1M IOPS",
        NVME4,
    ),
    p("controllers", 4.0, "controller cores", NVME4),
    p(
        "write_buffer_mib",
        256.0,
        "power-loss-protected write buffer",
        NVME4,
    ),
    p(
        "write_ack_us",
        10.0,
        "write acknowledged from the buffer after the transfer",
        NVME4,
    ),
    p(
        "power_loss_protected",
        1.0,
        "1 if the write buffer survives power loss (then a flush is free)",
        NVME4,
    ),
];

const OPTANE_P4800X: &[Param] = &[
    p("capacity_gb", 375.0, "capacity (decimal GB)", OPTANE),
    p("channels", 7.0, "media channels", OPTANE),
    p(
        "dies_per_channel",
        4.0,
        "3D XPoint dies per channel",
        OPTANE,
    ),
    p("page_kib", 4.0, "media access unit", OPTANE),
    p("read_us", 5.0, "media read time per 4 KiB", OPTANE),
    p(
        "program_us",
        57.0,
        "effective write time per 4 KiB: 28 dies × 4 KiB / 57 µs = the 2.0 GB/s write bandwidth",
        OPTANE,
    ),
    p(
        "waf_random",
        1.0,
        "writes in place, no garbage collection: random = sequential",
        OPTANE,
    ),
    p("channel_mb_s", 2000.0, "media bus rate per channel", OPTANE),
    p("link_mb_s", 2400.0, "sustained read bandwidth", OPTANE),
    p(
        "read_overhead_us",
        1.3,
        "fixed controller latency per read: 10 µs 4 KB reads in all",
        OPTANE,
    ),
    p(
        "cmd_occupancy_us",
        1.82,
        "controller time per command: 550,000 IOPS",
        OPTANE,
    ),
    p("controllers", 1.0, "controller", OPTANE),
    p(
        "write_buffer_mib",
        4.0,
        "small power-loss-protected buffer",
        OPTANE,
    ),
    p(
        "write_ack_us",
        6.3,
        "write acknowledged after the transfer: 10 µs 4 KB writes in all",
        OPTANE,
    ),
    p(
        "power_loss_protected",
        1.0,
        "1 if the write buffer survives power loss (then a flush is free)",
        OPTANE,
    ),
];

const RAM: &[Param] = &[
    p("capacity_gb", 64.0, "capacity (decimal GB)", DRAM),
    p("latency_us", 1.0, "fixed latency per I/O", DRAM),
    p("bandwidth_mb_s", 10_000.0, "copy bandwidth per unit", DRAM),
    p("units", 4.0, "I/Os served at once", DRAM),
];

static CATALOGUE: &[CatalogueEntry] = &[
    CatalogueEntry {
        name: "hdd-15k",
        kind: DeviceKind::Hdd,
        summary: "3.5\" 15,000 rpm SAS HDD (Seagate Cheetah 15K.7 class), 600 GB",
        params: HDD_15K,
    },
    CatalogueEntry {
        name: "hdd-10k",
        kind: DeviceKind::Hdd,
        summary: "2.5\" 10,025 rpm SAS HDD (Toshiba MBF2600RC, S1's drive), 600 GB",
        params: HDD_10K,
    },
    CatalogueEntry {
        name: "hdd-7.2k",
        kind: DeviceKind::Hdd,
        summary: "3.5\" 7,200 rpm nearline SAS/SATA HDD (Seagate Constellation ES class), 2 TB",
        params: HDD_7K,
    },
    CatalogueEntry {
        name: "sata-ssd-2010",
        kind: DeviceKind::Flash,
        summary:
            "SLC SATA 3 Gb/s SSD of 2010 (Samsung SS805 / Intel X25-E class, S1's SSD), 100 GB",
        params: SATA_SSD_2010,
    },
    CatalogueEntry {
        name: "sas-ssd-2012",
        kind: DeviceKind::Flash,
        summary: "eMLC SAS 6 Gb/s enterprise SSD of 2012 (HGST Ultrastar SSD400M class), 400 GB",
        params: SAS_SSD_2012,
    },
    CatalogueEntry {
        name: "pcie-flash-2012",
        kind: DeviceKind::Flash,
        summary: "SLC PCIe flash card (Fusion-io ioDrive Duo SLC class, S1's card), 640 GB",
        params: PCIE_FLASH_2012,
    },
    CatalogueEntry {
        name: "nvme-gen4",
        kind: DeviceKind::Flash,
        summary: "TLC PCIe 4.0 ×4 NVMe data-centre SSD (Samsung PM9A3 class), 3.84 TB",
        params: NVME_GEN4,
    },
    CatalogueEntry {
        name: "optane",
        kind: DeviceKind::Flash,
        summary: "3D XPoint NVMe SSD (Intel Optane DC P4800X), 375 GB",
        params: OPTANE_P4800X,
    },
    CatalogueEntry {
        name: "ram",
        kind: DeviceKind::Ram,
        summary: "memory-backed device: ~1 µs and 10 GB/s per I/O stream, 64 GB",
        params: RAM,
    },
    CatalogueEntry {
        name: "host",
        kind: DeviceKind::Host,
        summary: "no emulation: the real device under the path, as it is",
        params: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_has_a_source_and_names_are_unique() {
        let mut names: Vec<_> = catalogue().iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), catalogue().len());
        for e in catalogue() {
            for p in e.params {
                assert!(
                    !p.source.is_empty() && !p.about.is_empty(),
                    "{} {}",
                    e.name,
                    p.key
                );
                assert!(
                    p.value.is_finite() && p.value >= 0.0,
                    "{} {}",
                    e.name,
                    p.key
                );
            }
        }
        for name in [
            "hdd-15k",
            "hdd-10k",
            "hdd-7.2k",
            "sata-ssd-2010",
            "sas-ssd-2012",
            "pcie-flash-2012",
            "nvme-gen4",
            "optane",
            "ram",
            "host",
        ] {
            assert!(lookup(name).is_some(), "{name}");
        }
    }
}
