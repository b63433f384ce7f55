//! Prepares the file a device benchmark runs on: creates it (or reuses one oltplab made), fills it
//! with random bytes so reads reach the device and nothing compresses, and opens it direct or
//! buffered. Refuses what could destroy someone's data: writing to a block device or to a file
//! oltplab did not create needs `force`.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use oltplab_core::error::strerror;
use oltplab_core::safety::{self, io_usage, FileMarker, TargetKind};
use oltplab_core::units::format_bytes;
use oltplab_core::{Error, Result};
use oltplab_metrics::{Warning, WarningKind};
use rand::{RngCore, SeedableRng};

/// Where the default target lives, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = "oltplab-data";
/// File name used inside a directory given as TARGET (and inside the default data directory).
pub const DEFAULT_FILE_NAME: &str = "device.dat";

const FILL_CHUNK_BYTES: usize = 1 << 20;

/// What the benchmark needs from its target.
#[derive(Clone, Debug)]
pub struct TargetRequest {
    pub path: PathBuf,
    pub size_bytes: u64,
    /// Some I/O writes: a foreign file or block device then needs `force`.
    pub writes: bool,
    pub direct: bool,
    /// Open O_DSYNC: every write is durable when it completes.
    pub dsync: bool,
    pub force: bool,
}

pub struct PreparedTarget {
    pub path: PathBuf,
    pub file: File,
    pub kind: TargetKind,
    /// Bytes the I/O may address: the requested size.
    pub size_bytes: u64,
    pub warnings: Vec<Warning>,
}

/// The file to use for `target`: the default data file, or `device.dat` inside a given directory.
/// A missing default data directory is created (and marked as oltplab's).
pub fn resolve_path(target: Option<&Path>, force: bool) -> Result<PathBuf> {
    match target {
        None => {
            let dir = Path::new(DEFAULT_DATA_DIR);
            safety::ensure_own_dir(dir, force)?;
            Ok(dir.join(DEFAULT_FILE_NAME))
        }
        Some(path) => match safety::inspect(path).map_err(|e| io_usage(path, "inspect", &e))? {
            TargetKind::Directory => Ok(path.join(DEFAULT_FILE_NAME)),
            _ => Ok(path.to_path_buf()),
        },
    }
}

/// Creates, extends, fills and opens the target as `req` asks. `on_fill` sees (bytes done, bytes to
/// fill); `stop` (Ctrl-C) aborts the fill and removes a file this call created.
pub fn prepare(
    req: &TargetRequest,
    stop: &AtomicBool,
    on_fill: &mut dyn FnMut(u64, u64),
) -> Result<PreparedTarget> {
    let path = &req.path;
    let kind = safety::inspect(path).map_err(|e| io_usage(path, "inspect", &e))?;
    let mut warnings = Vec::new();
    match kind {
        TargetKind::Directory => {
            return Err(Error::usage(format!(
                "{} is a directory: give a file path as TARGET, or a directory without a device.dat subdirectory",
                path.display()
            )))
        }
        TargetKind::Other => {
            return Err(Error::usage(format!(
                "{} is neither a regular file nor a block device: give a file or directory path as TARGET",
                path.display()
            )))
        }
        TargetKind::BlockDevice => {
            if req.writes && !req.force {
                return Err(Error::usage(format!(
                    "{} is a block device and this job writes to it, which destroys its data: use a file as TARGET, or add --force if you really mean it",
                    path.display()
                )));
            }
        }
        TargetKind::Missing => {
            let parent = parent_dir(path);
            if !parent.is_dir() {
                return Err(Error::usage(format!(
                    "the directory {} does not exist: create it first or choose another TARGET",
                    parent.display()
                )));
            }
            check_free_space(parent, req.size_bytes)?;
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| io_usage(path, "create", &e))?;
            safety::write_file_marker(path, FileMarker { filled_bytes: 0 }).map_err(|e| io_usage(path, "mark", &e))?;
            // Find out now, not after filling gigabytes, whether the file system takes O_DIRECT.
            if let Err(e) = open_for_io(path, req) {
                let _ = std::fs::remove_file(path);
                let _ = std::fs::remove_file(safety::file_marker_path(path));
                return Err(e);
            }
            fill_or_remove(&file, path, 0, req.size_bytes, stop, on_fill, Owner::CreatedNow)?;
        }
        TargetKind::RegularFile { len_bytes } => match safety::read_file_marker(path) {
            Some(marker) if marker.filled_bytes >= req.size_bytes && len_bytes >= req.size_bytes => {}
            Some(marker) => {
                let from = marker.filled_bytes.min(len_bytes);
                check_free_space(parent_dir(path), req.size_bytes - from)?;
                let file = OpenOptions::new().write(true).open(path).map_err(|e| io_usage(path, "open", &e))?;
                fill_or_remove(&file, path, from, req.size_bytes, stop, on_fill, Owner::Ours)?;
            }
            None if req.writes || len_bytes < req.size_bytes => {
                if !req.force {
                    let why = if req.writes {
                        "this job writes to it"
                    } else {
                        "it is smaller than --size and would have to be extended"
                    };
                    return Err(Error::usage(format!(
                        "{} exists and oltplab did not create it, and {why}, which would destroy its contents: choose another TARGET, or add --force to overwrite it",
                        path.display()
                    )));
                }
                if len_bytes < req.size_bytes {
                    check_free_space(parent_dir(path), req.size_bytes - len_bytes)?;
                    let file = OpenOptions::new().write(true).open(path).map_err(|e| io_usage(path, "open", &e))?;
                    fill_or_remove(&file, path, len_bytes, req.size_bytes, stop, on_fill, Owner::Foreign)?;
                }
                warnings.push(foreign_data_warning(path));
            }
            None => warnings.push(foreign_data_warning(path)),
        },
    }

    let file = open_for_io(path, req)?;
    if kind == TargetKind::BlockDevice {
        let device_bytes = file
            .metadata()
            .map(|m| m.len())
            .unwrap_or(0)
            .max(seek_end(&file));
        if device_bytes < req.size_bytes {
            return Err(Error::usage(format!(
                "--size {} is larger than the block device {} ({}): lower --size",
                format_bytes(req.size_bytes),
                path.display(),
                format_bytes(device_bytes)
            )));
        }
    }
    Ok(PreparedTarget {
        path: path.clone(),
        file,
        kind,
        size_bytes: req.size_bytes,
        warnings,
    })
}

fn foreign_data_warning(path: &Path) -> Warning {
    Warning::new(
        WarningKind::ForeignData,
        format!(
            "{} was not written by oltplab: if its data compresses or repeats, some devices will look faster than they are",
            path.display()
        ),
    )
}

fn open_for_io(path: &Path, req: &TargetRequest) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(req.writes);
    let direct = if req.direct { libc::O_DIRECT } else { 0 };
    let dsync = if req.dsync { libc::O_DSYNC } else { 0 };
    options.custom_flags(direct | dsync);
    options.open(path).map_err(|e| {
        if req.direct && e.raw_os_error() == Some(libc::EINVAL) {
            Error::usage(format!(
                "the file system of {} does not support direct I/O (O_DIRECT): add --buffered to go through the page cache",
                path.display()
            ))
        } else {
            io_usage(path, "open", &e)
        }
    })
}

/// The directory holding `path`; `.` for a bare file name.
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Who owns a file being filled: it decides the marker and whether a failed fill removes the file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Created by this run: marked, and removed again if the fill fails.
    CreatedNow,
    /// Created by an earlier oltplab run: marked.
    Ours,
    /// Not oltplab's (extended under --force): never marked, so it stays foreign.
    Foreign,
}

fn seek_end(file: &File) -> u64 {
    // SAFETY: lseek on a file descriptor we own.
    let end = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_END) };
    end.max(0) as u64
}

/// What oltplab leaves free on a file system after filling files there: 2 % of its size, and at
/// least 256 MiB — a full disk would stop the machine's other work, and the database's own.
pub const FREE_SPACE_MARGIN_SHARE: f64 = 0.02;
pub const FREE_SPACE_MARGIN_MIN_BYTES: u64 = 256 << 20;

/// Refuses to write `needed_bytes` more into the file system holding `dir` unless its margin stays
/// free. Files filled together (a replay's copies) are checked by their total.
pub fn check_free_space(dir: &Path, needed_bytes: u64) -> Result<()> {
    let (available, size) =
        free_and_size_bytes(dir).map_err(|e| io_usage(dir, "query free space of", &e))?;
    if !fits(needed_bytes, available, size) {
        return Err(Error::usage(format!(
            "not enough free space in {}: this needs {} and oltplab leaves {} free (2 % of the file system, at least 256 MiB), but only {} is free; lower --size or choose another TARGET",
            dir.display(),
            format_bytes(needed_bytes),
            format_bytes(margin_bytes(size)),
            format_bytes(available)
        )));
    }
    Ok(())
}

/// The free space oltplab leaves on a file system of `size_bytes`.
fn margin_bytes(size_bytes: u64) -> u64 {
    ((size_bytes as f64 * FREE_SPACE_MARGIN_SHARE) as u64).max(FREE_SPACE_MARGIN_MIN_BYTES)
}

/// Whether `needed` bytes fit into `available` with the margin of a file system of `size` left.
fn fits(needed: u64, available: u64, size: u64) -> bool {
    needed.saturating_add(margin_bytes(size)) <= available
}

/// Free bytes (for an unprivileged user) and size of the file system holding `dir`; both
/// `u64::MAX` where the file system reports no size (ramfs).
fn free_and_size_bytes(dir: &Path) -> io::Result<(u64, u64)> {
    let c_path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: statvfs only writes the struct we own.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid C string and stat a struct we own.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if stat.f_blocks == 0 {
        return Ok((u64::MAX, 0));
    }
    let frsize = stat.f_frsize as u64;
    Ok((stat.f_bavail as u64 * frsize, stat.f_blocks as u64 * frsize))
}

/// Fills `[from, to)` with random bytes, records progress in the marker of oltplab's own files, and
/// on failure or Ctrl-C removes a file this run created, so nothing half-made is left behind.
fn fill_or_remove(
    file: &File,
    path: &Path,
    from: u64,
    to: u64,
    stop: &AtomicBool,
    on_fill: &mut dyn FnMut(u64, u64),
    owner: Owner,
) -> Result<()> {
    let result = fill(file, path, from, to, stop, on_fill, owner != Owner::Foreign);
    if result.is_err() && owner == Owner::CreatedNow {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(safety::file_marker_path(path));
    }
    result
}

fn fill(
    file: &File,
    path: &Path,
    from: u64,
    to: u64,
    stop: &AtomicBool,
    on_fill: &mut dyn FnMut(u64, u64),
    mark: bool,
) -> Result<()> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(from ^ 0x006f_6c74_706c_6162);
    let mut chunk = vec![0u8; FILL_CHUNK_BYTES];
    let mut offset = from;
    while offset < to {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let n = (to - offset).min(FILL_CHUNK_BYTES as u64) as usize;
        rng.fill_bytes(&mut chunk[..n]);
        file.write_all_at(&chunk[..n], offset)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOSPC) | Some(libc::EDQUOT) => Error::usage(format!(
                    "no space left while filling {} at {}: lower --size or choose another TARGET",
                    path.display(),
                    format_bytes(offset)
                )),
                Some(errno) => Error::failed(format!(
                    "cannot fill {}: {}",
                    path.display(),
                    strerror(errno)
                )),
                None => Error::failed(format!("cannot fill {}: {e}", path.display())),
            })?;
        offset += n as u64;
        on_fill(offset - from, to - from);
    }
    file.sync_data().map_err(|e| io_usage(path, "sync", &e))?;
    // Drop what the fill left in the page cache, so buffered reads start from the device.
    // SAFETY: advice call on a file descriptor we own.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if mark {
        safety::write_file_marker(path, FileMarker { filled_bytes: to })
            .map_err(|e| io_usage(path, "mark", &e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_free_space_margin_is_kept() {
        let gib = 1u64 << 30;
        // 100 GiB file system: 2 GiB stay free.
        assert!(fits(8 * gib, 10 * gib, 100 * gib));
        assert!(!fits(8 * gib + 1, 10 * gib, 100 * gib));
        // A small one: at least 256 MiB.
        assert!(!fits(gib - (255 << 20), gib, 2 * gib));
        assert!(fits(gib - (256 << 20), gib, 2 * gib));
        // No size reported (ramfs): no limit known.
        assert!(fits(gib, u64::MAX, 0));
        // Exactly the free space, which once passed, is refused now.
        let here = std::env::temp_dir();
        let (free, _) = free_and_size_bytes(&here).unwrap();
        let err = check_free_space(&here, free).unwrap_err();
        assert!(err.to_string().contains("256 MiB"), "{err}");
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("oltplab-target-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn request(path: PathBuf, size: u64, writes: bool, force: bool) -> TargetRequest {
        TargetRequest {
            path,
            size_bytes: size,
            writes,
            direct: false,
            dsync: false,
            force,
        }
    }

    #[test]
    fn creates_fills_and_reuses_its_own_file() {
        let dir = scratch("own");
        let path = dir.join("t.dat");
        let stop = AtomicBool::new(false);
        let mut filled = 0;
        let t = prepare(
            &request(path.clone(), 3 << 20, true, false),
            &stop,
            &mut |done, _| filled = done,
        )
        .unwrap();
        assert_eq!(filled, 3 << 20);
        assert_eq!(t.file.metadata().unwrap().len(), 3 << 20);
        let data = std::fs::read(&path).unwrap();
        assert!(
            data.iter().filter(|&&b| b == 0).count() < data.len() / 100,
            "filled with random bytes"
        );
        // A second run reuses it without filling again.
        let mut refilled = 0;
        prepare(
            &request(path.clone(), 2 << 20, true, false),
            &stop,
            &mut |done, _| refilled = done,
        )
        .unwrap();
        assert_eq!(refilled, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_foreign_file_is_never_written_without_force() {
        let dir = scratch("foreign");
        let path = dir.join("precious.db");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let stop = AtomicBool::new(false);
        let err = prepare(
            &request(path.clone(), 1 << 20, true, false),
            &stop,
            &mut |_, _| {},
        )
        .err()
        .unwrap();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--force"), "{err}");
        // Reading it as it is is harmless, and says the data was not ours.
        let t = prepare(
            &request(path.clone(), 1 << 20, false, false),
            &stop,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(t.warnings[0].kind, WarningKind::ForeignData);
        assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 1 << 20]);
        // --force may extend it, but that does not make it oltplab's: the next write needs --force again.
        prepare(
            &request(path.clone(), 2 << 20, true, true),
            &stop,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(safety::read_file_marker(&path), None);
        assert!(!safety::file_marker_path(&path).exists());
        assert!(prepare(
            &request(path.clone(), 2 << 20, true, false),
            &stop,
            &mut |_, _| {}
        )
        .is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parent_of_a_bare_name_is_the_working_directory() {
        assert_eq!(parent_dir(Path::new("data")), Path::new("."));
        assert_eq!(parent_dir(Path::new("/a/b")), Path::new("/a"));
    }

    #[test]
    fn too_large_a_size_is_refused_before_writing() {
        let dir = scratch("space");
        let path = dir.join("huge.dat");
        let stop = AtomicBool::new(false);
        let err = prepare(
            &request(path.clone(), 1 << 60, true, false),
            &stop,
            &mut |_, _| {},
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("not enough free space"), "{err}");
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn interrupted_fill_leaves_nothing_behind() {
        let dir = scratch("stop");
        let path = dir.join("t.dat");
        let stop = AtomicBool::new(true);
        let err = prepare(
            &request(path.clone(), 4 << 20, true, false),
            &stop,
            &mut |_, _| {},
        )
        .err()
        .unwrap();
        assert!(matches!(err, Error::Interrupted));
        assert!(!path.exists() && !safety::file_marker_path(&path).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
