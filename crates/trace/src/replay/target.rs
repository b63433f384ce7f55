//! The replay's own copies of the traced files: created (and marked) under `--target DIR`, filled
//! with random data up to the highest byte the trace touches, reused by later replays. The traced
//! files themselves are never opened. A target directory holding anything oltplab did not create
//! is refused.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use oltplab_core::safety::{self, io_usage};
use oltplab_core::{Error, Result};
use oltplab_io::target::{self, TargetRequest};

use super::plan::PlanFile;

/// The smallest file oltplab creates, so that even a file the trace only syncs can be opened
/// with O_DIRECT and probed.
const MIN_FILE_BYTES: u64 = 4096;

pub struct ReplayFile {
    pub path: PathBuf,
    /// O_DIRECT descriptor when the replay is direct.
    pub direct: Option<File>,
    /// Buffered descriptor: all I/O when buffered, unaligned I/O when direct.
    pub buffered: File,
}

pub struct PreparedFiles {
    pub files: Vec<ReplayFile>,
    /// Offsets and lengths that O_DIRECT accepts on this file system (512 or 4096).
    pub align_bytes: u64,
}

/// The name of file `index` inside the target: its index and the traced file's base name.
pub fn copy_name(index: usize, trace_path: &str) -> String {
    let base = trace_path.rsplit('/').next().unwrap_or("");
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let clean = clean.trim_start_matches('.');
    if clean.is_empty() {
        format!("{index:04}-file")
    } else {
        format!("{index:04}-{clean}")
    }
}

/// Creates or reuses the copies of `files` in `dir`. `on_fill(done, total)` reports filling.
pub fn prepare(
    dir: &Path,
    files: &[PlanFile],
    direct: bool,
    stop: &AtomicBool,
    on_fill: &mut dyn FnMut(u64, u64),
) -> Result<PreparedFiles> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::usage(format!(
            "the replay target {} is not a directory: give a directory for --target",
            dir.display()
        )));
    }
    if dir.is_dir() && !safety::is_own_dir(dir) {
        let empty = std::fs::read_dir(dir)
            .map_err(|e| io_usage(dir, "read the directory", &e))?
            .next()
            .is_none();
        if !empty {
            return Err(Error::usage(format!(
                "the replay target {} holds files oltplab did not create, and the replay writes into its target: choose a new or empty directory for --target",
                dir.display()
            )));
        }
    }
    safety::ensure_own_dir(dir, false)?;

    let sizes: Vec<u64> = files
        .iter()
        .map(|f| round_up(f.extent_bytes.max(MIN_FILE_BYTES), 4096))
        .collect();
    // Saturating: a crafted trace's extents may add up past 2^64, and the space check refuses them.
    let total = sizes.iter().fold(0u64, |a, &b| a.saturating_add(b));
    // All copies together must leave the file system's margin free, not each on its own.
    let missing: u64 = files
        .iter()
        .zip(&sizes)
        .map(|(f, &size)| {
            let path = dir.join(copy_name(f.trace_id as usize, &f.trace_path));
            size.saturating_sub(std::fs::metadata(&path).map_or(0, |m| m.len()))
        })
        .fold(0u64, u64::saturating_add);
    let existing = dir.ancestors().find(|d| d.is_dir()).unwrap_or(dir);
    target::check_free_space(existing, missing)?;
    let mut done_before = 0u64;
    let mut out = Vec::with_capacity(files.len());
    for (f, &size) in files.iter().zip(&sizes) {
        // Named by the traced file's id, so replays of the same capture find the same copies.
        let path = dir.join(copy_name(f.trace_id as usize, &f.trace_path));
        if path.exists() && safety::read_file_marker(&path).is_none() {
            return Err(Error::usage(format!(
                "{} in the replay target was not created by oltplab: remove it or choose another --target",
                path.display()
            )));
        }
        let req = TargetRequest {
            path: path.clone(),
            size_bytes: size,
            writes: true,
            direct,
            dsync: false,
            force: false,
        };
        let prepared = target::prepare(&req, stop, &mut |done, _| {
            on_fill(done_before.saturating_add(done), total)
        })?;
        done_before = done_before.saturating_add(size);
        let buffered = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_usage(&path, "open", &e))?;
        out.push(ReplayFile {
            path,
            direct: direct.then_some(prepared.file),
            buffered,
        });
    }
    let align_bytes = match out.first().and_then(|f| f.direct.as_ref()) {
        Some(file) => probe_direct_alignment(file),
        None => 4096,
    };
    Ok(PreparedFiles {
        files: out,
        align_bytes,
    })
}

fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to).saturating_mul(to)
}

/// 512 if O_DIRECT takes a 512-byte read at offset 512 from this file system, else 4096.
fn probe_direct_alignment(file: &File) -> u64 {
    let layout = std::alloc::Layout::from_size_align(4096, 4096).expect("valid layout");
    // SAFETY: non-zero size; freed below.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return 4096;
    }
    // SAFETY: ptr holds 4096 bytes; we read 512 of them.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr, 512) };
    let ok = file.read_exact_at(buf, 512).is_ok();
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(ptr, layout) };
    if ok {
        512
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two copies that each fit in the free space but not together are refused before anything
    /// is written: the file system's margin stays free.
    #[test]
    fn copies_are_checked_against_the_free_space_by_their_total() {
        let dir = std::env::temp_dir().join(format!("oltplab-replay-space-{}", std::process::id()));
        let free = {
            let c = std::ffi::CString::new(std::env::temp_dir().as_os_str().as_encoded_bytes())
                .unwrap();
            // SAFETY: statvfs writes only the struct we own.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
            st.f_bavail as u64 * st.f_frsize as u64
        };
        let file = |id: u16| PlanFile {
            trace_id: id,
            device_slot: id as u32,
            trace_path: format!("/db/f{id}"),
            // Each alone fits (with room for the margin), the two together do not.
            extent_bytes: (free / 5) * 3,
        };
        let stop = AtomicBool::new(false);
        let err = match prepare(&dir, &[file(0), file(1)], false, &stop, &mut |_, _| {}) {
            Err(e) => e,
            Ok(_) => panic!("the copies were made"),
        };
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("free space"), "{err}");
        // No copy was begun (the directory may hold oltplab's marker).
        assert!(!dir.join(copy_name(0, "/db/f0")).exists(), "nothing filled");
        assert!(!dir.join(copy_name(1, "/db/f1")).exists(), "nothing filled");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn copy_names_are_safe_and_distinct() {
        assert_eq!(copy_name(0, "/var/lib/db/tpcc.db-wal"), "0000-tpcc.db-wal");
        assert_eq!(copy_name(3, "8,0"), "0003-8_0");
        assert_eq!(copy_name(7, "/x/../.."), "0007-file");
        assert_eq!(copy_name(12, "/a/b c"), "0012-b_c");
    }
}
