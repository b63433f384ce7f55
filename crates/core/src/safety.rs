//! What oltplab may write to. It creates and marks its own files and directories, and refuses to write
//! to anything else — an existing file, a non-empty directory, a block device — unless told `--force`.
//!
//! A directory oltplab created holds a `.oltplab` file; a data file oltplab created has a sidecar
//! `<name>.oltplab` that also records how much of it was filled, so a later run can reuse it.

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The file that marks a directory as created by oltplab.
pub const DIR_MARKER: &str = ".oltplab";

/// What a path names, as far as writing to it is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    Missing,
    RegularFile {
        len_bytes: u64,
    },
    BlockDevice,
    Directory,
    /// A character device, socket, FIFO …: never a benchmark target.
    Other,
}

pub fn inspect(path: &Path) -> io::Result<TargetKind> {
    match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(TargetKind::Missing),
        Err(e) => Err(e),
        Ok(meta) => {
            let ft = meta.file_type();
            Ok(if ft.is_file() {
                TargetKind::RegularFile {
                    len_bytes: meta.len(),
                }
            } else if ft.is_dir() {
                TargetKind::Directory
            } else if ft.is_block_device() {
                TargetKind::BlockDevice
            } else {
                TargetKind::Other
            })
        }
    }
}

/// The sidecar marker of a data file oltplab created.
pub fn file_marker_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".oltplab");
    path.with_file_name(name)
}

/// Read from a data file's sidecar: oltplab created it and filled its first `filled_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMarker {
    pub filled_bytes: u64,
}

pub fn read_file_marker(path: &Path) -> Option<FileMarker> {
    let text = fs::read_to_string(file_marker_path(path)).ok()?;
    let mut filled_bytes = None;
    let mut created_by_oltplab = false;
    for line in text.lines() {
        match line.split_once('=') {
            Some(("created-by", "oltplab")) => created_by_oltplab = true,
            Some(("filled-bytes", n)) => filled_bytes = n.trim().parse().ok(),
            _ => {}
        }
    }
    if !created_by_oltplab {
        return None;
    }
    Some(FileMarker {
        filled_bytes: filled_bytes.unwrap_or(0),
    })
}

pub fn write_file_marker(path: &Path, marker: FileMarker) -> io::Result<()> {
    fs::write(
        file_marker_path(path),
        format!(
            "created-by=oltplab\nfilled-bytes={}\n# this file marks {} as oltplab's own test data; delete both together\n",
            marker.filled_bytes,
            path.display()
        ),
    )
}

/// True if `dir` was created by oltplab.
/// Replaces `path` with `bytes` so that a reader, and the file system after a crash or a power
/// loss, sees the old file or the new one, never half of one: written to `<name>.partial`, synced,
/// renamed over `path`, and the directory synced (a study's cells must survive a reboot).
pub fn replace_durably(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".partial");
    let tmp = path.with_file_name(tmp_name);
    {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::File::open(dir)?.sync_all()
}

pub fn is_own_dir(dir: &Path) -> bool {
    dir.join(DIR_MARKER).is_file()
}

/// Makes `dir` (and its parents) for oltplab's output. An existing directory is accepted if oltplab
/// created it or if it is empty (then it is marked); a non-empty foreign directory needs `force`.
pub fn ensure_own_dir(dir: &Path, force: bool) -> Result<()> {
    match inspect(dir).map_err(|e| io_usage(dir, "inspect", &e))? {
        TargetKind::Missing => {
            fs::create_dir_all(dir).map_err(|e| io_usage(dir, "create the directory", &e))?;
        }
        TargetKind::Directory => {
            if is_own_dir(dir) {
                return Ok(());
            }
            let empty = fs::read_dir(dir)
                .map_err(|e| io_usage(dir, "read the directory", &e))?
                .next()
                .is_none();
            if !empty && !force {
                return Err(Error::usage(format!(
                    "{} is a non-empty directory that oltplab did not create: choose a new or empty directory, or add --force to write into it",
                    dir.display()
                )));
            }
        }
        _ => {
            return Err(Error::usage(format!(
                "{} exists and is not a directory: choose another path",
                dir.display()
            )))
        }
    }
    fs::write(
        dir.join(DIR_MARKER),
        "created-by=oltplab\n# this directory holds oltplab's files\n",
    )
    .map_err(|e| io_usage(dir, "write into the directory", &e))
}

/// A usage error for a file-system call that failed on a path the user gave.
pub fn io_usage(path: &Path, action: &str, err: &io::Error) -> Error {
    let fix = match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => {
            ": choose a path you may write to"
        }
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => ": free some space or choose a smaller --size",
        _ => "",
    };
    let cause = err
        .raw_os_error()
        .map(crate::error::strerror)
        .unwrap_or_else(|| err.to_string());
    Error::usage(format!("cannot {action} {}: {cause}{fix}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("oltplab-core-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn file_marker_round_trip() {
        let dir = scratch("marker");
        fs::create_dir_all(&dir).unwrap();
        let data = dir.join("x.dat");
        assert_eq!(read_file_marker(&data), None);
        write_file_marker(&data, FileMarker { filled_bytes: 4096 }).unwrap();
        assert_eq!(
            read_file_marker(&data),
            Some(FileMarker { filled_bytes: 4096 })
        );
        assert_eq!(file_marker_path(&data), dir.join("x.dat.oltplab"));
        fs::write(file_marker_path(&data), "filled-bytes=1\n").unwrap();
        assert_eq!(
            read_file_marker(&data),
            None,
            "a marker must say who wrote it"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn foreign_non_empty_directory_is_refused() {
        let dir = scratch("foreign");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("precious.txt"), "keep me").unwrap();
        let err = ensure_own_dir(&dir, false).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--force"), "{err}");
        assert!(!is_own_dir(&dir));
        ensure_own_dir(&dir, true).unwrap();
        assert!(is_own_dir(&dir));
        assert_eq!(
            fs::read_to_string(dir.join("precious.txt")).unwrap(),
            "keep me"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn new_and_empty_directories_become_own() {
        let dir = scratch("new");
        ensure_own_dir(&dir.join("a/b"), false).unwrap();
        assert!(is_own_dir(&dir.join("a/b")));
        fs::create_dir_all(dir.join("empty")).unwrap();
        ensure_own_dir(&dir.join("empty"), false).unwrap();
        assert!(is_own_dir(&dir.join("empty")));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kinds() {
        assert_eq!(
            inspect(Path::new("/nonexistent/x")).unwrap(),
            TargetKind::Missing
        );
        assert_eq!(inspect(Path::new("/")).unwrap(), TargetKind::Directory);
        assert_eq!(inspect(Path::new("/dev/null")).unwrap(), TargetKind::Other);
    }
}
