// SPDX-License-Identifier: MIT
//! Raw FFI bindings to libswitchyard's static keys, written by hand from
//! `include/switchyard/static_key.h`, `core.h` and `introspect.h`.
//!
//! Use the [`switchyard`](https://docs.rs/switchyard) crate instead: it
//! emits the sites and records, and wraps these calls in a safe API. This
//! crate builds and links the C library (see its README for how, and for
//! the `system` feature) and declares what the library exports.
//!
//! Every function here is an `unsafe extern "C"` call taking raw pointers:
//! the caller guarantees that a `*mut static_key` points to a live, aligned
//! [`static_key`] with static storage duration (its sites record its
//! address) that nothing accesses other than through these calls and
//! atomic reads of `enabled`.
//!
//! ```
//! use switchyard_sys as sys;
//! // The library's version, e.g. "0.1.0".
//! let v = unsafe { core::ffi::CStr::from_ptr(sys::switchyard_version()) };
//! assert!(!v.to_bytes().is_empty());
//! ```
#![no_std]
#![allow(non_camel_case_types)]
#![warn(missing_docs)]

use core::ffi::{c_char, c_int, c_uint, c_void};
use core::sync::atomic::{AtomicI32, Ordering};

/// `struct static_key`: the C layout exactly (16 bytes, 8-aligned on
/// 64-bit targets).
///
/// `enabled` is the reference count, read and written by the library with
/// atomic operations: 0 disabled, -1 first enable in progress, n > 0
/// enabled with n references. Bit 0 of `sy_type` is the key's initial
/// value ([`SY__KEY_TYPE_TRUE`]); the other bits and `sy_priv` belong to
/// the library. Treat the fields as private: read the count with
/// [`static_key_count`].
///
/// ```
/// let k = switchyard_sys::STATIC_KEY_INIT_TRUE;
/// assert_eq!(k.enabled, 1);
/// assert_eq!(core::mem::size_of::<switchyard_sys::static_key>(), 16);
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct static_key {
    /// The reference count (atomic; see the type's documentation).
    pub enabled: c_int,
    /// Bit 0: the initial value; other bits: the library's.
    pub sy_type: c_uint,
    /// Reserved for the registry.
    pub sy_priv: *mut c_void,
}

/// Bit 0 of [`static_key::sy_type`]: the key was defined true.
///
/// ```
/// assert_eq!(switchyard_sys::STATIC_KEY_INIT_TRUE.sy_type
///            & switchyard_sys::SY__KEY_TYPE_TRUE, 1);
/// ```
pub const SY__KEY_TYPE_TRUE: c_uint = 1;

/// `STATIC_KEY_INIT_TRUE`: a key defined enabled.
///
/// ```
/// assert_eq!(switchyard_sys::STATIC_KEY_INIT_TRUE.enabled, 1);
/// ```
pub const STATIC_KEY_INIT_TRUE: static_key = static_key {
    enabled: 1,
    sy_type: SY__KEY_TYPE_TRUE,
    sy_priv: core::ptr::null_mut(),
};

/// `STATIC_KEY_INIT_FALSE`: a key defined disabled.
///
/// ```
/// assert_eq!(switchyard_sys::STATIC_KEY_INIT_FALSE.enabled, 0);
/// ```
pub const STATIC_KEY_INIT_FALSE: static_key = static_key {
    enabled: 0,
    sy_type: 0,
    sy_priv: core::ptr::null_mut(),
};

/// One 16-byte record of section `sy_jump_entries` (`src/sy_records.h`):
/// a site's address and its out-of-line target, each relative to the
/// field's own address, and the key's absolute address plus bit 0 (the
/// branch: 1 for the likely forms) and bit 1 (set by the registry: a
/// 5-byte site on x86-64).
///
/// ```
/// assert_eq!(core::mem::size_of::<switchyard_sys::sy_jump_entry>(), 16);
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sy_jump_entry {
    /// Site address minus this field's address.
    pub code: i32,
    /// Out-of-line label's address minus this field's address.
    pub target: i32,
    /// Key address | branch (bit 0) | long site (bit 1).
    pub key: usize,
}

/// `enum switchyard_log_level`: the level passed to a log callback.
pub type switchyard_log_level = c_uint;
/// A call failed; nothing was changed.
pub const SWITCHYARD_LOG_ERROR: switchyard_log_level = 0;
/// API misuse, reported once per key.
pub const SWITCHYARD_LOG_WARN: switchyard_log_level = 1;
/// Information.
pub const SWITCHYARD_LOG_INFO: switchyard_log_level = 2;

/// `switchyard_log_fn`: a log callback. It runs on the thread whose call
/// caused the message, possibly with the patch lock held: it must not call
/// back into the library.
pub type switchyard_log_fn =
    Option<unsafe extern "C" fn(level: switchyard_log_level, msg: *const c_char, arg: *mut c_void)>;

/// `enum switchyard_policy`: how code may be written.
pub type switchyard_policy = c_uint;
/// Through /proc/self/mem, else a short read-write-execute window.
pub const SWITCHYARD_POLICY_DEFAULT: switchyard_policy = 0;
/// Through /proc/self/mem only.
pub const SWITCHYARD_POLICY_STRICT: switchyard_policy = 1;

/// `struct switchyard_stats`: the registry's counters
/// ([`switchyard_get_stats`]; `core.h` documents each).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
#[allow(missing_docs)]
pub struct switchyard_stats {
    pub objects: u64,
    pub sites: u64,
    pub sites_short: u64,
    pub sites_long: u64,
    pub sites_refused: u64,
    pub patch_batches: u64,
    pub patched_sites: u64,
    pub sync_calls: u64,
    pub sync_fallbacks: u64,
    pub write_calls: u64,
    pub rwx_windows: u64,
    pub register_ns: u64,
    pub undone_batches: u64,
    pub stale_objects: u64,
}

/// `struct switchyard_key_info` (`introspect.h`): a key that has sites in
/// a registered object. The strings live until the callback returns.
#[repr(C)]
#[derive(Debug)]
pub struct switchyard_key_info {
    /// The key.
    pub key: *const static_key,
    /// Its stable name, as `switchyard list` shows it.
    pub name: *const c_char,
    /// Path of the object that defines it.
    pub object: *const c_char,
    /// `static_key_enabled()`.
    pub enabled: c_int,
    /// `static_key_count()`.
    pub count: c_int,
    /// Its sites in every registered object.
    pub sites: usize,
    /// `SWITCHYARD_KEY_DESCRIPTION()`'s text, or null.
    pub description: *const c_char,
}

/// `struct switchyard_site_info` (`introspect.h`): one site of a key.
#[repr(C)]
#[derive(Debug)]
pub struct switchyard_site_info {
    /// The site's address.
    pub addr: *const c_void,
    /// Path of the object holding the site.
    pub object: *const c_char,
    /// The function holding it, or null.
    pub function: *const c_char,
    /// Offset from the function's start.
    pub offset: usize,
    /// Length in bytes: 2 or 5 on x86-64, 4 on AArch64.
    pub length: c_int,
    /// 1: the site jumps now; 0: it falls through.
    pub jumps: c_int,
    /// 1: a likely site (branch bit set).
    pub likely: c_int,
    /// Source file from the debug information, or null.
    pub file: *const c_char,
    /// Its line, or 0.
    pub line: c_uint,
}

/// Callback of [`switchyard_for_each_key`]: nonzero stops the walk.
pub type switchyard_key_fn =
    Option<unsafe extern "C" fn(key: *const switchyard_key_info, arg: *mut c_void) -> c_int>;
/// Callback of [`switchyard_for_each_site`]: nonzero stops the walk.
pub type switchyard_site_fn =
    Option<unsafe extern "C" fn(site: *const switchyard_site_info, arg: *mut c_void) -> c_int>;

unsafe extern "C" {
    /// Takes a reference; the first one patches every site. 0 or a
    /// negative errno (`-EOVERFLOW`, `-EFAULT`, `-EBUSY`, `-EDEADLK`, the
    /// write's errno); on error nothing changed. Thread-safe.
    pub fn static_key_slow_inc(key: *mut static_key) -> c_int;
    /// Drops a reference; the last one patches every site. `-EINVAL` when
    /// the count is 0 (reported once per key; the key is unchanged).
    pub fn static_key_slow_dec(key: *mut static_key) -> c_int;
    /// Sets the count to 1, patching if it was 0. `-EBUSY` when the count
    /// is above 1 (reported once per key).
    pub fn static_key_enable(key: *mut static_key) -> c_int;
    /// Sets the count to 0, patching if it was 1. `-EBUSY` when the count
    /// is above 1.
    pub fn static_key_disable(key: *mut static_key) -> c_int;
    /// [`static_key_enable`] for a caller that holds the patch lock
    /// (`-EPERM` otherwise).
    pub fn static_key_enable_cpuslocked(key: *mut static_key) -> c_int;
    /// [`static_key_disable`] with the patch lock held.
    pub fn static_key_disable_cpuslocked(key: *mut static_key) -> c_int;
    /// [`static_key_slow_inc`] with the patch lock held.
    pub fn static_key_slow_inc_cpuslocked(key: *mut static_key) -> c_int;
    /// [`static_key_slow_dec`] with the patch lock held.
    pub fn static_key_slow_dec_cpuslocked(key: *mut static_key) -> c_int;
    /// Takes a reference only if the key is enabled; never patches, never
    /// locks. Lock-free; async-signal-safe.
    pub fn static_key_fast_inc_not_disabled(key: *mut static_key) -> bool;
    /// A no-op kept for ported code: objects register their sites when
    /// loaded.
    pub fn jump_label_init();

    /// The library's version, "MAJOR.MINOR.PATCH" (a static string).
    pub fn switchyard_version() -> *const c_char;
    /// Takes the patch lock: 0, or `-EDEADLK` if this thread holds it.
    pub fn switchyard_patch_lock() -> c_int;
    /// Releases the patch lock: 0, or `-EPERM` if this thread does not
    /// hold it.
    pub fn switchyard_patch_unlock() -> c_int;
    /// Routes the library's messages to `f` (None: back to stderr).
    pub fn switchyard_set_log(f: switchyard_log_fn, arg: *mut c_void);
    /// Chooses how code may be written: 0 or `-EINVAL`.
    pub fn switchyard_set_policy(policy: switchyard_policy) -> c_int;
    /// Copies the registry's counters: 0 or `-EINVAL` for null.
    pub fn switchyard_get_stats(st: *mut switchyard_stats) -> c_int;
    /// Starts serving the control socket (`control.h`; idempotent): 0 or
    /// a negative errno.
    pub fn switchyard_control_start() -> c_int;
    /// Stops serving it: 0, or `-ESRCH` when not serving.
    pub fn switchyard_control_stop() -> c_int;
    /// Calls `f` for every key that has sites in a registered object (a
    /// snapshot; `f` runs without the patch lock). 0, `-ENOMEM`, or `f`'s
    /// nonzero value.
    pub fn switchyard_for_each_key(f: switchyard_key_fn, arg: *mut c_void) -> c_int;
    /// Calls `f` for every site of `key`, as [`switchyard_for_each_key`].
    pub fn switchyard_for_each_site(
        key: *const static_key,
        f: switchyard_site_fn,
        arg: *mut c_void,
    ) -> c_int;

    /// The per-object glue's constructor call: registers the object's
    /// table `[start, stop)` (a second call for the same table is
    /// ignored). Not API: the `switchyard` crate's glue calls it.
    pub fn sy__register_jump_table(start: *mut sy_jump_entry, stop: *mut sy_jump_entry) -> c_int;
    /// The glue's destructor call: forgets the table.
    pub fn sy__unregister_jump_table(start: *mut sy_jump_entry, stop: *mut sy_jump_entry) -> c_int;
    /// Called as an object without patchable sites unloads (the fallback):
    /// drops its queued deferred decrements.
    pub fn sy__object_unloading(addr: *const c_void);
}

/// `static_key_count()`, an inline function in C, reimplemented from its
/// definition: the reference count, an enable in progress (-1) reported
/// as 1. A relaxed load: a key seen enabled may still have sites being
/// written (early, never late). Lock-free; async-signal-safe.
///
/// # Safety
/// `key` points to a live, aligned [`static_key`].
///
/// ```
/// let mut k = switchyard_sys::STATIC_KEY_INIT_TRUE;
/// assert_eq!(unsafe { switchyard_sys::static_key_count(&k) }, 1);
/// k.enabled = -1;
/// assert_eq!(unsafe { switchyard_sys::static_key_count(&k) }, 1);
/// ```
#[inline]
pub unsafe fn static_key_count(key: *const static_key) -> c_int {
    // SAFETY: the caller's guarantee; `enabled` is only ever accessed
    // atomically (the C library uses __atomic builtins on it).
    let n = unsafe { AtomicI32::from_ptr(&raw const (*key).enabled as *mut i32) }
        .load(Ordering::Relaxed);
    if n >= 0 { n } else { 1 }
}

/// `static_key_enabled()`: whether the count is above 0 (see
/// [`static_key_count`]).
///
/// # Safety
/// `key` points to a live, aligned [`static_key`].
///
/// ```
/// let mut k = switchyard_sys::STATIC_KEY_INIT_FALSE;
/// assert!(!unsafe { switchyard_sys::static_key_enabled(&k) });
/// ```
#[inline]
pub unsafe fn static_key_enabled(key: *const static_key) -> bool {
    // SAFETY: the caller's guarantee.
    unsafe { static_key_count(key) > 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_the_c_headers() {
        assert_eq!(size_of::<static_key>(), 16);
        assert_eq!(align_of::<static_key>(), 8);
        assert_eq!(offset_of!(static_key, enabled), 0);
        assert_eq!(offset_of!(static_key, sy_type), 4);
        assert_eq!(offset_of!(static_key, sy_priv), 8);
        assert_eq!(size_of::<sy_jump_entry>(), 16);
        assert_eq!(offset_of!(sy_jump_entry, key), 8);
        assert_eq!(size_of::<switchyard_stats>(), 14 * 8);
        assert_eq!(size_of::<switchyard_key_info>(), 48);
        assert_eq!(offset_of!(switchyard_key_info, sites), 32);
        assert_eq!(size_of::<switchyard_site_info>(), 64);
        assert_eq!(offset_of!(switchyard_site_info, length), 32);
        assert_eq!(offset_of!(switchyard_site_info, file), 48);
        assert_eq!(offset_of!(switchyard_site_info, line), 56);
    }

    #[test]
    fn count_reports_an_enable_in_progress_as_one() {
        let mut k = STATIC_KEY_INIT_FALSE;
        assert_eq!(unsafe { static_key_count(&k) }, 0);
        k.enabled = -1;
        assert_eq!(unsafe { static_key_count(&k) }, 1);
        assert!(unsafe { static_key_enabled(&k) });
        k.enabled = 7;
        assert_eq!(unsafe { static_key_count(&k) }, 7);
    }

    #[test]
    fn dec_below_zero_is_einval_and_changes_nothing() {
        // A key with no sites: nothing to patch, the state machine alone.
        struct Key(core::cell::UnsafeCell<static_key>);
        // SAFETY: only the library writes it, atomically.
        unsafe impl Sync for Key {}
        static K: Key = Key(core::cell::UnsafeCell::new(STATIC_KEY_INIT_FALSE));
        let r = unsafe { static_key_slow_dec(K.0.get()) };
        assert_eq!(r, -22); // -EINVAL
        assert_eq!(unsafe { static_key_count(K.0.get()) }, 0);
        assert_eq!(unsafe { static_key_slow_inc(K.0.get()) }, 0);
        assert_eq!(unsafe { static_key_slow_inc(K.0.get()) }, 0);
        assert_eq!(unsafe { static_key_count(K.0.get()) }, 2);
        assert_eq!(unsafe { static_key_disable(K.0.get()) }, -16); // -EBUSY
        assert_eq!(unsafe { static_key_slow_dec(K.0.get()) }, 0);
        assert_eq!(unsafe { static_key_slow_dec(K.0.get()) }, 0);
        assert!(!unsafe { static_key_enabled(K.0.get()) });
    }
}

// ---- static calls (include/switchyard/static_call.h) --------------------

/// `struct static_call_key`: the C layout exactly (32 bytes, 8-aligned).
///
/// `func` is the current target, read by the sites' detours and by the
/// fallback with an acquire load, written by the library (release) in
/// [`__static_call_update`]; `sy_reserved` belongs to the registry (zero
/// until then). Its size is ABI: fields are appended into the reserved
/// room, never moved.
///
/// ```
/// assert_eq!(core::mem::size_of::<switchyard_sys::static_call_key>(), 32);
/// let k = switchyard_sys::static_call_key::NULL;
/// assert!(k.func.is_none());
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct static_call_key {
    /// The current target, cast; `None` (NULL) for none.
    pub func: Option<unsafe extern "C" fn()>,
    /// The registry's room.
    pub sy_reserved: [*mut c_void; 3],
}

impl static_call_key {
    /// A key with no target (`DEFINE_STATIC_CALL_NULL()`).
    ///
    /// ```
    /// assert!(switchyard_sys::static_call_key::NULL.func.is_none());
    /// ```
    pub const NULL: static_call_key = static_call_key {
        func: None,
        sy_reserved: [core::ptr::null_mut(); 3],
    };
}

/// `struct sy__sc_meta`: what a patched static call site knows of its
/// call, named by the site's record (not API): its key, and its kind (the
/// payload's room in bytes, 5 to 15, plus [`SY_SC_KIND_CALLEE_SAVE`] for a
/// callee-save site).
///
/// ```
/// assert_eq!(core::mem::size_of::<switchyard_sys::sy__sc_meta>(), 16);
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct sy__sc_meta {
    /// The call's key.
    pub key: *mut static_call_key,
    /// Room + 16 for a callee-save site.
    pub kind: core::ffi::c_ulong,
}

/// Added to [`sy__sc_meta::kind`] for a callee-save site.
///
/// ```
/// assert_eq!(switchyard_sys::SY_SC_KIND_CALLEE_SAVE, 16);
/// ```
pub const SY_SC_KIND_CALLEE_SAVE: core::ffi::c_ulong = 16;

/// One 16-byte record of section `sy_static_call_sites`
/// (`src/sy_records.h`): the site's meta (absolute), the site's code
/// relative to the field (x86-64: the arm; AArch64: the BL), and flags
/// (x86-64: 0 on disk; AArch64: the veneer relative to the field).
///
/// ```
/// assert_eq!(core::mem::size_of::<switchyard_sys::sy_sc_entry>(), 16);
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sy_sc_entry {
    /// The site's [`sy__sc_meta`].
    pub meta: *const sy__sc_meta,
    /// The site minus this field's address.
    pub code: i32,
    /// The registry's at run time (see the type).
    pub flags: u32,
}

/// A static call as `switchyard_for_each_static_call()` reports it
/// (`struct switchyard_call_info`, introspect.h).
///
/// ```
/// assert_eq!(core::mem::size_of::<switchyard_sys::switchyard_call_info>(), 64);
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct switchyard_call_info {
    /// The call's key.
    pub key: *const static_call_key,
    /// Its name, as `switchyard list` shows it.
    pub name: *const c_char,
    /// The path of the object that defines its key.
    pub object: *const c_char,
    /// The current target's name, "(none)" for NULL, or "func@0x...".
    pub target: *const c_char,
    /// Patched call sites, in every object.
    pub sites: usize,
    /// `SWITCHYARD_STATIC_CALL_TARGET()` records: how many.
    pub ntargets: usize,
    /// Their names.
    pub targets: *const *const c_char,
    /// Their functions.
    pub target_funcs: *const Option<unsafe extern "C" fn()>,
}

/// The callback of [`switchyard_for_each_static_call`].
pub type switchyard_call_fn =
    Option<unsafe extern "C" fn(call: *const switchyard_call_info, arg: *mut c_void) -> c_int>;

unsafe extern "C" {
    /// Returns 0, ignoring its arguments: the target of
    /// `DEFINE_STATIC_CALL_RET0()` keys. Thread-safe; async-signal-safe.
    pub fn __static_call_return0() -> core::ffi::c_long;
    /// Sets `key`'s target to `func` (NULL: none) and brings every
    /// registered site of it to the target, while other threads call
    /// through them. 0, `-EDEADLK` (from a signal handler that interrupted
    /// a switchyard call on the same thread), `-EFAULT` (a site held
    /// unexpected bytes), `-EBUSY` (a debugger's breakpoint on a guard),
    /// or the write path's error when nothing changed.
    pub fn __static_call_update(
        key: *mut static_call_key,
        func: Option<unsafe extern "C" fn()>,
    ) -> c_int;
    /// Registers `func`'s inline native form (`code`, `len` bytes): see
    /// static_call.h. 0 or a negative errno.
    pub fn switchyard_static_call_native(
        func: Option<unsafe extern "C" fn()>,
        code: *const c_void,
        len: usize,
    ) -> c_int;
    /// Calls `f` for every static call that has patched sites in a
    /// registered object (a snapshot; `f` runs without the patch lock).
    /// 0, `-ENOMEM`, or `f`'s nonzero value.
    pub fn switchyard_for_each_static_call(f: switchyard_call_fn, arg: *mut c_void) -> c_int;
    /// The per-object glue's constructor call for static call sites:
    /// registers the object's table `[start, stop)` (a second call for the
    /// same table is ignored). Not API: the `switchyard` crate's glue
    /// calls it.
    pub fn sy__register_static_call_sites(start: *mut sy_sc_entry, stop: *mut sy_sc_entry)
    -> c_int;
    /// The glue's destructor call: empties the table's descriptors and
    /// forgets it.
    pub fn sy__unregister_static_call_sites(
        start: *mut sy_sc_entry,
        stop: *mut sy_sc_entry,
    ) -> c_int;
}

/// The acquire load of a key's target (`sy__static_call_load()`, an
/// inline function in C): pairs with the release store of
/// [`__static_call_update`], so a caller that gets the new target also
/// sees what the updater wrote before the update.
///
/// # Safety
/// `key` points to a live, aligned [`static_call_key`].
///
/// ```
/// let mut k = switchyard_sys::static_call_key::NULL;
/// assert!(unsafe { switchyard_sys::static_call_load(&mut k) }.is_none());
/// ```
#[inline(always)]
pub unsafe fn static_call_load(key: *const static_call_key) -> Option<unsafe extern "C" fn()> {
    // SAFETY: the caller's guarantee; `func` is a pointer-sized field only
    // ever accessed atomically (the C library uses __atomic builtins).
    let p = unsafe {
        core::sync::atomic::AtomicPtr::<c_void>::from_ptr(
            &raw const (*key).func as *mut *mut c_void,
        )
    }
    .load(Ordering::Acquire);
    // SAFETY: the field holds a function pointer or NULL, and
    // Option<fn> has the layout of a nullable pointer.
    unsafe { core::mem::transmute::<*mut c_void, Option<unsafe extern "C" fn()>>(p) }
}

#[cfg(test)]
mod static_call_tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    #[test]
    fn static_call_layouts_match_the_c_headers() {
        assert_eq!(size_of::<static_call_key>(), 32);
        assert_eq!(align_of::<static_call_key>(), 8);
        assert_eq!(offset_of!(static_call_key, func), 0);
        assert_eq!(size_of::<sy__sc_meta>(), 16);
        assert_eq!(offset_of!(sy__sc_meta, kind), 8);
        assert_eq!(size_of::<sy_sc_entry>(), 16);
        assert_eq!(offset_of!(sy_sc_entry, code), 8);
        assert_eq!(offset_of!(sy_sc_entry, flags), 12);
        assert_eq!(size_of::<switchyard_call_info>(), 64);
        assert_eq!(offset_of!(switchyard_call_info, sites), 32);
    }

    #[test]
    fn return0_returns_zero_and_update_of_a_siteless_key_sets_it() {
        struct Key(core::cell::UnsafeCell<static_call_key>);
        // SAFETY: only the library writes it.
        unsafe impl Sync for Key {}
        static K: Key = Key(core::cell::UnsafeCell::new(static_call_key::NULL));
        assert_eq!(unsafe { __static_call_return0() }, 0);
        // SAFETY: a function pointer cast to the key's type, as C does.
        let f: unsafe extern "C" fn() = unsafe {
            core::mem::transmute::<
                unsafe extern "C" fn() -> core::ffi::c_long,
                unsafe extern "C" fn(),
            >(__static_call_return0)
        };
        assert_eq!(unsafe { __static_call_update(K.0.get(), Some(f)) }, 0);
        assert_eq!(
            unsafe { static_call_load(K.0.get()) }.map(|g| g as usize),
            Some(f as usize)
        );
        assert_eq!(unsafe { __static_call_update(K.0.get(), None) }, 0);
        assert!(unsafe { static_call_load(K.0.get()) }.is_none());
    }
}
