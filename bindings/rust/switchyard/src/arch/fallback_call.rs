// SPDX-License-Identifier: MIT
//! The fallback of static calls: targets without a patching backend, or
//! the `no-patching` feature. A call loads the key's target (acquire) and
//! calls it through the pointer, with the same API and results as a
//! patched site (the C headers' SWITCHYARD_NO_PATCHING); a NULL target
//! calls nothing and yields 0, a RET0 target yields 0 without a call.
//! Nothing is registered and no code is written.

/// The call: through the key's pointer.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_site {
    ([$($p:ident)::+] ($($a:expr),*)) => {{
        let __sy_args = $crate::static_call::__private::args(&$($p)::+, ($($a,)*));
        $($p)::+.call_indirect(__sy_args)
    }};
}
