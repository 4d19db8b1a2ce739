// SPDX-License-Identifier: MIT
//! The fallback: targets without a patching backend, or the `no-patching`
//! feature. A branch is a relaxed load of the key's count, a test and a
//! branch, with the same API and semantics as a patched site (the C
//! headers' SWITCHYARD_NO_PATCHING). Nothing is registered and no code is
//! written: enable and disable change the count only.

/// The branch: the key's state, loaded (relaxed) and tested.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_branch {
    ($key:path, $branch:literal, $on_jump:literal, $on_fall:literal) => {
        $crate::__private::Key::__sy_raw(&$key).is_enabled()
    };
}
