//! Named access profiles: the twelve server access profiles of S4, S1's device test and S3's SQLIO
//! tests. One table, so `--help`, the docs and the JSON all use the same names and numbers.

use crate::job::{Flush, FlushKind, Mix};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    pub mix: Mix,
    pub about: &'static str,
}

const fn profile(
    name: &'static str,
    kib: u32,
    read_pct: u8,
    random_pct: u8,
    about: &'static str,
) -> Profile {
    Profile {
        name,
        mix: Mix {
            block_size_bytes: kib * 1024,
            read_pct,
            random_pct,
            flush: None,
        },
        about,
    }
}

/// A single client's commit: 8 KiB appends to a log, each made durable before the next — the
/// question pg_test_fsync answers (PostgreSQL's WAL page is 8 KiB, and its default
/// wal_sync_method on Linux is fdatasync).
const fn commit(name: &'static str, kib: u32, about: &'static str) -> Profile {
    let mut p = profile(name, kib, 0, 0, about);
    p.mix.flush = Some(Flush {
        every_writes: 1,
        kind: FlushKind::Fdatasync,
    });
    p
}

/// All profiles, in the order `--profile all` runs them.
pub const PROFILES: [Profile; 16] = [
    profile("web-file-4k", 4, 95, 75, "S4: web file server, 4 KiB"),
    profile("web-file-8k", 8, 95, 75, "S4: web file server, 8 KiB"),
    profile("web-file-64k", 64, 95, 75, "S4: web file server, 64 KiB"),
    profile("web-log", 8, 0, 0, "S4: web server log"),
    profile("oltp-db", 8, 70, 100, "S4: OLTP database"),
    profile("dss-db", 1024, 100, 100, "S4: decision-support database"),
    profile("sql-log", 64, 0, 0, "S4: SQL Server transaction log"),
    profile("exchange", 4, 67, 100, "S4: Exchange mail server"),
    profile("media-streaming", 64, 98, 0, "S4: media streaming"),
    profile("video-on-demand", 512, 100, 100, "S4: video on demand"),
    profile("workstation", 8, 80, 80, "S4: workstation"),
    profile("os-paging", 64, 90, 0, "S4: operating-system paging"),
    profile(
        "db-16k-randread",
        16,
        100,
        100,
        "S1: 16 KiB random reads (the InnoDB page)",
    ),
    profile(
        "sqlio-8k-randread",
        8,
        100,
        100,
        "S3: SQLIO 8 KiB random reads",
    ),
    profile(
        "sqlio-8k-randwrite",
        8,
        0,
        100,
        "S3: SQLIO 8 KiB random writes",
    ),
    commit(
        "commit-8k",
        8,
        "8 KiB log appends, fdatasync after each (run it at QD 1): commit latency",
    ),
];

pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// Resolves `NAME[,NAME…]|all`; an unknown name is an error listing the known ones.
pub fn parse_list(text: &str) -> Result<Vec<&'static Profile>, String> {
    if text.trim() == "all" {
        return Ok(PROFILES.iter().collect());
    }
    let mut out: Vec<&'static Profile> = Vec::new();
    for name in text.split(',').map(str::trim) {
        let profile = find(name).ok_or_else(|| {
            format!(
                "unknown profile '{name}': use 'all' or one or more of {}",
                PROFILES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        if !out.contains(&profile) {
            out.push(profile);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s4_table() {
        // (name, KiB, read %, random %) exactly as S4's table (docs/studies.md).
        let s4 = [
            ("web-file-4k", 4, 95, 75),
            ("web-file-8k", 8, 95, 75),
            ("web-file-64k", 64, 95, 75),
            ("web-log", 8, 0, 0),
            ("oltp-db", 8, 70, 100),
            ("dss-db", 1024, 100, 100),
            ("sql-log", 64, 0, 0),
            ("exchange", 4, 67, 100),
            ("media-streaming", 64, 98, 0),
            ("video-on-demand", 512, 100, 100),
            ("workstation", 8, 80, 80),
            ("os-paging", 64, 90, 0),
        ];
        for (name, kib, read, random) in s4 {
            let p = find(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(
                (p.mix.block_size_bytes, p.mix.read_pct, p.mix.random_pct),
                (kib * 1024, read, random),
                "{name}"
            );
        }
        let s1 = find("db-16k-randread").unwrap();
        assert_eq!(
            (s1.mix.block_size_bytes, s1.mix.read_pct, s1.mix.random_pct),
            (16384, 100, 100)
        );
        assert_eq!(find("sqlio-8k-randwrite").unwrap().mix.read_pct, 0);
        assert_eq!(
            find("sqlio-8k-randread").unwrap().mix.block_size_bytes,
            8192
        );
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list("all").unwrap().len(), 16);
        let commit = find("commit-8k").unwrap().mix;
        assert_eq!(
            (commit.block_size_bytes, commit.read_pct, commit.random_pct),
            (8192, 0, 0)
        );
        assert_eq!(
            commit.flush,
            Some(Flush {
                every_writes: 1,
                kind: FlushKind::Fdatasync
            })
        );
        let two = parse_list("oltp-db, exchange,oltp-db").unwrap();
        assert_eq!(
            two.iter().map(|p| p.name).collect::<Vec<_>>(),
            ["oltp-db", "exchange"]
        );
        let err = parse_list("oltp-db,nosuch").unwrap_err();
        assert!(
            err.contains("'nosuch'") && err.contains("web-file-4k"),
            "{err}"
        );
    }
}
