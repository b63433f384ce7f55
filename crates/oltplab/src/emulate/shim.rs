//! Finding `liboltplab_shim.so`. Cargo builds it with the workspace (`cargo build --release` puts it
//! in target/release beside the `oltplab` binary), so oltplab looks beside its own executable; an
//! installed copy can live in `../lib/oltplab/`, and `OLTPLAB_SHIM` names one explicitly.

use std::path::{Path, PathBuf};

use oltplab_core::{Error, Result};

pub const SHIM_FILE: &str = "liboltplab_shim.so";
pub const ENV_SHIM: &str = "OLTPLAB_SHIM";

/// Where oltplab looks for the shim, in order.
pub fn candidates(exe: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = exe.parent() {
        out.push(dir.join(SHIM_FILE));
        // Test binaries live in target/<profile>/deps.
        if dir.file_name().is_some_and(|n| n == "deps") {
            if let Some(profile) = dir.parent() {
                out.push(profile.join(SHIM_FILE));
            }
        }
        if let Some(prefix) = dir.parent() {
            out.push(prefix.join("lib/oltplab").join(SHIM_FILE));
            out.push(prefix.join("lib").join(SHIM_FILE));
        }
    }
    out
}

/// The shim library to preload.
pub fn find() -> Result<PathBuf> {
    if let Some(explicit) = std::env::var_os(ENV_SHIM) {
        let path = PathBuf::from(explicit);
        return match check(&path) {
            Ok(()) => Ok(path),
            Err(why) => Err(Error::usage(format!(
                "{ENV_SHIM}={} {why}: point it at liboltplab_shim.so or unset it",
                path.display()
            ))),
        };
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| Error::usage(format!("cannot find oltplab's own executable: {e}")))?;
    for candidate in candidates(&exe) {
        if check(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    Err(Error::usage(format!(
        "cannot find {SHIM_FILE} beside {}: build it with the workspace (cargo build --release), copy it next to the oltplab binary, or set {ENV_SHIM}=/path/to/{SHIM_FILE}",
        exe.display()
    )))
}

/// Ok if `path` is a readable ELF shared object.
fn check(path: &Path) -> std::result::Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Err("is not a shared library".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_binaries_look_in_the_profile_directory() {
        let c = candidates(Path::new("/w/target/debug/deps/emulate-123"));
        assert_eq!(c[0], Path::new("/w/target/debug/deps/liboltplab_shim.so"));
        assert_eq!(c[1], Path::new("/w/target/debug/liboltplab_shim.so"));
        let c = candidates(Path::new("/usr/local/bin/oltplab"));
        assert_eq!(c[0], Path::new("/usr/local/bin/liboltplab_shim.so"));
        assert!(c.contains(&PathBuf::from("/usr/local/lib/oltplab/liboltplab_shim.so")));
    }

    #[test]
    fn non_libraries_are_refused() {
        assert!(check(Path::new("/proc/self/stat")).is_err());
        assert!(check(Path::new("/nonexistent")).is_err());
    }
}
