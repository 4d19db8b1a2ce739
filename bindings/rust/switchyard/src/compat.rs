// SPDX-License-Identifier: MIT
//! The names of the [`static-keys`](https://docs.rs/static-keys/0.8) crate
//! (0.8.x), on switchyard's keys: porting is a rename.
//!
//! ```
//! // was: use static_keys::{define_static_key_false, static_branch_unlikely};
//! use switchyard::compat::{define_static_key_false, static_branch_unlikely};
//!
//! define_static_key_false!(FLAG_STATIC_KEY);
//!
//! fn main() {
//!     switchyard::compat::global_init();        // was: static_keys::global_init()
//!     unsafe { FLAG_STATIC_KEY.enable() };      // unchanged
//!     assert!(static_branch_unlikely!(FLAG_STATIC_KEY));
//! }
//! ```
//!
//! What differs, all in the caller's favour:
//!
//! - **Flipping while other threads run is safe.** The `static-keys`
//!   README warns that modifying a key while other threads run is "very
//!   dangerous" (it remaps the code's pages with `mremap`, under threads
//!   that may be executing them); here the library rewrites a site so that
//!   a thread executing it sees the old or the new instruction, and
//!   serialises changes. `enable`/`disable` stay `unsafe fn` only so that
//!   ported code (`unsafe { KEY.enable() }`) compiles without a warning:
//!   they have no safety requirement. The checked, safe calls are on
//!   [`StaticKey::key`] ([`crate::StaticKey::enable`], ... with a
//!   `Result`).
//! - [`global_init`] does nothing: every object's sites are registered
//!   before its code runs (before `main`, before `dlopen` returns).
//! - A failed change (no way to write code was allowed, say) panics, as
//!   `static-keys` does; the calls on [`StaticKey::key`] return the error.
//! - The sites are switchyard's: `switchyard list`, `set`, `SWITCHYARD_KEYS`
//!   and C code see and change these keys.
//!
//! Not mapped: the `*_generic` names and `code_manipulate` (a custom code
//! writer: the library has its own write paths and policy), and
//! `jump_entries_count` counts the sites of every registered object, not
//! the records of one section.

use core::fmt;

/// A static key whose initial state is `S` (`static_keys::StaticKey<S>`):
/// a [`crate::StaticKey`] underneath, same address.
///
/// ```
/// use switchyard::compat::{StaticTrueKey, new_static_true_key};
/// static K: StaticTrueKey = new_static_true_key();
/// assert!(K.initial_enabled() && K.is_enabled());
/// ```
#[repr(transparent)]
pub struct StaticKey<const S: bool>(crate::StaticKey);

/// A [`StaticKey`] whose initial state is `true`.
pub type StaticTrueKey = StaticKey<true>;
/// A [`StaticKey`] whose initial state is `false`.
pub type StaticFalseKey = StaticKey<false>;

impl<const S: bool> StaticKey<S> {
    /// Whether the initial state is `true` (the type's `S`).
    ///
    /// ```
    /// use switchyard::compat::{StaticFalseKey, new_static_false_key};
    /// static K: StaticFalseKey = new_static_false_key();
    /// assert!(!K.initial_enabled());
    /// ```
    #[inline(always)]
    pub const fn initial_enabled(&self) -> bool {
        S
    }

    /// Enables the key; nothing if it is enabled.
    ///
    /// # Safety
    /// None: `unsafe` only for source compatibility with `static-keys`
    /// (whose call is unsafe while threads run). Safe to call from any
    /// thread at any time.
    ///
    /// # Panics
    /// If the library refuses the change ([`crate::StaticKey::enable`]
    /// returns the error instead of panicking).
    ///
    /// ```
    /// use switchyard::compat::define_static_key_false;
    /// define_static_key_false!(K);
    /// unsafe { K.enable() };
    /// assert!(K.is_enabled());
    /// ```
    pub unsafe fn enable(&self) {
        if let Err(e) = self.0.enable() {
            panic!("switchyard: enabling a static key: {e}");
        }
    }

    /// Disables the key; nothing if it is disabled.
    ///
    /// # Safety
    /// None, as [`enable`](Self::enable).
    ///
    /// # Panics
    /// If the library refuses the change.
    ///
    /// ```
    /// use switchyard::compat::define_static_key_true;
    /// define_static_key_true!(K);
    /// unsafe { K.disable() };
    /// assert!(!K.is_enabled());
    /// ```
    pub unsafe fn disable(&self) {
        if let Err(e) = self.0.disable() {
            panic!("switchyard: disabling a static key: {e}");
        }
    }

    /// The current state.
    ///
    /// ```
    /// use switchyard::compat::define_static_key_true;
    /// define_static_key_true!(K);
    /// assert!(K.is_enabled());
    /// ```
    pub fn is_enabled(&self) -> bool {
        self.0.is_enabled()
    }

    /// The switchyard key: the full API (reference counts, `Result`s).
    ///
    /// ```
    /// use switchyard::compat::define_static_key_false;
    /// define_static_key_false!(K);
    /// K.key().inc().unwrap();
    /// assert_eq!(K.key().count(), 1);
    /// ```
    pub const fn key(&self) -> &crate::StaticKey {
        &self.0
    }
}

impl<const S: bool> fmt::Debug for StaticKey<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StaticKey").field(&self.0).finish()
    }
}

// SAFETY: #[repr(transparent)] over crate::StaticKey.
unsafe impl<const S: bool> crate::__private::Key for StaticKey<S> {
    #[inline(always)]
    fn __sy_raw(&self) -> &crate::StaticKey {
        &self.0
    }
}

/// A key with initial state `false`, for a `static`.
///
/// ```
/// static K: switchyard::compat::StaticFalseKey =
///     switchyard::compat::new_static_false_key();
/// assert!(!K.is_enabled());
/// ```
pub const fn new_static_false_key() -> StaticFalseKey {
    StaticKey(crate::StaticKey::new(false))
}

/// A key with initial state `true`, for a `static`.
///
/// ```
/// static K: switchyard::compat::StaticTrueKey =
///     switchyard::compat::new_static_true_key();
/// assert!(K.is_enabled());
/// ```
pub const fn new_static_true_key() -> StaticTrueKey {
    StaticKey(crate::StaticKey::new(true))
}

/// Does nothing: the sites of every object are registered before the
/// object's code runs. Kept so that ported code compiles unchanged.
///
/// ```
/// switchyard::compat::global_init();
/// switchyard::compat::global_init();   // any number of times
/// ```
pub fn global_init() {}

/// The number of sites in every registered object of the process (the
/// registry's count; `static-keys` counts the records of the program's
/// section, dummy entries included). 0 in the fallback.
///
/// ```
/// let _ = switchyard::compat::jump_entries_count();
/// ```
pub fn jump_entries_count() -> usize {
    let mut st = crate::sys::switchyard_stats::default();
    // SAFETY: a valid out-pointer.
    if unsafe { crate::sys::switchyard_get_stats(&mut st) } != 0 {
        return 0;
    }
    st.sites as usize
}

#[doc(hidden)]
#[macro_export]
macro_rules! __sy_compat_define_static_key_false {
    ($(#[$attr:meta])* $vis:vis $key:ident) => {
        $(#[$attr])*
        $vis static $key: $crate::compat::StaticFalseKey = $crate::compat::new_static_false_key();
        $crate::__sy_name_record!($key, $crate::compat::StaticFalseKey);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __sy_compat_define_static_key_true {
    ($(#[$attr:meta])* $vis:vis $key:ident) => {
        $(#[$attr])*
        $vis static $key: $crate::compat::StaticTrueKey = $crate::compat::new_static_true_key();
        $crate::__sy_name_record!($key, $crate::compat::StaticTrueKey);
    };
}

/// `static_keys::define_static_key_false!(KEY)`: a `static` compat key
/// with initial state `false` (a visibility and attributes may precede the
/// name here).
///
/// ```
/// switchyard::compat::define_static_key_false!(K);
/// assert!(!K.is_enabled());
/// ```
#[doc(inline)]
pub use crate::__sy_compat_define_static_key_false as define_static_key_false;

/// `static_keys::define_static_key_true!(KEY)`: a `static` compat key
/// with initial state `true`.
///
/// ```
/// switchyard::compat::define_static_key_true!(K);
/// assert!(K.is_enabled());
/// ```
#[doc(inline)]
pub use crate::__sy_compat_define_static_key_true as define_static_key_true;

/// `static_keys::static_branch_likely!(KEY)`: this crate's
/// [`static_branch_likely!`](crate::static_branch_likely), which takes
/// compat keys too.
///
/// ```
/// use switchyard::compat::{define_static_key_true, static_branch_likely};
/// define_static_key_true!(K);
/// # fn main() {
/// assert!(static_branch_likely!(K));
/// # }
/// ```
#[doc(inline)]
pub use crate::static_branch_likely;

/// `static_keys::static_branch_unlikely!(KEY)`: this crate's
/// [`static_branch_unlikely!`](crate::static_branch_unlikely).
///
/// ```
/// use switchyard::compat::{define_static_key_false, static_branch_unlikely};
/// define_static_key_false!(K);
/// # fn main() {
/// assert!(!static_branch_unlikely!(K));
/// # }
/// ```
#[doc(inline)]
pub use crate::static_branch_unlikely;
