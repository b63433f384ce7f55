//! `liboltplab_shim.so`: loaded with `LD_PRELOAD` into a command (a database server and every
//! process it forks), it routes the file I/O under one directory through an emulated device.
//!
//! For a file under the directory, each `pread`/`pwrite`/`read`/`write`/`*v`/`*v2` does the real I/O
//! on the backing file, asks the shared device model when the I/O would have completed on the
//! emulated device, and returns only then; `fsync`/`fdatasync` are the device's flush. Every other
//! file descriptor costs one array lookup. Optionally each I/O is appended to this process's trace
//! part (merged by `oltplab emulate` at the end).
//!
//! Configuration comes from the environment (set by `oltplab emulate` and by managed servers under
//! `--emulate`); without `OLTPLAB_SHIM_STATE` the library does nothing:
//! - `OLTPLAB_SHIM_STATE`  the device model's shared-memory file (`Emulator::create_shared`)
//! - `OLTPLAB_SHIM_FILES`  the shared file table (see [`files`])
//! - `OLTPLAB_SHIM_DIR`    the emulated directory, absolute and canonical
//! - `OLTPLAB_SHIM_BACKING` `disk` (default) or `ram`: with `ram` O_DIRECT is dropped and syncs are
//!   not passed on, so the backing files stay in the page cache and only the model's time is spent
//! - `OLTPLAB_SHIM_TRACE_DIR` if set, each process writes `part-<pid>-<n>.trace` there
//! - `OLTPLAB_SHIM_PLACES` for a layout: lines `DEVICE<TAB>MATCH<TAB>PATH` putting files under the
//!   directory on the layout's other devices; MATCH `=` takes PATH and what is under it, `*` every
//!   path that begins with PATH; the longest matching PATH wins, anything else is on device 0
//! - `OLTPLAB_SHIM_UNDO` if set, the undo log of a run that may be cut (see [`undo`]): what each
//!   write to a device whose cache can lose it replaced, and which flushes completed
//!
//! Rules the code keeps, because it runs inside someone else's process: the real functions come
//! from `dlsym(RTLD_NEXT)`, resolved at load time; `errno` is what the real call left; the
//! untracked path takes no lock and allocates nothing; nothing is shared with a parent after `fork`
//! except lock-free shared memory (the trace writer is per process, replaced in a forked child); the
//! library's own file I/O is never emulated (a thread-local guard).

#![allow(clippy::missing_safety_doc)]

mod files;
mod fork;
mod hooks;
mod real;
mod undo;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use oltplab_devmodel::Emulator;

/// Environment variable names; `oltplab emulate` sets the same names.
pub const ENV_STATE: &str = "OLTPLAB_SHIM_STATE";
pub const ENV_FILES: &str = "OLTPLAB_SHIM_FILES";
pub const ENV_DIR: &str = "OLTPLAB_SHIM_DIR";
pub const ENV_BACKING: &str = "OLTPLAB_SHIM_BACKING";
pub const ENV_TRACE_DIR: &str = "OLTPLAB_SHIM_TRACE_DIR";
pub const ENV_PLACES: &str = "OLTPLAB_SHIM_PLACES";
pub const ENV_UNDO: &str = "OLTPLAB_SHIM_UNDO";

/// A rule of a layout: files matching `path` are on layout device `device`.
pub(crate) struct Place {
    pub device: u8,
    pub path: Vec<u8>,
    /// Every path beginning with `path` (a name prefix), not only `path` and what is under it.
    pub prefix: bool,
}

/// Parses `OLTPLAB_SHIM_PLACES`; a malformed line is skipped with a complaint.
fn parse_places(text: &[u8]) -> Vec<Place> {
    let mut places = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut parts = line.splitn(3, |&b| b == b'\t');
        let device = parts
            .next()
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| d.parse::<u8>().ok());
        let prefix = match parts.next() {
            Some(b"=") => Some(false),
            Some(b"*") => Some(true),
            _ => None,
        };
        match (device, prefix, parts.next()) {
            (Some(device), Some(prefix), Some(path)) if path.starts_with(b"/") => {
                places.push(Place {
                    device,
                    path: path.to_vec(),
                    prefix,
                })
            }
            _ => complain("a malformed OLTPLAB_SHIM_PLACES line is ignored"),
        }
    }
    places
}

pub(crate) struct Shim {
    emu: Emulator,
    /// The emulated directory, canonical, without a trailing slash.
    dir: Vec<u8>,
    files: files::FileTable,
    places: Vec<Place>,
    ram: bool,
    /// `host`: no model, the real device times the I/O.
    host: bool,
    trace_dir: Option<PathBuf>,
    undo: Option<undo::Undo>,
}

pub(crate) static SHIM: OnceLock<Shim> = OnceLock::new();

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

/// Runs when the library is loaded, before the program's `main`.
extern "C" fn init() {
    real::resolve_all();
    real::resolve_open_family();
    let Some(state) = std::env::var_os(ENV_STATE) else {
        return;
    };
    let dir = std::env::var_os(ENV_DIR).map(OsString::into_vec);
    let files_path = std::env::var_os(ENV_FILES).map(OsString::into_vec);
    let (Some(mut dir), Some(mut files_path)) = (dir, files_path) else {
        complain("OLTPLAB_SHIM_DIR or OLTPLAB_SHIM_FILES is missing; running without emulation");
        return;
    };
    while dir.len() > 1 && dir.ends_with(b"/") {
        dir.pop();
    }
    let emu = match Emulator::open_shared(std::path::Path::new(&state)) {
        Ok(e) => e,
        Err(e) => {
            complain(&format!("{e}; running without emulation"));
            return;
        }
    };
    files_path.push(0);
    let Some(files) = files::FileTable::map(&files_path) else {
        complain("cannot map the shared file table; running without emulation");
        return;
    };
    // Calibrated once here, so that forked children (PostgreSQL backends) inherit the figure.
    oltplab_devmodel::spin_margin_ns();
    let ram = std::env::var_os(ENV_BACKING).is_some_and(|b| b == "ram");
    let trace_dir = std::env::var_os(ENV_TRACE_DIR).map(PathBuf::from);
    let places = std::env::var_os(ENV_PLACES)
        .map(|p| parse_places(&p.into_vec()))
        .unwrap_or_default();
    let undo = std::env::var_os(ENV_UNDO).map(|p| undo::Undo::new(p.into_vec(), emu.spec()));
    files.attach();
    let _ = SHIM.set(Shim {
        host: emu.spec().is_host(),
        emu,
        dir,
        files,
        places,
        ram,
        trace_dir,
        undo,
    });
    // SAFETY: registering plain extern "C" callbacks.
    unsafe {
        libc::pthread_atfork(None, None, Some(hooks::after_fork_child));
        libc::atexit(hooks::at_exit);
    }
}

/// One line on stderr, written with the raw system call (no locks, no hooks).
fn complain(message: &str) {
    let line = format!("oltplab shim: {message}\n");
    // SAFETY: writing a buffer we own to fd 2.
    unsafe {
        libc::syscall(libc::SYS_write, 2, line.as_ptr(), line.len());
    }
}
