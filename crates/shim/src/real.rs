//! libc's own functions, found with `dlsym(RTLD_NEXT, …)` the first time they are needed (and all
//! at once when the library loads). A function dlsym cannot find fails with `ENOSYS`.

use std::sync::atomic::{AtomicUsize, Ordering};

use libc::{c_char, c_int, c_uint, c_void, iovec, mode_t, off64_t, off_t, size_t, ssize_t};

pub fn set_errno(value: c_int) {
    // SAFETY: errno is this thread's own variable.
    unsafe { *libc::__errno_location() = value }
}

pub fn errno() -> c_int {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() }
}

/// Looks `name` (NUL-terminated) up once and caches it in `slot`.
#[inline]
fn resolve(slot: &AtomicUsize, name: &[u8]) -> usize {
    let p = slot.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: name is NUL-terminated; RTLD_NEXT finds the definition after this library's (libc's).
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    slot.store(p, Ordering::Relaxed);
    p
}

macro_rules! real {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $sym:literal;)*) => {
        $(
            #[allow(non_upper_case_globals)]
            static $name: AtomicUsize = AtomicUsize::new(0);
        )*
        pub mod f {
            use super::*;
            $(
                /// The libc function of the same name.
                #[inline]
                pub unsafe fn $name($($arg: $ty),*) -> $ret {
                    let p = resolve(&super::$name, concat!($sym, "\0").as_bytes());
                    if p == 0 {
                        set_errno(libc::ENOSYS);
                        return -1 as $ret;
                    }
                    // SAFETY: p is the address of the libc function with this signature.
                    let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(p) };
                    unsafe { real($($arg),*) }
                }
            )*
        }
        /// Resolves every function now, while the process is single-threaded and not in a hook.
        pub fn resolve_all() {
            $( resolve(&$name, concat!($sym, "\0").as_bytes()); )*
        }
    };
}

real! {
    fn close(fd: c_int) -> c_int = "close";
    fn read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t = "read";
    fn read_chk(fd: c_int, buf: *mut c_void, n: size_t, buflen: size_t) -> ssize_t = "__read_chk";
    fn write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t = "write";
    fn pread(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t = "pread";
    fn pread64(fd: c_int, buf: *mut c_void, n: size_t, off: off64_t) -> ssize_t = "pread64";
    fn pread_chk(fd: c_int, buf: *mut c_void, n: size_t, off: off_t, buflen: size_t) -> ssize_t = "__pread_chk";
    fn pread64_chk(fd: c_int, buf: *mut c_void, n: size_t, off: off64_t, buflen: size_t) -> ssize_t = "__pread64_chk";
    fn pwrite(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t = "pwrite";
    fn pwrite64(fd: c_int, buf: *const c_void, n: size_t, off: off64_t) -> ssize_t = "pwrite64";
    fn preadv(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t = "preadv";
    fn preadv64(fd: c_int, iov: *const iovec, cnt: c_int, off: off64_t) -> ssize_t = "preadv64";
    fn pwritev(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t = "pwritev";
    fn pwritev64(fd: c_int, iov: *const iovec, cnt: c_int, off: off64_t) -> ssize_t = "pwritev64";
    fn preadv2(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t = "preadv2";
    fn preadv64v2(fd: c_int, iov: *const iovec, cnt: c_int, off: off64_t, flags: c_int) -> ssize_t = "preadv64v2";
    fn pwritev2(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t = "pwritev2";
    fn pwritev64v2(fd: c_int, iov: *const iovec, cnt: c_int, off: off64_t, flags: c_int) -> ssize_t = "pwritev64v2";
    fn fsync(fd: c_int) -> c_int = "fsync";
    fn fdatasync(fd: c_int) -> c_int = "fdatasync";
    fn sync_file_range(fd: c_int, off: off64_t, n: off64_t, flags: c_uint) -> c_int = "sync_file_range";
    fn dup(fd: c_int) -> c_int = "dup";
    fn dup2(fd: c_int, new: c_int) -> c_int = "dup2";
    fn dup3(fd: c_int, new: c_int, flags: c_int) -> c_int = "dup3";
}

// The open family is variadic in libc; calling a variadic function through a pointer is allowed.
static OPEN: AtomicUsize = AtomicUsize::new(0);
static OPEN64: AtomicUsize = AtomicUsize::new(0);
static OPENAT: AtomicUsize = AtomicUsize::new(0);
static OPENAT64: AtomicUsize = AtomicUsize::new(0);
static OPEN_2: AtomicUsize = AtomicUsize::new(0);
static OPEN64_2: AtomicUsize = AtomicUsize::new(0);
static OPENAT_2: AtomicUsize = AtomicUsize::new(0);
static OPENAT64_2: AtomicUsize = AtomicUsize::new(0);

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int;
type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;
type Open2Fn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type Openat2Fn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;

pub fn resolve_open_family() {
    resolve(&OPEN, b"open\0");
    resolve(&OPEN64, b"open64\0");
    resolve(&OPENAT, b"openat\0");
    resolve(&OPENAT64, b"openat64\0");
    resolve(&OPEN_2, b"__open_2\0");
    resolve(&OPEN64_2, b"__open64_2\0");
    resolve(&OPENAT_2, b"__openat_2\0");
    resolve(&OPENAT64_2, b"__openat64_2\0");
}

/// Which libc entry point a hooked open came through.
#[derive(Clone, Copy)]
pub enum OpenKind {
    Open,
    Open64,
    Openat,
    Openat64,
    Open2,
    Open64_2,
    Openat2,
    Openat64_2,
}

/// Calls libc's function for `kind`.
pub unsafe fn open(
    kind: OpenKind,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    let (slot, name): (&AtomicUsize, &[u8]) = match kind {
        OpenKind::Open => (&OPEN, b"open\0"),
        OpenKind::Open64 => (&OPEN64, b"open64\0"),
        OpenKind::Openat => (&OPENAT, b"openat\0"),
        OpenKind::Openat64 => (&OPENAT64, b"openat64\0"),
        OpenKind::Open2 => (&OPEN_2, b"__open_2\0"),
        OpenKind::Open64_2 => (&OPEN64_2, b"__open64_2\0"),
        OpenKind::Openat2 => (&OPENAT_2, b"__openat_2\0"),
        OpenKind::Openat64_2 => (&OPENAT64_2, b"__openat64_2\0"),
    };
    let p = resolve(slot, name);
    if p == 0 {
        // No libc entry point (unusual libc): the system call does the same.
        // SAFETY: plain openat system call with the caller's arguments.
        return unsafe {
            libc::syscall(libc::SYS_openat, dirfd, path, flags, mode as c_uint) as c_int
        };
    }
    // SAFETY: p is libc's function with the signature its kind implies.
    unsafe {
        match kind {
            OpenKind::Open | OpenKind::Open64 => {
                let f: OpenFn = std::mem::transmute(p);
                f(path, flags, mode as c_uint)
            }
            OpenKind::Openat | OpenKind::Openat64 => {
                let f: OpenatFn = std::mem::transmute(p);
                f(dirfd, path, flags, mode as c_uint)
            }
            OpenKind::Open2 | OpenKind::Open64_2 => {
                let f: Open2Fn = std::mem::transmute(p);
                f(path, flags)
            }
            OpenKind::Openat2 | OpenKind::Openat64_2 => {
                let f: Openat2Fn = std::mem::transmute(p);
                f(dirfd, path, flags)
            }
        }
    }
}
