// SPDX-License-Identifier: MIT
//! Static keys (the Linux kernel's jump labels) for Rust programs on Linux,
//! safe to flip while other threads run the code being patched.
//!
//! A [`static_branch_unlikely!`] is one instruction in the straight-line
//! path: while the key is disabled a no-op (x86-64: a 2- or 5-byte `TEST`
//! that writes only the flags; AArch64: `NOP`), once enabled a jump to the
//! out-of-line code. No flag is loaded, tested or branched on. Enabling or
//! disabling the key rewrites every site of it, in every loaded object,
//! through libswitchyard (the C library of this repository), which does it
//! while other threads execute those sites.
//!
//! ```
//! use switchyard::{define_static_key_false, static_branch_unlikely};
//!
//! define_static_key_false!(TRACING);
//!
//! fn handle(x: u32) -> u32 {
//!     if static_branch_unlikely!(TRACING) {   // one no-op while disabled
//!         println!("trace: handle({x})");
//!     }
//!     x * 2
//! }
//!
//! # fn main() -> Result<(), switchyard::Error> {
//! handle(1);                 // prints nothing
//! TRACING.enable()?;         // no-op -> jump, at every site of the key
//! handle(2);                 // prints
//! TRACING.disable()?;        // jump -> no-op
//! assert_eq!(handle(3), 6);
//! # Ok(()) }
//! ```
//!
//! # How it fits with the C library
//!
//! The macros emit the site and the 16-byte record of the C headers
//! (`include/switchyard/arch/x86_64.h`, `aarch64.h`) with `asm!` label
//! operands (Rust >= 1.87), and the crate carries the headers' per-object
//! glue: a Rust binary or `cdylib` registers its sites before `main` (or
//! before `dlopen` returns), as a C object does. So a key defined in Rust
//! can be flipped from C and the reverse (see [`StaticKey`]), and the
//! `switchyard` tool lists and sets a Rust program's keys (`switchyard list
//! ./prog`, `SWITCHYARD_KEYS='crate::TRACING=on' ./prog`).
//!
//! # Safety of flipping
//!
//! Every call here is safe, from any thread, at any time: the library
//! serialises changes, and writes each site so that a thread running it
//! executes either the old or the new instruction (x86-64: the two forms
//! differ in one byte, written under a protocol that keeps other threads
//! off a half-written site; AArch64: B and NOP, which the architecture
//! allows to be modified while executed). What the caller must guarantee
//! is only what the types already ensure: keys are `static` (the macros
//! take a path to a static; a site records its key's address at link
//! time).
//!
//! # Targets
//!
//! x86-64 and AArch64 Linux patch sites. Elsewhere, or with the
//! `no-patching` feature, every branch is a relaxed load, a test and a
//! branch, with the same API and results.
//!
//! # Static calls
//!
//! [`define_static_call!`] and [`static_call!`] are the kernel's static
//! calls: a direct call whose target [`StaticCall::update`] changes while
//! other threads call through it, with NULL and RET0 targets; see
//! [`static_call`](mod@static_call).
//!
//! # Porting from the `static-keys` crate
//!
//! [`compat`] has its names; see there.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use core::cell::UnsafeCell;
use core::ffi::{CStr, c_char, c_int, c_void};
use core::fmt;

pub use switchyard_sys as sys;

pub mod compat;
pub mod static_call;
pub use static_call::StaticCall;

#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    not(feature = "no-patching")
))]
#[path = "arch/x86_64.rs"]
mod arch;
#[cfg(all(
    target_os = "linux",
    target_arch = "aarch64",
    not(feature = "no-patching")
))]
#[path = "arch/aarch64.rs"]
mod arch;
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(feature = "no-patching")
)))]
#[path = "arch/fallback.rs"]
mod arch;

/// Whether branches are patched sites (true) or the load-and-test
/// fallback (false): the target has a patching backend and the
/// `no-patching` feature is off.
///
/// ```
/// if switchyard::PATCHING {
///     println!("sites are patched");
/// }
/// ```
pub const PATCHING: bool = cfg!(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(feature = "no-patching")
));

/// A static key: the C library's `struct static_key`, in a cell that a
/// `static` can hold (no `static mut`).
///
/// Define one with [`define_static_key_false!`] or
/// [`define_static_key_true!`], test it with [`static_branch_unlikely!`] or
/// [`static_branch_likely!`], change it with the methods. The key's address
/// is the C struct's (`#[repr(transparent)]`), so C code can use a Rust key
/// and Rust code a C key:
///
/// ```
/// use switchyard::{define_static_key_false, static_branch_unlikely};
///
/// // C: `extern struct static_key_false rust_trace;` then
/// // static_branch_enable(&rust_trace) flips the Rust sites too.
/// define_static_key_false!(#[unsafe(no_mangle)] pub rust_trace);
///
/// # fn main() {
/// assert!(!static_branch_unlikely!(rust_trace));
/// # }
/// ```
///
/// A key that C defines (`DEFINE_STATIC_KEY_FALSE(c_trace);`) is declared
/// as an extern static of this type, and used by path like any other:
///
/// ```ignore
/// unsafe extern "C" {
///     safe static c_trace: switchyard::StaticKey;
/// }
/// if switchyard::static_branch_unlikely!(c_trace) { /* ... */ }
/// ```
///
/// The methods mirror the C API (`static_key_enable()` and friends), with
/// the library's negative errno as an [`Error`]. Each is thread-safe and
/// may run while other threads execute the key's sites. A key that no site
/// names (one on the heap, say) works too: only its count changes.
#[repr(transparent)]
pub struct StaticKey {
    raw: UnsafeCell<sys::static_key>,
}

// SAFETY: the C library changes the key under its patch lock or with
// atomic operations, and this crate reads `enabled` atomically only; the
// raw pointer field is the library's, never dereferenced here.
unsafe impl Sync for StaticKey {}
// SAFETY: as above; nothing in the key is tied to a thread.
unsafe impl Send for StaticKey {}

impl StaticKey {
    /// A key whose initial state is `initial`. In a `static` through the
    /// `define_*` macros; `const` so that it is built at compile time.
    ///
    /// ```
    /// static K: switchyard::StaticKey = switchyard::StaticKey::new(true);
    /// assert!(K.is_enabled());
    /// assert!(K.initial_enabled());
    /// ```
    pub const fn new(initial: bool) -> Self {
        StaticKey {
            raw: UnsafeCell::new(if initial {
                sys::STATIC_KEY_INIT_TRUE
            } else {
                sys::STATIC_KEY_INIT_FALSE
            }),
        }
    }

    /// The C struct, for C functions that take a `struct static_key *`.
    ///
    /// ```
    /// static K: switchyard::StaticKey = switchyard::StaticKey::new(false);
    /// let p = K.as_ptr();
    /// assert_eq!(unsafe { switchyard::sys::static_key_count(p) }, 0);
    /// ```
    pub const fn as_ptr(&self) -> *mut sys::static_key {
        self.raw.get()
    }

    /// Enables the key: sets its count to 1, rewriting its sites if it was
    /// 0 (`static_key_enable()`). Enabling an enabled key does nothing.
    /// Errors: `EBUSY` when the count is above 1 (the key is reference
    /// counted: use [`dec`](Self::dec)); `EFAULT` when a site held
    /// unexpected bytes; `EBUSY` when a debugger's breakpoint sits on a
    /// site; `EDEADLK` from a signal handler that interrupted a change on
    /// the same thread; the write's errno when no way to write code was
    /// allowed. On error, the count and every site are as before.
    ///
    /// ```
    /// switchyard::define_static_key_false!(K);
    /// K.enable().unwrap();
    /// assert!(K.is_enabled());
    /// K.enable().unwrap();              // already enabled: nothing to do
    /// assert_eq!(K.count(), 1);
    /// ```
    pub fn enable(&self) -> Result<(), Error> {
        // SAFETY: a live key (&self), accessed only by the library.
        one_copy::check();
        Error::check(unsafe { sys::static_key_enable(self.as_ptr()) })
    }

    /// Disables the key: sets its count to 0, rewriting its sites if it was
    /// 1 (`static_key_disable()`). Errors as [`enable`](Self::enable).
    ///
    /// ```
    /// switchyard::define_static_key_true!(K);
    /// K.disable().unwrap();
    /// assert!(!K.is_enabled());
    /// ```
    pub fn disable(&self) -> Result<(), Error> {
        // SAFETY: as in enable().
        one_copy::check();
        Error::check(unsafe { sys::static_key_disable(self.as_ptr()) })
    }

    /// Takes a reference (`static_key_slow_inc()`): the first one enables
    /// the key and returns once every site is rewritten. Errors:
    /// `EOVERFLOW` when the count would pass `i32::MAX`; the others of
    /// [`enable`](Self::enable).
    ///
    /// ```
    /// switchyard::define_static_key_false!(K);
    /// K.inc().unwrap();
    /// K.inc().unwrap();
    /// assert_eq!(K.count(), 2);
    /// ```
    pub fn inc(&self) -> Result<(), Error> {
        // SAFETY: as in enable().
        one_copy::check();
        Error::check(unsafe { sys::static_key_slow_inc(self.as_ptr()) })
    }

    /// Drops a reference (`static_key_slow_dec()`): the last one disables
    /// the key. Errors: `EINVAL` when the count is already 0 (misuse,
    /// reported once per key; the key is unchanged); the others of
    /// [`enable`](Self::enable).
    ///
    /// ```
    /// switchyard::define_static_key_false!(K);
    /// K.inc().unwrap();
    /// K.dec().unwrap();
    /// assert_eq!(K.dec().unwrap_err().errno(), switchyard::Error::EINVAL);
    /// assert_eq!(K.count(), 0);
    /// ```
    pub fn dec(&self) -> Result<(), Error> {
        // SAFETY: as in enable().
        one_copy::check();
        Error::check(unsafe { sys::static_key_slow_dec(self.as_ptr()) })
    }

    /// Takes a reference only if the key is enabled
    /// (`static_key_fast_inc_not_disabled()`): true if it did. Never
    /// rewrites code, never locks; async-signal-safe.
    ///
    /// ```
    /// switchyard::define_static_key_false!(K);
    /// assert!(!K.fast_inc_not_disabled());
    /// K.enable().unwrap();
    /// assert!(K.fast_inc_not_disabled());
    /// assert_eq!(K.count(), 2);
    /// ```
    pub fn fast_inc_not_disabled(&self) -> bool {
        // SAFETY: as in enable().
        unsafe { sys::static_key_fast_inc_not_disabled(self.as_ptr()) }
    }

    /// Whether the key is enabled (`static_key_enabled()`): a relaxed load.
    /// A key seen enabled may still have sites being rewritten (early,
    /// never late); a thread that must know its sites are patched takes a
    /// reference with [`inc`](Self::inc) instead. As the kernel's document
    /// says, if you use it to make decisions, serialise it with the changes
    /// yourself.
    ///
    /// ```
    /// switchyard::define_static_key_true!(K);
    /// assert!(K.is_enabled());
    /// ```
    pub fn is_enabled(&self) -> bool {
        self.count() > 0
    }

    /// The reference count (`static_key_count()`): 0 disabled, n > 0
    /// enabled with n references; a first enable in progress counts 1.
    /// A relaxed load, as [`is_enabled`](Self::is_enabled).
    ///
    /// ```
    /// switchyard::define_static_key_false!(K);
    /// assert_eq!(K.count(), 0);
    /// ```
    pub fn count(&self) -> u32 {
        // SAFETY: a live key; `enabled` is only accessed atomically.
        unsafe { sys::static_key_count(self.as_ptr()) as u32 }
    }

    /// Whether the key was defined true (`define_static_key_true!`).
    ///
    /// ```
    /// switchyard::define_static_key_true!(K);
    /// K.disable().unwrap();
    /// assert!(K.initial_enabled());
    /// ```
    pub fn initial_enabled(&self) -> bool {
        // SAFETY: sy_type's bit 0 is written at compile time only; the
        // library changes the other bits with atomic operations, so read
        // it atomically.
        let t =
            unsafe { core::sync::atomic::AtomicU32::from_ptr(&raw mut (*self.as_ptr()).sy_type) };
        t.load(core::sync::atomic::Ordering::Relaxed) & sys::SY__KEY_TYPE_TRUE != 0
    }

    /// The key's sites in every registered object, as the library sees
    /// them now (`switchyard_for_each_site()`): where each is, and whether
    /// it jumps. Empty in the fallback, and for a key no site names.
    ///
    /// ```
    /// use switchyard::{define_static_key_false, static_branch_unlikely};
    /// define_static_key_false!(K);
    /// # fn main() {
    /// if static_branch_unlikely!(K) {
    ///     println!("on");
    /// }
    /// K.enable().unwrap();
    /// for s in K.sites() {
    ///     assert!(s.jumps);          // an unlikely site jumps when enabled
    /// }
    /// # }
    /// ```
    pub fn sites(&self) -> Vec<Site> {
        unsafe extern "C" fn one(s: *const sys::switchyard_site_info, arg: *mut c_void) -> c_int {
            // SAFETY: the library passes a valid record for the call, and
            // arg is the Vec below.
            let (s, v) = unsafe { (&*s, &mut *(arg as *mut Vec<Site>)) };
            v.push(Site {
                addr: s.addr as usize,
                len: s.length as usize,
                jumps: s.jumps != 0,
                likely: s.likely != 0,
                function: opt_string(s.function),
            });
            0
        }
        let mut v: Vec<Site> = Vec::new();
        // SAFETY: the callback matches the C type and reads only what the
        // library hands it, while the call runs.
        unsafe {
            sys::switchyard_for_each_site(self.as_ptr(), Some(one), &raw mut v as *mut c_void);
        }
        v
    }
}

impl fmt::Debug for StaticKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticKey")
            .field("addr", &self.as_ptr())
            .field("count", &self.count())
            .field("initial_enabled", &self.initial_enabled())
            .finish()
    }
}

/// A process must hold one copy of the library (one registry) for keys
/// shared with C code. With the static library, a `libswitchyard.so` loaded
/// beside it (by a C library linked to it) is a second copy whose objects'
/// sites this copy never moves: said once, on standard error, at the first
/// change made while one is loaded, or within a second of it (the check
/// runs at most once a second; switchyard-sys's README: the `system`
/// feature).
mod one_copy {
    #[cfg(not(sy_static_lib))]
    pub fn check() {}

    #[cfg(sy_static_lib)]
    pub fn check() {
        use core::ffi::{c_char, c_int, c_void};
        use std::sync::atomic::{AtomicBool, Ordering};

        #[repr(C)]
        struct DlPhdrInfo {
            addr: usize,
            name: *const c_char,
        }
        unsafe extern "C" {
            fn dl_iterate_phdr(
                cb: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
                arg: *mut c_void,
            ) -> c_int;
        }
        unsafe extern "C" fn each(info: *mut DlPhdrInfo, _: usize, arg: *mut c_void) -> c_int {
            // SAFETY: the dynamic linker's record, for the call.
            let name = unsafe { (*info).name };
            if name.is_null() {
                return 0;
            }
            // SAFETY: a NUL-terminated path, live during the call.
            let path = unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes();
            let base = path.rsplit(|&c| c == b'/').next().unwrap_or(path);
            if base.starts_with(b"libswitchyard.so") {
                // SAFETY: arg is the Option<String> below.
                unsafe {
                    *(arg as *mut Option<String>) = Some(String::from_utf8_lossy(path).into())
                };
                return 1;
            }
            0
        }
        static SAID: AtomicBool = AtomicBool::new(false);
        if SAID.load(Ordering::Relaxed) {
            return;
        }
        // At most one walk of the loaded objects a second: it takes the
        // dynamic linker's lock and visits every object, 0.3 us here, which
        // made a flip of a key with one site 1.18x the C library's own in
        // the suite's PEERS (AMD EPYC 26/2); the first change always
        // checks, a copy loaded later is reported within a second of it.
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        static NEXT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let now_ms = START.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64;
        let next = NEXT_MS.load(Ordering::Relaxed);
        if now_ms < next
            || NEXT_MS
                .compare_exchange(next, now_ms + 1000, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let mut found: Option<String> = None;
        // SAFETY: the callback matches the C type and writes only `found`.
        unsafe { dl_iterate_phdr(each, &raw mut found as *mut c_void) };
        if let Some(p) = found {
            if !SAID.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "switchyard: this program links libswitchyard statically, and {p} \
                     is loaded too: two copies, two registries; a key shared with \
                     the code that uses {p} does not move its sites (build the Rust \
                     crates with the `system` feature)"
                );
            }
        }
    }
}

/// One site of a key, as [`StaticKey::sites`] reports it.
///
/// ```
/// let s = switchyard::Site { addr: 0x1000, len: 2, jumps: false,
///                            likely: false, function: None };
/// assert_eq!(s.len, 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The site's address in this process.
    pub addr: usize,
    /// Its length in bytes: 2 or 5 on x86-64, 4 on AArch64.
    pub len: usize,
    /// Whether it jumps to the out-of-line code now.
    pub jumps: bool,
    /// Whether it is a [`static_branch_likely!`] site.
    pub likely: bool,
    /// The function holding it (demangled as `switchyard list` shows it),
    /// if the library found one.
    pub function: Option<String>,
}

fn opt_string(p: *const c_char) -> Option<String> {
    // SAFETY: the library's strings are NUL-terminated and live during
    // the callback that hands them over.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// A key as [`keys`] lists it.
///
/// ```
/// let k = switchyard::KeyInfo { name: "app::TRACE".into(), enabled: false,
///                               count: 0, sites: 3, addr: 0x4000 };
/// assert!(!k.enabled);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// The key's name, as `switchyard list` shows it (demangled:
    /// `crate::module::KEY`).
    pub name: String,
    /// Whether it is enabled.
    pub enabled: bool,
    /// Its reference count.
    pub count: u32,
    /// Its sites in every registered object.
    pub sites: usize,
    /// Its address.
    pub addr: usize,
}

/// Starts serving this process's control socket, so that `switchyard
/// list PID` and `switchyard set PID KEY on|off` (the repository's tool)
/// can reach it; what `SWITCHYARD_CONTROL=1` in the environment does at
/// start-up (`switchyard_control_start()`). Idempotent: `Ok` when already
/// serving. Errors: the socket's directory or the socket could not be
/// made (`EPERM`: the directory exists with another owner or mode), the
/// serving thread could not start. Thread-safe.
///
/// The socket lets any process of the same user change this process's
/// keys and calls: start it only where that is wanted.
///
/// ```no_run
/// switchyard::control_start().expect("control socket");
/// // now: switchyard list <pid>; switchyard set <pid> 'app::TRACE' on
/// ```
pub fn control_start() -> Result<(), Error> {
    // SAFETY: no arguments; the library serialises its own state.
    Error::check(unsafe { sys::switchyard_control_start() })
}

/// Stops serving the control socket ([`control_start`]): the thread is
/// joined, the socket removed. `Err(ESRCH)` when not serving. Thread-safe.
pub fn control_stop() -> Result<(), Error> {
    // SAFETY: as in control_start().
    Error::check(unsafe { sys::switchyard_control_stop() })
}

/// Every key that has sites in a registered object of this process (the
/// program, its libraries, loaded `cdylib`s and C objects alike), in
/// address order (`switchyard_for_each_key()`). Empty in the fallback.
///
/// ```
/// use switchyard::{define_static_key_false, static_branch_likely};
/// define_static_key_false!(LISTED);
/// # fn main() {
/// if !static_branch_likely!(LISTED) {
///     println!("off");
/// }
/// if switchyard::PATCHING {
///     assert!(switchyard::keys().iter().any(|k| k.name.ends_with("LISTED")));
/// }
/// # }
/// ```
pub fn keys() -> Vec<KeyInfo> {
    unsafe extern "C" fn one(k: *const sys::switchyard_key_info, arg: *mut c_void) -> c_int {
        // SAFETY: as in StaticKey::sites().
        let (k, v) = unsafe { (&*k, &mut *(arg as *mut Vec<KeyInfo>)) };
        v.push(KeyInfo {
            name: opt_string(k.name).unwrap_or_default(),
            enabled: k.enabled != 0,
            count: k.count.max(0) as u32,
            sites: k.sites,
            addr: k.key as usize,
        });
        0
    }
    let mut v: Vec<KeyInfo> = Vec::new();
    // SAFETY: as in StaticKey::sites().
    unsafe {
        sys::switchyard_for_each_key(Some(one), &raw mut v as *mut c_void);
    }
    v
}

/// The C library's version, "MAJOR.MINOR.PATCH".
///
/// ```
/// assert_eq!(switchyard::version().split('.').count(), 3);
/// ```
pub fn version() -> &'static str {
    // SAFETY: a static NUL-terminated ASCII string.
    unsafe { CStr::from_ptr(sys::switchyard_version()) }
        .to_str()
        .unwrap_or("?")
}

/// An error of a key change: the negative errno the C library returned,
/// kept positive here ([`errno`](Self::errno)).
///
/// ```
/// switchyard::define_static_key_false!(K);
/// let e = K.dec().unwrap_err();
/// assert_eq!(e.errno(), switchyard::Error::EINVAL);
/// assert!(e.to_string().contains("EINVAL"));
/// let io: std::io::Error = e.into();
/// assert_eq!(io.raw_os_error(), Some(switchyard::Error::EINVAL));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error {
    errno: i32,
}

impl Error {
    /// `EINVAL`: a decrement of a key whose count is 0.
    pub const EINVAL: i32 = 22;
    /// `EBUSY`: enable or disable of a key whose count is above 1, or a
    /// debugger's breakpoint on a site.
    pub const EBUSY: i32 = 16;
    /// `EOVERFLOW`: the count would pass `i32::MAX`.
    pub const EOVERFLOW: i32 = 75;
    /// `EFAULT`: a site held unexpected bytes; nothing was written.
    pub const EFAULT: i32 = 14;
    /// `EDEADLK`: called from a signal handler that interrupted a change
    /// on the same thread.
    pub const EDEADLK: i32 = 35;

    fn check(r: c_int) -> Result<(), Error> {
        if r == 0 {
            Ok(())
        } else {
            Err(Error { errno: -r })
        }
    }

    /// The errno (positive).
    ///
    /// ```
    /// switchyard::define_static_key_false!(K);
    /// assert_eq!(K.dec().unwrap_err().errno(), 22);
    /// ```
    pub fn errno(&self) -> i32 {
        self.errno
    }

    fn name(&self) -> Option<&'static str> {
        Some(match self.errno {
            Self::EINVAL => "EINVAL",
            Self::EBUSY => "EBUSY",
            Self::EOVERFLOW => "EOVERFLOW",
            Self::EFAULT => "EFAULT",
            Self::EDEADLK => "EDEADLK",
            1 => "EPERM",
            12 => "ENOMEM",
            13 => "EACCES",
            _ => return None,
        })
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "Error({n})"),
            None => write!(f, "Error(errno {})", self.errno),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let io = std::io::Error::from_raw_os_error(self.errno);
        match self.name() {
            Some(n) => write!(f, "static key change failed: {n}: {io}"),
            None => write!(f, "static key change failed: {io}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        std::io::Error::from_raw_os_error(e.errno)
    }
}

/// Defines a static key whose initial state is disabled: a `static` of
/// type [`StaticKey`] (and, on patching targets, a name record so that a
/// stripped file keeps the key's name). Attributes and a visibility may
/// precede the name.
///
/// ```
/// switchyard::define_static_key_false!(
///     /// Traces requests.
///     pub REQUEST_TRACE);
/// assert!(!REQUEST_TRACE.is_enabled());
/// ```
#[macro_export]
macro_rules! define_static_key_false {
    ($(#[$attr:meta])* $vis:vis $name:ident) => {
        $(#[$attr])*
        $vis static $name: $crate::StaticKey = $crate::StaticKey::new(false);
        $crate::__sy_name_record!($name, $crate::StaticKey);
    };
}

/// Defines a static key whose initial state is enabled (see
/// [`define_static_key_false!`]).
///
/// ```
/// switchyard::define_static_key_true!(pub(crate) CHECKS);
/// assert!(CHECKS.is_enabled());
/// ```
#[macro_export]
macro_rules! define_static_key_true {
    ($(#[$attr:meta])* $vis:vis $name:ident) => {
        $(#[$attr])*
        $vis static $name: $crate::StaticKey = $crate::StaticKey::new(true);
        $crate::__sy_name_record!($name, $crate::StaticKey);
    };
}

/// `true` when the key is enabled, laid out for the key being **disabled**:
/// the straight-line path is the `false` one, and the site is a no-op
/// while the key is disabled. `KEY` is a path to a `static` key (defined
/// by this crate's macros, a [`compat`] key, or an extern static declared
/// as a [`StaticKey`]).
///
/// A plain instruction: usable anywhere, signal handlers included.
///
/// ```
/// use switchyard::{define_static_key_false, static_branch_unlikely};
/// define_static_key_false!(SLOW_PATH);
/// # fn main() {
/// let mut n = 0;
/// for _ in 0..3 {
///     if static_branch_unlikely!(SLOW_PATH) {
///         n += 1;
///     }
/// }
/// assert_eq!(n, 0);
/// # }
/// ```
#[macro_export]
macro_rules! static_branch_unlikely {
    ($key:path) => {{
        $crate::__private::check_key(&$key);
        $crate::__sy_branch!($key, 0, true, false)
    }};
}

/// `true` when the key is enabled, laid out for the key being **enabled**:
/// the straight-line path is the `true` one, and the site is a no-op while
/// the key is enabled. `KEY` as in [`static_branch_unlikely!`].
///
/// ```
/// use switchyard::{define_static_key_true, static_branch_likely};
/// define_static_key_true!(FAST_PATH);
/// # fn main() {
/// assert!(static_branch_likely!(FAST_PATH));
/// FAST_PATH.disable().unwrap();
/// assert!(!static_branch_likely!(FAST_PATH));
/// # }
/// ```
#[macro_export]
macro_rules! static_branch_likely {
    ($key:path) => {{
        $crate::__private::check_key(&$key);
        $crate::__sy_branch!($key, 1, false, true)
    }};
}

/// A key's name record (`core.h`'s SY__NAME_RECORD()): {&key, "name",
/// size} in section `sy_names`, which the library and the tool read when a
/// stripped file has no symbol table. `#[used]` makes the section
/// SHF_GNU_RETAIN (kept under `--gc-sections`). The name is the key's path
/// as the demangled symbol spells it (`crate::module::KEY`).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(feature = "no-patching")
))]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_name_record {
    ($name:ident, $ty:ty) => {
        const _: () = {
            #[used]
            #[unsafe(link_section = "sy_names")]
            static SY_NAME: $crate::__private::NameRecord = $crate::__private::NameRecord {
                obj: (&raw const $name).cast(),
                name: ::core::concat!(
                    ::core::module_path!(),
                    "::",
                    ::core::stringify!($name),
                    "\0"
                )
                .as_ptr(),
                size: ::core::mem::size_of::<$ty>(),
            };
        };
    };
}

/// No name record in the fallback: nothing lists its keys.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(feature = "no-patching")
)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_name_record {
    ($name:ident, $ty:ty) => {};
}

#[cfg(sy_cold_path)]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_cold {
    () => {
        // only where the compiler has it (build.rs): not below the MSRV
        #[allow(clippy::incompatible_msrv)]
        let () = ::core::hint::cold_path();
    };
}

#[cfg(not(sy_cold_path))]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_cold {
    () => {};
}

/// What the macros expand to. Not API.
#[doc(hidden)]
pub mod __private {
    /// A type the branch macros accept: a key whose address is its C
    /// struct's.
    ///
    /// # Safety
    /// The implementing type is `#[repr(transparent)]` over
    /// [`StaticKey`](crate::StaticKey).
    pub unsafe trait Key {
        /// The key.
        fn __sy_raw(&self) -> &crate::StaticKey;
    }

    // SAFETY: it is the key.
    unsafe impl Key for crate::StaticKey {
        #[inline(always)]
        fn __sy_raw(&self) -> &crate::StaticKey {
            self
        }
    }

    /// `struct sy__name` (`core.h`): a name record.
    #[repr(C)]
    pub struct NameRecord {
        /// The key.
        pub obj: *const u8,
        /// Its name, NUL-terminated.
        pub name: *const u8,
        /// Its size.
        pub size: usize,
    }

    // SAFETY: read-only data that points to a static and a literal.
    unsafe impl Sync for NameRecord {}

    /// Type check of the branch macros' argument; compiles to nothing.
    #[inline(always)]
    pub fn check_key<K: Key + ?Sized>(_: &K) {}
}
