// SPDX-License-Identifier: MIT
//! Tests only (tests/dlopen_sc.rs): a `cdylib` whose static call sites
//! must be registered (and patched) before `dlopen` returns, and whose
//! descriptors are emptied at `dlclose`.

use switchyard::{define_static_call, static_call};

type Fun = extern "C" fn(u64) -> u64;

extern "C" fn double(x: u64) -> u64 {
    x * 2
}

extern "C" fn square(x: u64) -> u64 {
    x * x
}

define_static_call!(PLUGIN_CALL: Fun = double);

/// The site: PLUGIN_CALL(x).
#[unsafe(no_mangle)]
pub extern "C" fn plugin_sc_call(x: u64) -> u64 {
    static_call!(PLUGIN_CALL(x))
}

/// Re-targets PLUGIN_CALL: 0 double, 1 square, 2 RET0, 3 NULL. 0 or the
/// negative errno.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_sc_update(to: u32) -> i32 {
    let r = match to {
        0 => PLUGIN_CALL.update(double),
        1 => PLUGIN_CALL.update(square),
        2 => PLUGIN_CALL.update_ret0(),
        _ => PLUGIN_CALL.update_null(),
    };
    r.map_or_else(|e| -e.errno(), |()| 0)
}

/// The number of sites the library patches for PLUGIN_CALL.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_sc_sites() -> usize {
    PLUGIN_CALL.info().map_or(0, |c| c.sites)
}

// An empty contribution, so that the bounds exist on every target.
core::arch::global_asm!(".pushsection sy_static_call_sites, \"awR\"", ".popsection");

unsafe extern "C" {
    // this object's table of static call records
    static __start_sy_static_call_sites: [switchyard::sys::sy_sc_entry; 0];
    static __stop_sy_static_call_sites: [switchyard::sys::sy_sc_entry; 0];
}

/// Whether the site is patched now (x86-64: the arm a store, the guard
/// TEST; AArch64: a BL that is not to its veneer, or a NOP): 1, 0 if it
/// holds its compiled form, -1 without a site.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_sc_patched() -> i32 {
    let start = &raw const __start_sy_static_call_sites as *const switchyard::sys::sy_sc_entry;
    let stop = &raw const __stop_sy_static_call_sites as *const switchyard::sys::sy_sc_entry;
    for i in 0..(stop as usize - start as usize) / 16 {
        // SAFETY: a record of the table; its meta is a static.
        let e = unsafe { &*start.add(i) };
        if unsafe { (*e.meta).key } != PLUGIN_CALL.as_ptr() {
            continue;
        }
        let at = (&raw const e.code as isize + e.code as isize) as usize;
        // SAFETY: the site's code, mapped readable.
        let b: Vec<u8> = (0..23)
            .map(|k| unsafe { std::ptr::read_volatile((at + k) as *const u8) })
            .collect();
        if cfg!(target_arch = "x86_64") {
            return (b[2] == 0xc7 && b[13] == 0xa9) as i32;
        }
        let w = u32::from_le_bytes(b[..4].try_into().unwrap());
        // the veneer: the record's flags, relative to themselves (bits
        // 0-1 the library's)
        let veneer = (&raw const e.flags as isize + (e.flags & !3) as i32 as isize) as usize;
        let to = (at as isize + 4 * ((((w & 0x03ff_ffff) << 6) as i32 >> 6) as isize)) as usize;
        return (w == 0xd503_201f || (w & 0xfc00_0000 == 0x9400_0000 && to != veneer)) as i32;
    }
    -1
}

// ---- a key too: one cdylib with keys and calls, for the C program of
// tests/c_driver.rs ----------------------------------------------------------

switchyard::define_static_key_false!(PLUGIN_KEY);

/// The site of PLUGIN_KEY: true when it jumps (the key is enabled).
#[unsafe(no_mangle)]
pub extern "C" fn plugin_key_unlikely() -> bool {
    switchyard::static_branch_unlikely!(PLUGIN_KEY)
}

/// Enables (on) or disables PLUGIN_KEY: 0 or the negative errno.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_key_set(on: bool) -> i32 {
    let r = if on { PLUGIN_KEY.enable() } else { PLUGIN_KEY.disable() };
    r.map_or_else(|e| -e.errno(), |()| 0)
}
