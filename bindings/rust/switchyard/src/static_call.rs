// SPDX-License-Identifier: MIT
//! Static calls: a call whose target is chosen at run time and changed
//! rarely, compiled as a direct call that the library re-targets while
//! other threads run it (the Linux kernel's `static_call()`; the C API is
//! `include/switchyard/static_call.h`).
//!
//! ```
//! use switchyard::{define_static_call, static_call};
//!
//! extern "C" fn double(x: u64) -> u64 { x * 2 }
//! extern "C" fn square(x: u64) -> u64 { x * x }
//!
//! define_static_call!(pub OP: extern "C" fn(u64) -> u64 = double);
//!
//! # fn main() -> Result<(), switchyard::Error> {
//! assert_eq!(static_call!(OP(7)), 14);      // a direct call to double
//! OP.update(square)?;                        // every site now calls square
//! assert_eq!(static_call!(OP(7)), 49);
//! OP.update_ret0()?;                         // every site returns 0
//! assert_eq!(static_call!(OP(7)), 0);
//! # Ok(()) }
//! ```
//!
//! # The site
//!
//! On x86-64 a site is the C header's from its rseq arm on, byte for byte
//! (`arm; guard; payload`, 18 + 5 bytes, then a detour out of line with
//! its unwind information), so the library registers, patches and lists a
//! Rust site exactly as a C one. What a Rust site leaves out of the C
//! site's stack step (`mov %rsp,SV; lea -128(%rsp),%rsp; and $-16,%rsp`
//! before the arm, `mov SV,%rsp` after the payload) is the step over the
//! red zone and the alignment: the Rust reference guarantees what they buy
//! in C. An `asm!` block without `options(nostack)` may use the stack below
//! the stack pointer, and is entered with the stack pointer aligned for a
//! function call (rules `asm.rules.stack-below-sp` and
//! `asm.options.supported-options.nostack`), so the compiler keeps nothing
//! in the red zone across it and aligns the stack in the enclosing
//! function's prologue, once, instead of at every site. The save and
//! restore of rsp stay (for an inline native interrupted after a `push`,
//! as at a C site). `doc/DESIGN.md` ("Rust static call sites") shows the
//! generated code and the measurement. On AArch64 a site is the C header's
//! one `bl` to the site's veneer. Elsewhere, with the `no-patching`
//! feature, and for `extern "C-unwind"` signatures (below), a call loads
//! the key's target (acquire) and calls it through the pointer.
//!
//! # Signatures
//!
//! A call's type is an `extern "C" fn` of up to six arguments, each an
//! integer (`u8`..`u64`, `i8`..`i64`, `usize`, `isize`), `bool`, a
//! raw pointer (`*const T`, `*mut T`), `NonNull<T>` or
//! `Option<NonNull<T>>`, returning nothing or one of those but
//! `NonNull<T>` (a NULL or RET0 target must be able to return nothing
//! or 0): what travels in one integer register each way. Others do not
//! compile ("not a static call signature", "not a static call argument").
//! Targets are `extern "C"` because the site calls them with the C calling
//! convention (Rust's own is unspecified).
//!
//! # Panics in targets
//!
//! Unwinding out of an `asm!` block is undefined behaviour on stable Rust
//! (`asm.rules.unwind`), and the patched call is inside one. So a panic
//! never crosses a patched site: an `extern "C"` target that panics aborts
//! the process (Rust >= 1.81: a panic cannot unwind out of an `extern "C"`
//! function). A call whose type is `extern "C-unwind" fn(...)` may panic
//! through: its sites call through the key's pointer instead, an ordinary
//! indirect call that unwinds (as C++ code calls through the key for a
//! function type that may throw), and `catch_unwind` catches the panic.
//! With the `nightly-asm-unwind` feature (nightly Rust; every crate that
//! calls [`static_call!`](crate::static_call!) then enables
//! `#![feature(asm_unwind)]`: rustc checks that gate in the crate where
//! the `asm!` block lands), such a call gets a patched site too, marked
//! `may_unwind`, which the unwinder crosses with the compiler's own frame
//! information (a Rust site leaves the stack pointer alone) and the
//! detour's.
//!
//! # Inline natives
//!
//! A native registered for a function (`switchyard_static_call_native()`,
//! in C) takes the place of the call at Rust sites too, when it fits their
//! 5 bytes, under the C header's rules.
//!
//! # Safety of updates
//!
//! [`StaticCall::update`] and friends are safe from any thread, at any
//! time: every call through a site goes to the old or the new target,
//! exactly once (the library's protocol, `doc/DESIGN.md` "Static calls").
//! Threads that block every signal are covered; threads created with a raw
//! `clone()` that libc did not register with rseq are not (do not call
//! sites from them while updates run).

use core::cell::UnsafeCell;
use core::ffi::{c_int, c_long, c_void};
use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::{Error, sys};

/// A value that travels in one integer register as a static call's
/// argument: integers, `bool`, raw pointers, `NonNull<T>`,
/// `Option<NonNull<T>>`. Sealed.
///
/// ```
/// use switchyard::static_call::Word;
/// assert_eq!((-1i8).to_word(), u64::MAX);     // sign-extended
/// assert_eq!(255u8.to_word(), 255);            // zero-extended
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a static call argument",
    label = "not an integer, bool or thin pointer",
    note = "a static call passes up to six integers or pointers, each in one register"
)]
pub trait Word: Copy + private::Sealed {
    /// The register's value: integers sign- or zero-extended to 64 bits,
    /// pointers' addresses (exposed: the callee may use them).
    fn to_word(self) -> u64;
}

/// A value that a static call returns in one integer register, and that
/// every bit pattern converts to (a NULL target returns no value: the site
/// then yields whatever the register holds). Sealed.
///
/// ```
/// use switchyard::static_call::RetWord;
/// assert_eq!(<u8 as RetWord>::from_word(0x1ff), 0xff);   // truncated
/// assert!(<bool as RetWord>::from_word(0x100 | 1));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a static call return type",
    label = "not (), an integer, bool or a nullable pointer",
    note = "a static call returns nothing, or an integer or pointer that 0 is a valid value of"
)]
pub trait RetWord: Sized + private::Sealed {
    /// The value from the return register (only the type's width of it
    /// counts, as the C ABI says).
    fn from_word(w: u64) -> Self;
}

mod private {
    pub trait Sealed {}
}

macro_rules! int_words {
    ($($t:ty => $wide:ty),*) => {$(
        impl private::Sealed for $t {}
        impl Word for $t {
            #[inline(always)]
            fn to_word(self) -> u64 {
                self as $wide as u64
            }
        }
        impl RetWord for $t {
            #[inline(always)]
            fn from_word(w: u64) -> Self {
                w as $t
            }
        }
    )*};
}
int_words!(u8 => u64, u16 => u64, u32 => u64, u64 => u64, usize => u64,
           i8 => i64, i16 => i64, i32 => i64, i64 => i64, isize => i64);

impl private::Sealed for bool {}
impl Word for bool {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self as u64
    }
}
impl RetWord for bool {
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        w as u8 != 0
    }
}

impl private::Sealed for () {}
impl RetWord for () {
    #[inline(always)]
    fn from_word(_: u64) -> Self {}
}

impl<T> private::Sealed for *const T {}
impl<T> Word for *const T {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.expose_provenance() as u64
    }
}
impl<T> RetWord for *const T {
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        core::ptr::with_exposed_provenance(w as usize)
    }
}

impl<T> private::Sealed for *mut T {}
impl<T> Word for *mut T {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.expose_provenance() as u64
    }
}
impl<T> RetWord for *mut T {
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        core::ptr::with_exposed_provenance_mut(w as usize)
    }
}

impl<T> private::Sealed for NonNull<T> {}
impl<T> Word for NonNull<T> {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.as_ptr().to_word()
    }
}

impl<T> private::Sealed for Option<NonNull<T>> {}
impl<T> Word for Option<NonNull<T>> {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.map_or(0, |p| p.as_ptr().to_word())
    }
}
impl<T> RetWord for Option<NonNull<T>> {
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        NonNull::new(<*mut T>::from_word(w))
    }
}

/// The type of a static call: `extern "C" fn(A0, .., An) -> R` with n <= 6,
/// each argument a [`Word`] and the result a [`RetWord`], or the same
/// `extern "C-unwind"` (see the module's documentation on panics). Sealed:
/// implemented for those function pointer types only.
///
/// ```
/// use switchyard::static_call::Signature;
/// type Hook = extern "C" fn(u32, *const u8) -> i64;
/// assert_eq!(<Hook as Signature>::ARITY, 2);
/// assert!(!<Hook as Signature>::UNWIND);
/// ```
///
/// # Safety
///
/// Implemented by this crate only (sealed): `Self` is a function pointer
/// type of the C ABI whose arguments and result each travel in one integer
/// register, as the sites' asm passes them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a static call signature",
    note = "a static call's type is `extern \"C\" fn(..) -> R` (or `extern \"C-unwind\"`) with \
            up to six integer or pointer arguments and a return type of (), an integer, bool \
            or a nullable pointer"
)]
pub unsafe trait Signature: Copy + 'static + private::Sealed {
    /// The arguments, as a tuple.
    type Args: Copy;
    /// The result.
    type Ret: RetWord;
    /// The number of arguments.
    const ARITY: usize;
    /// Whether the target may unwind (`extern "C-unwind"`).
    const UNWIND: bool;
    /// The arguments' registers, in order (the rest 0).
    fn words(args: Self::Args) -> [u64; 6];
    /// The function, type-erased as the key holds it.
    fn erase(self) -> unsafe extern "C" fn();
    /// Calls `f` with `args`.
    ///
    /// # Safety
    /// `f` is a function of this type, erased.
    unsafe fn call_erased(f: unsafe extern "C" fn(), args: Self::Args) -> Self::Ret;
}

macro_rules! signatures {
    ($abi:literal, $unwind:literal; $n:literal; $($a:ident $i:tt),*) => {
        impl<R: RetWord, $($a: Word),*> private::Sealed for extern $abi fn($($a),*) -> R {}
        // SAFETY: a function pointer type of the C ABI with word arguments
        // and result, as the trait requires.
        unsafe impl<R: RetWord + 'static, $($a: Word + 'static),*> Signature
            for extern $abi fn($($a),*) -> R
        {
            type Args = ($($a,)*);
            type Ret = R;
            const ARITY: usize = $n;
            const UNWIND: bool = $unwind;
            #[inline(always)]
            #[allow(unused_mut, unused_variables)]
            fn words(args: Self::Args) -> [u64; 6] {
                let mut w = [0u64; 6];
                $(w[$i] = args.$i.to_word();)*
                w
            }
            #[inline(always)]
            fn erase(self) -> unsafe extern "C" fn() {
                // SAFETY: function pointers of any signature have one
                // size and representation; the key stores them erased, as
                // C does.
                unsafe { core::mem::transmute::<Self, unsafe extern "C" fn()>(self) }
            }
            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn call_erased(f: unsafe extern "C" fn(), args: Self::Args) -> R {
                // SAFETY: the caller's guarantee: f has this type.
                let f = unsafe { core::mem::transmute::<unsafe extern "C" fn(), Self>(f) };
                f($(args.$i),*)
            }
        }
    };
}

macro_rules! signatures_of_abi {
    ($abi:literal, $unwind:literal) => {
        signatures!($abi, $unwind; 0;);
        signatures!($abi, $unwind; 1; A0 0);
        signatures!($abi, $unwind; 2; A0 0, A1 1);
        signatures!($abi, $unwind; 3; A0 0, A1 1, A2 2);
        signatures!($abi, $unwind; 4; A0 0, A1 1, A2 2, A3 3);
        signatures!($abi, $unwind; 5; A0 0, A1 1, A2 2, A3 3, A4 4);
        signatures!($abi, $unwind; 6; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5);
    };
}
signatures_of_abi!("C", false);
signatures_of_abi!("C-unwind", true);

/// A static call's key: the C library's `struct static_call_key` (the
/// current target), in a cell that a `static` can hold, typed by the
/// call's [`Signature`] `F`.
///
/// Define one with [`define_static_call!`](crate::define_static_call!) (or the `_null` and `_ret0`
/// forms), call it with [`static_call!`](crate::static_call!), re-target it with the methods.
/// Its address is the C struct's (`#[repr(transparent)]`): a key that C
/// defines (`DEFINE_STATIC_CALL(name, f)`, symbol `__SCK__name`) is
/// declared in Rust as an extern static of this type, and one that Rust
/// defines is C's with `#[unsafe(export_name = "__SCK__name")]`:
///
/// ```
/// use switchyard::{define_static_call, static_call};
/// extern "C" fn log_nothing(_level: i32, _msg: *const u8) {}
///
/// // C: `DECLARE_STATIC_CALL(log_hook, c_log_fn);` then
/// // static_call(log_hook)(level, msg) calls the same target.
/// define_static_call!(#[unsafe(export_name = "__SCK__log_hook")]
///                     pub LOG_HOOK: extern "C" fn(i32, *const u8) = log_nothing);
/// # fn main() {
/// static_call!(LOG_HOOK(1, c"hello".as_ptr().cast()));
/// # }
/// ```
///
/// A key defined in C is declared as an extern static; its type there
/// must be the C function's:
///
/// ```ignore
/// unsafe extern "C" {
///     #[link_name = "__SCK__encoder"]
///     safe static ENCODER: switchyard::StaticCall<extern "C" fn(*const u8, usize) -> isize>;
/// }
/// let n = switchyard::static_call!(ENCODER(buf.as_ptr(), buf.len()));
/// ```
#[repr(transparent)]
pub struct StaticCall<F: Signature> {
    raw: UnsafeCell<sys::static_call_key>,
    _f: PhantomData<F>,
}

// SAFETY: the C library changes the key under its patch lock with atomic
// stores; this crate reads `func` atomically only.
unsafe impl<F: Signature> Sync for StaticCall<F> {}
// SAFETY: as above; nothing in the key is tied to a thread.
unsafe impl<F: Signature> Send for StaticCall<F> {}

/// What a static call's key holds, as [`StaticCall::target`] reports it.
///
/// ```
/// use switchyard::static_call::Target;
/// extern "C" fn f() {}
/// let t: Target<extern "C" fn()> = Target::Func(f);
/// assert!(matches!(t, Target::Func(_)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target<F> {
    /// No target: a call does nothing (see [`StaticCall::update_null`]).
    Null,
    /// The library's `__static_call_return0`: a call returns 0.
    Ret0,
    /// A function.
    Func(F),
}

impl<F: Signature> fmt::Debug for Target<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Null => f.write_str("Null"),
            Target::Ret0 => f.write_str("Ret0"),
            Target::Func(g) => write!(f, "Func({:p})", g.erase()),
        }
    }
}

/// `F` and the key's erased pointer, for `const` construction (transmute
/// does not take a generic type in a `const fn`; a union read does).
union Erase<F: Copy> {
    f: F,
    raw: Option<unsafe extern "C" fn()>,
}

fn ret0_erased() -> unsafe extern "C" fn() {
    // SAFETY: function pointers of any signature share one representation.
    unsafe {
        core::mem::transmute::<unsafe extern "C" fn() -> c_long, unsafe extern "C" fn()>(
            sys::__static_call_return0,
        )
    }
}

impl<F: Signature> StaticCall<F> {
    /// A key whose target is `f`. In a `static` through
    /// [`define_static_call!`](crate::define_static_call!); `const` so that it is built at compile
    /// time.
    ///
    /// ```
    /// use switchyard::StaticCall;
    /// extern "C" fn one() -> u32 { 1 }
    /// static K: StaticCall<extern "C" fn() -> u32> = StaticCall::new(one);
    /// assert!(matches!(K.target(), switchyard::static_call::Target::Func(_)));
    /// ```
    pub const fn new(f: F) -> Self {
        // SAFETY: F is a function pointer type (Signature is sealed).
        let raw = unsafe { Erase { f }.raw };
        Self::from_raw(raw)
    }

    /// A key with no target (the kernel's `DEFINE_STATIC_CALL_NULL`): a
    /// call does nothing until [`update`](Self::update).
    ///
    /// ```
    /// use switchyard::{StaticCall, static_call::Target};
    /// static K: StaticCall<extern "C" fn(u64)> = StaticCall::null();
    /// assert_eq!(K.target(), Target::Null);
    /// ```
    pub const fn null() -> Self {
        Self::from_raw(None)
    }

    /// A key whose target returns 0 whatever it is passed
    /// (`DEFINE_STATIC_CALL_RET0`: the library's `__static_call_return0`).
    ///
    /// ```
    /// use switchyard::{StaticCall, static_call::Target};
    /// static K: StaticCall<extern "C" fn(u64) -> u64> = StaticCall::ret0();
    /// assert_eq!(K.target(), Target::Ret0);
    /// ```
    pub const fn ret0() -> Self {
        // SAFETY: a transmute between function pointer types.
        let f = unsafe {
            core::mem::transmute::<unsafe extern "C" fn() -> c_long, unsafe extern "C" fn()>(
                sys::__static_call_return0,
            )
        };
        Self::from_raw(Some(f))
    }

    const fn from_raw(func: Option<unsafe extern "C" fn()>) -> Self {
        StaticCall {
            raw: UnsafeCell::new(sys::static_call_key {
                func,
                sy_reserved: [core::ptr::null_mut(); 3],
            }),
            _f: PhantomData,
        }
    }

    /// The C struct, for C functions that take a
    /// `struct static_call_key *`.
    ///
    /// ```
    /// use switchyard::StaticCall;
    /// static K: StaticCall<extern "C" fn()> = StaticCall::null();
    /// assert!(unsafe { switchyard::sys::static_call_load(K.as_ptr()) }.is_none());
    /// ```
    pub const fn as_ptr(&self) -> *mut sys::static_call_key {
        self.raw.get()
    }

    /// Makes `f` the target (`static_call_update()`): every site of the
    /// key, in every loaded object, calls `f` once this returns; a call
    /// running meanwhile goes to the old target or to `f`, once. Errors:
    /// `EDEADLK` from a signal handler that interrupted a switchyard call
    /// on the same thread; `EFAULT` when a site held unexpected bytes;
    /// `EBUSY` when a debugger's breakpoint on a site's guard forbids
    /// rewriting it; the write path's errno when no way to write code was
    /// allowed (then nothing changed). A later step that fails is not an
    /// error: the target is set, and the key's sites call it through their
    /// detour (reported).
    ///
    /// ```
    /// use switchyard::{define_static_call, static_call};
    /// extern "C" fn a() -> u32 { 1 }
    /// extern "C" fn b() -> u32 { 2 }
    /// define_static_call!(K: extern "C" fn() -> u32 = a);
    /// # fn main() {
    /// K.update(b).unwrap();
    /// assert_eq!(static_call!(K()), 2);
    /// # }
    /// ```
    pub fn update(&self, f: F) -> Result<(), Error> {
        self.update_erased(Some(f.erase()))
    }

    /// Removes the target (`static_call_update(name, NULL)`): a call does
    /// nothing; one with a result yields an unspecified value of its type
    /// (0 through the detour or the fallback, whatever the register held
    /// at a patched site: use [`update_ret0`](Self::update_ret0) for 0).
    /// Errors as [`update`](Self::update).
    ///
    /// ```
    /// use switchyard::{define_static_call, static_call};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// static N: AtomicU32 = AtomicU32::new(0);
    /// extern "C" fn count() { N.fetch_add(1, Ordering::Relaxed); }
    /// define_static_call!(K: extern "C" fn() = count);
    /// # fn main() {
    /// K.update_null().unwrap();
    /// static_call!(K());
    /// assert_eq!(N.load(Ordering::Relaxed), 0);
    /// # }
    /// ```
    pub fn update_null(&self) -> Result<(), Error> {
        self.update_erased(None)
    }

    /// Makes the library's `__static_call_return0` the target: a call
    /// returns 0 (a patched x86-64 site holds `xor %eax,%eax` in place of
    /// the call). Errors as [`update`](Self::update).
    ///
    /// ```
    /// use switchyard::{define_static_call, static_call};
    /// extern "C" fn seven(_: u64) -> u64 { 7 }
    /// define_static_call!(K: extern "C" fn(u64) -> u64 = seven);
    /// # fn main() {
    /// K.update_ret0().unwrap();
    /// assert_eq!(static_call!(K(1)), 0);
    /// # }
    /// ```
    pub fn update_ret0(&self) -> Result<(), Error> {
        self.update_erased(Some(ret0_erased()))
    }

    /// Sets the target to `t` (any [`Target`]).
    ///
    /// ```
    /// use switchyard::{StaticCall, static_call::Target};
    /// static K: StaticCall<extern "C" fn() -> i32> = StaticCall::null();
    /// K.set(Target::Ret0).unwrap();
    /// assert_eq!(K.target(), Target::Ret0);
    /// ```
    pub fn set(&self, t: Target<F>) -> Result<(), Error> {
        match t {
            Target::Null => self.update_null(),
            Target::Ret0 => self.update_ret0(),
            Target::Func(f) => self.update(f),
        }
    }

    fn update_erased(&self, f: Option<unsafe extern "C" fn()>) -> Result<(), Error> {
        // SAFETY: a live key (&self), whose sites call functions of type F
        // (or nothing, or return0, which ignores its arguments); the
        // library serialises updates and writes under running threads.
        Error::check(unsafe { sys::__static_call_update(self.as_ptr(), f) } as c_int)
    }

    /// The current target (`static_call_query()`): an acquire load, so a
    /// thread that sees a new target also sees what the updater wrote
    /// before the update.
    ///
    /// ```
    /// use switchyard::{StaticCall, static_call::Target};
    /// extern "C" fn f() {}
    /// static K: StaticCall<extern "C" fn()> = StaticCall::new(f);
    /// assert_eq!(K.target(), Target::Func(f as extern "C" fn()));
    /// ```
    pub fn target(&self) -> Target<F> {
        // SAFETY: a live key.
        match unsafe { sys::static_call_load(self.as_ptr()) } {
            None => Target::Null,
            Some(g) if g as usize == ret0_erased() as usize => Target::Ret0,
            // SAFETY: the key holds a function of type F (what update()
            // and the constructors store; C code sharing the key must keep
            // to the type the extern declaration gives it).
            Some(g) => Target::Func(unsafe { Erase::<F> { raw: Some(g) }.f }),
        }
    }

    /// Calls the current target through the key's pointer: what a site
    /// does where it is not patched (the fallback, `extern "C-unwind"`
    /// calls). [`static_call!`](crate::static_call!) is the patched form; this one is for
    /// callers that hold a `&StaticCall` rather than the static's path.
    ///
    /// ```
    /// use switchyard::{StaticCall, define_static_call};
    /// extern "C" fn add(a: i32, b: i32) -> i32 { a + b }
    /// define_static_call!(K: extern "C" fn(i32, i32) -> i32 = add);
    /// fn through(k: &StaticCall<extern "C" fn(i32, i32) -> i32>) -> i32 {
    ///     k.call_indirect((2, 3))
    /// }
    /// assert_eq!(through(&K), 5);
    /// ```
    #[inline(always)]
    pub fn call_indirect(&self, args: F::Args) -> F::Ret {
        // SAFETY: a live key.
        match unsafe { sys::static_call_load(self.as_ptr()) } {
            // No target: nothing to call (C would call address 0).
            None => F::Ret::from_word(0),
            // return0 through F's type would be a call through a pointer
            // of another type: its result instead.
            Some(g) if g as usize == ret0_erased() as usize => F::Ret::from_word(0),
            // SAFETY: as in target(): the key holds a function of type F.
            Some(g) => unsafe { F::call_erased(g, args) },
        }
    }

    /// The static call's sites that the library patches now, in every
    /// registered object (`switchyard_for_each_static_call()`), with the
    /// name `switchyard list` shows; `None` when it has none (a key no
    /// registered site names; every key in the fallback).
    ///
    /// ```
    /// use switchyard::{define_static_call, static_call};
    /// extern "C" fn f() -> u8 { 1 }
    /// define_static_call!(LISTED: extern "C" fn() -> u8 = f);
    /// # fn main() {
    /// assert_eq!(static_call!(LISTED()), 1);
    /// if let Some(c) = LISTED.info() {
    ///     assert!(c.name.ends_with("LISTED"));
    ///     assert!(c.sites >= 1);
    /// }
    /// # }
    /// ```
    pub fn info(&self) -> Option<CallInfo> {
        let me = self.as_ptr() as usize;
        static_calls().into_iter().find(|c| c.addr == me)
    }
}

impl<F: Signature> fmt::Debug for StaticCall<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticCall")
            .field("addr", &self.as_ptr())
            .field("target", &self.target())
            .finish()
    }
}

/// A static call as [`static_calls`] lists it.
///
/// ```
/// let c = switchyard::static_call::CallInfo { name: "app::HOOK".into(),
///     target: "app::fast".into(), sites: 2, addr: 0x4000 };
/// assert_eq!(c.sites, 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    /// The call's name, as `switchyard list` shows it (demangled:
    /// `crate::module::HOOK`; a C call's without its `__SCK__` prefix).
    pub name: String,
    /// The current target's name: its symbol, `(none)` for no target, or
    /// `func@0x...`.
    pub target: String,
    /// Its patched sites in every registered object.
    pub sites: usize,
    /// The key's address.
    pub addr: usize,
}

/// Every static call that has patched sites in a registered object of
/// this process (Rust and C alike), in key address order
/// (`switchyard_for_each_static_call()`). Empty in the fallback.
///
/// ```
/// for c in switchyard::static_call::static_calls() {
///     println!("{} -> {} ({} sites)", c.name, c.target, c.sites);
/// }
/// ```
pub fn static_calls() -> Vec<CallInfo> {
    unsafe extern "C" fn one(c: *const sys::switchyard_call_info, arg: *mut c_void) -> c_int {
        // SAFETY: the library passes a valid record for the call, and arg
        // is the Vec below.
        let (c, v) = unsafe { (&*c, &mut *(arg as *mut Vec<CallInfo>)) };
        let s = |p: *const core::ffi::c_char| {
            // SAFETY: the library's strings are NUL-terminated and live
            // while the callback runs.
            if p.is_null() {
                String::new()
            } else {
                unsafe { core::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            }
        };
        v.push(CallInfo {
            name: s(c.name),
            target: s(c.target),
            sites: c.sites,
            addr: c.key as usize,
        });
        0
    }
    let mut v: Vec<CallInfo> = Vec::new();
    // SAFETY: the callback matches the C type and reads only what the
    // library hands it, while the call runs.
    unsafe {
        sys::switchyard_for_each_static_call(Some(one), &raw mut v as *mut c_void);
    }
    v
}

/// Defines a static call: a `static` of type [`StaticCall<F>`] whose
/// target is `target` (and, on patching targets, a name record so that a
/// stripped file keeps the call's name). Attributes and a visibility may
/// precede the name; the type is the call's [`Signature`].
///
/// ```
/// use switchyard::{define_static_call, static_call};
/// extern "C" fn checksum_scalar(p: *const u8, n: usize) -> u32 {
///     (0..n).map(|i| unsafe { *p.add(i) } as u32).sum()
/// }
/// define_static_call!(
///     /// The checksum in use.
///     pub CHECKSUM: extern "C" fn(*const u8, usize) -> u32 = checksum_scalar);
/// # fn main() {
/// let b = [1u8, 2, 3];
/// assert_eq!(static_call!(CHECKSUM(b.as_ptr(), b.len())), 6);
/// # }
/// ```
#[macro_export]
macro_rules! define_static_call {
    ($(#[$attr:meta])* $vis:vis $name:ident : $t:ty = $target:expr) => {
        $(#[$attr])*
        $vis static $name: $crate::StaticCall<$t> = $crate::StaticCall::<$t>::new($target);
        $crate::__sy_name_record!($name, $crate::StaticCall<$t>);
    };
}

/// Defines a static call with no target (`DEFINE_STATIC_CALL_NULL`): a
/// call does nothing until [`StaticCall::update`] gives it one.
///
/// ```
/// use switchyard::{define_static_call_null, static_call};
/// define_static_call_null!(pub ON_EVENT: extern "C" fn(u32));
/// # fn main() {
/// static_call!(ON_EVENT(3));      // nothing to call: does nothing
/// # }
/// ```
#[macro_export]
macro_rules! define_static_call_null {
    ($(#[$attr:meta])* $vis:vis $name:ident : $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::StaticCall<$t> = $crate::StaticCall::<$t>::null();
        $crate::__sy_name_record!($name, $crate::StaticCall<$t>);
    };
}

/// Defines a static call whose target returns 0 (`DEFINE_STATIC_CALL_RET0`).
///
/// ```
/// use switchyard::{define_static_call_ret0, static_call};
/// define_static_call_ret0!(pub FILTER: extern "C" fn(*const u8) -> i32);
/// # fn main() {
/// assert_eq!(static_call!(FILTER(core::ptr::null())), 0);
/// # }
/// ```
#[macro_export]
macro_rules! define_static_call_ret0 {
    ($(#[$attr:meta])* $vis:vis $name:ident : $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::StaticCall<$t> = $crate::StaticCall::<$t>::ret0();
        $crate::__sy_name_record!($name, $crate::StaticCall<$t>);
    };
}

/// Calls a static call: `static_call!(NAME(args...))`, the kernel's
/// `static_call(NAME)(args...)`. `NAME` is a path to a `static`
/// [`StaticCall`] (defined by
/// [`define_static_call!`](crate::define_static_call!), or an extern
/// static of a C key); the arguments are checked against its type as a
/// call's are (0 to 6 of them). Where sites are patched it compiles to the
/// site (x86-64: an rseq arm, a guard and a direct `call`; AArch64: one
/// `bl`), else to a load of the target and a call through it.
///
/// A plain call: usable anywhere a call to the targets is, signal
/// handlers included (if the targets are async-signal-safe).
///
/// ```
/// use switchyard::{define_static_call, static_call};
/// extern "C" fn mix(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
///     a ^ b << 1 ^ c << 2 ^ d << 3 ^ e << 4 ^ f << 5
/// }
/// define_static_call!(MIX: extern "C" fn(u64, u64, u64, u64, u64, u64) -> u64 = mix);
/// # fn main() {
/// assert_eq!(static_call!(MIX(1, 1, 1, 1, 1, 1)), mix(1, 1, 1, 1, 1, 1));
/// # }
/// ```
///
/// Other signatures are refused at compile time:
///
/// ```compile_fail,E0277
/// use switchyard::define_static_call;
/// extern "C" fn half(x: f64) -> f64 { x / 2.0 }
/// define_static_call!(H: extern "C" fn(f64) -> f64 = half);  // not words
/// ```
///
/// ```compile_fail,E0308
/// use switchyard::{define_static_call, static_call};
/// extern "C" fn f(x: u32) -> u32 { x }
/// define_static_call!(F: extern "C" fn(u32) -> u32 = f);
/// # fn main() {
/// static_call!(F(1, 2));          // two arguments to a one-argument call
/// # }
/// ```
///
/// ```compile_fail,E0277
/// use switchyard::define_static_call;
/// extern "C" fn by_ref(x: &u32) -> u32 { *x }      // a reference: use a pointer
/// define_static_call!(R: extern "C" fn(&u32) -> u32 = by_ref);
/// ```
///
/// ```compile_fail
/// use switchyard::{define_static_call, static_call};
/// extern "C" fn seven(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8) {}
/// define_static_call!(S: extern "C" fn(u8, u8, u8, u8, u8, u8, u8) = seven);
/// ```
#[macro_export]
macro_rules! static_call {
    ($($p:ident)::+ ($($a:expr),* $(,)?)) => {
        $crate::__sy_sc_site!([$($p)::+] ($($a),*))
    };
}

/// What the static call macros expand to. Not API.
#[doc(hidden)]
pub mod __private {
    use super::{Signature, StaticCall};
    use crate::sys;

    /// `struct sy__sc_meta`, writable (in .data, never .rodata: see the
    /// C header's note on copy relocations).
    #[repr(C)]
    pub struct Meta {
        key: *mut sys::static_call_key,
        kind: core::cell::UnsafeCell<core::ffi::c_ulong>,
    }

    // SAFETY: read-only after link time (the cell is for the section).
    unsafe impl Sync for Meta {}

    impl Meta {
        /// An ordinary site's meta: 5 bytes of room, the payload of a
        /// `call rel32`.
        pub const fn new<F: Signature>(key: *const StaticCall<F>) -> Self {
            Meta {
                key: key.cast_mut().cast(),
                kind: core::cell::UnsafeCell::new(5),
            }
        }
    }

    /// The arguments, typed by the key's signature (a call's coercions
    /// and errors).
    #[inline(always)]
    pub fn args<F: Signature>(_: &StaticCall<F>, a: F::Args) -> F::Args {
        a
    }

    /// Their registers.
    #[inline(always)]
    pub fn words<F: Signature>(_: &StaticCall<F>, a: F::Args) -> [u64; 6] {
        F::words(a)
    }

    /// The result from the return register.
    #[inline(always)]
    pub fn ret<F: Signature>(_: &StaticCall<F>, w: u64) -> F::Ret {
        <F::Ret as super::RetWord>::from_word(w)
    }

    /// Whether the call may unwind (then not through an asm! site).
    #[inline(always)]
    pub const fn unwinds<F: Signature>(_: &StaticCall<F>) -> bool {
        F::UNWIND
    }
}

#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    not(feature = "no-patching")
))]
#[path = "arch/x86_64_call.rs"]
mod arch;
#[cfg(all(
    target_os = "linux",
    target_arch = "aarch64",
    not(feature = "no-patching")
))]
#[path = "arch/aarch64_call.rs"]
mod arch;
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(feature = "no-patching")
)))]
#[path = "arch/fallback_call.rs"]
mod arch;
