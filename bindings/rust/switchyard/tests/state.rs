// SPDX-License-Identifier: MIT
//! The key state machine through the Rust API: states, counts, the C
//! semantics of enable/disable/inc/dec and their errors, and what the
//! branch macros return for each state (both layouts, both initial
//! values, compat keys).

use switchyard::{
    Error, StaticKey, define_static_key_false, define_static_key_true, static_branch_likely,
    static_branch_unlikely,
};

define_static_key_false!(F);
define_static_key_true!(T);

#[inline(never)]
fn f_unlikely() -> bool {
    static_branch_unlikely!(F)
}

#[inline(never)]
fn f_likely() -> bool {
    static_branch_likely!(F)
}

#[inline(never)]
fn t_unlikely() -> bool {
    static_branch_unlikely!(T)
}

#[inline(never)]
fn t_likely() -> bool {
    static_branch_likely!(T)
}

#[test]
fn branches_follow_their_key() {
    // One test for both keys: the tests of this file run in parallel, and
    // F and T are changed here only.
    assert!(!F.is_enabled() && !F.initial_enabled());
    assert!(!f_unlikely() && !f_likely());
    assert!(T.is_enabled() && T.initial_enabled());
    assert!(t_unlikely() && t_likely());
    for round in 0..50 {
        F.enable().unwrap();
        T.disable().unwrap();
        assert!(f_unlikely() && f_likely(), "round {round}");
        assert!(!t_unlikely() && !t_likely(), "round {round}");
        F.disable().unwrap();
        T.enable().unwrap();
        assert!(!f_unlikely() && !f_likely(), "round {round}");
        assert!(t_unlikely() && t_likely(), "round {round}");
    }
    // reference counts: sites follow count > 0
    F.inc().unwrap();
    F.inc().unwrap();
    assert!(f_unlikely() && f_likely());
    F.dec().unwrap();
    assert!(f_unlikely(), "one reference left");
    F.dec().unwrap();
    assert!(!f_unlikely() && !f_likely());
    assert!(!F.initial_enabled() && T.initial_enabled());
}

#[test]
fn enable_disable_are_idempotent_and_set_the_count() {
    define_static_key_false!(K);
    assert_eq!(K.count(), 0);
    K.enable().unwrap();
    K.enable().unwrap();
    assert_eq!(K.count(), 1);
    K.disable().unwrap();
    K.disable().unwrap();
    assert_eq!(K.count(), 0);
    assert!(!K.is_enabled());
}

#[test]
fn inc_dec_count_references() {
    define_static_key_false!(K);
    for n in 1..=5 {
        K.inc().unwrap();
        assert_eq!(K.count(), n);
        assert!(K.is_enabled());
    }
    for n in (0..5).rev() {
        K.dec().unwrap();
        assert_eq!(K.count(), n);
    }
    assert!(!K.is_enabled());
}

#[test]
fn dec_below_zero_is_einval_and_changes_nothing() {
    define_static_key_false!(K);
    let e = K.dec().unwrap_err();
    assert_eq!(e.errno(), Error::EINVAL);
    assert_eq!(K.count(), 0);
    // again: the same error (reported once, refused every time)
    assert_eq!(K.dec().unwrap_err().errno(), Error::EINVAL);
    // a key defined true starts with one reference
    define_static_key_true!(J);
    assert_eq!(J.count(), 1);
    J.dec().unwrap();
    assert_eq!(J.dec().unwrap_err(), e);
}

#[test]
fn enable_or_disable_of_a_counted_key_is_ebusy() {
    define_static_key_false!(K);
    K.inc().unwrap();
    K.inc().unwrap();
    assert_eq!(K.disable().unwrap_err().errno(), Error::EBUSY);
    assert_eq!(K.enable().unwrap_err().errno(), Error::EBUSY);
    assert_eq!(K.count(), 2, "unchanged by the refused calls");
    K.dec().unwrap();
    K.disable().unwrap();
    assert_eq!(K.count(), 0);
}

#[test]
fn fast_inc_takes_a_reference_only_when_enabled() {
    define_static_key_false!(K);
    assert!(!K.fast_inc_not_disabled());
    assert_eq!(K.count(), 0);
    K.inc().unwrap();
    assert!(K.fast_inc_not_disabled());
    assert_eq!(K.count(), 2);
}

#[test]
fn a_key_without_sites_changes_state_only() {
    // on the heap: no site can name it; its count works all the same
    let k = Box::new(StaticKey::new(false));
    k.enable().unwrap();
    assert!(k.is_enabled());
    assert!(k.sites().is_empty());
    k.disable().unwrap();
}

#[test]
fn errors_read_as_errnos() {
    define_static_key_false!(K);
    let e = K.dec().unwrap_err();
    assert_eq!(format!("{e:?}"), "Error(EINVAL)");
    assert!(e.to_string().contains("EINVAL"), "{e}");
    let io = std::io::Error::from(e);
    assert_eq!(io.raw_os_error(), Some(22));
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(!boxed.to_string().is_empty());
}

mod compat {
    use switchyard::compat::{
        StaticFalseKey, define_static_key_false, define_static_key_true, global_init,
        new_static_false_key, static_branch_likely, static_branch_unlikely,
    };

    define_static_key_false!(CF);
    define_static_key_true!(CT);
    static CN: StaticFalseKey = new_static_false_key();

    #[inline(never)]
    fn cf() -> bool {
        static_branch_unlikely!(CF)
    }

    #[inline(never)]
    fn ct() -> bool {
        static_branch_likely!(CT)
    }

    #[inline(never)]
    fn cn() -> bool {
        static_branch_unlikely!(CN)
    }

    #[test]
    fn the_static_keys_names_work_as_there() {
        global_init();
        assert!(!CF.initial_enabled() && CT.initial_enabled());
        assert!(!cf() && ct() && !cn());
        // static-keys' calls are unsafe; ported code keeps its blocks
        #[allow(unused_unsafe)]
        unsafe {
            CF.enable();
            CT.disable();
            CN.enable();
        }
        assert!(cf() && !ct() && cn());
        assert!(CF.is_enabled() && !CT.is_enabled());
        // the full API underneath
        CF.key().inc().unwrap();
        assert_eq!(CF.key().count(), 2);
        CF.key().dec().unwrap();
        unsafe {
            CF.disable();
            CT.enable();
        }
        assert!(!cf() && ct());
        if switchyard::PATCHING {
            assert!(switchyard::compat::jump_entries_count() > 0);
        }
    }
}
