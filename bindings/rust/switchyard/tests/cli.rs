// SPDX-License-Identifier: MIT
//! The `switchyard` tool on a Rust program (this test's own executable):
//! `list FILE` names its keys and functions as the source spells them,
//! `SWITCHYARD_KEYS` sets a key at start-up, `list PID` and `set PID` see
//! and flip a running process's keys, `prepatch` writes the start-up forms
//! into a copy of the file.
//!
//! The tool: `SWITCHYARD_TOOL`, else the repository's `build/tools/switchyard`.
//! Without it the tests say SKIP and pass, unless `SWITCHYARD_TEST_REQUIRE_TOOL`
//! is set (the repository's test suite sets both).
//!
//! The programs it inspects are this test binary again, run with
//! `SY_CLI_CHILD` naming what to do (the `child_mode` test below; a no-op
//! otherwise).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use switchyard::{PATCHING, define_static_key_false, static_branch_unlikely};

define_static_key_false!(LISTED);
define_static_key_false!(ENV_KEY);
define_static_key_false!(LIVE_KEY);

#[inline(never)]
fn listed_site() -> bool {
    static_branch_unlikely!(LISTED)
}

#[inline(never)]
fn env_site() -> bool {
    static_branch_unlikely!(ENV_KEY)
}

#[inline(never)]
fn live_site() -> bool {
    static_branch_unlikely!(LIVE_KEY)
}

fn tool() -> Option<PathBuf> {
    switchyard_testsupport::tool()
}

fn run_tool(tool: &PathBuf, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .output()
        .expect("run the switchyard tool");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "switchyard {args:?}: {}\n{text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// This test binary, run as a child doing `what` (through the emulator
/// of `SY_TEST_EMULATOR`, its words space-separated, in a cross build run
/// under qemu-user: the test suite's convention).
fn spawn_child(exe: &std::path::Path, what: &str) -> Command {
    let mut c = switchyard_testsupport::command(exe);
    c.args(["child_mode", "--exact", "--nocapture", "--test-threads=1"])
        .env("SY_CLI_CHILD", what)
        .env_remove("SWITCHYARD_KEYS")
        .env_remove("SWITCHYARD_CONTROL");
    c
}

/// What a child does; a no-op in the normal run.
#[test]
fn child_mode() {
    let Ok(what) = std::env::var("SY_CLI_CHILD") else {
        return;
    };
    match what.as_str() {
        // the state of ENV_KEY, and what its site says
        "report" => println!("STATE {} {}", ENV_KEY.is_enabled(), env_site()),
        // wait (20 s at most) until someone enables LIVE_KEY
        "serve" | "serve_api" => {
            if what == "serve_api" {
                // the socket from code, no SWITCHYARD_CONTROL
                switchyard::control_start().expect("control_start");
                switchyard::control_start().expect("idempotent");
            }
            println!("READY {}", live_site());
            let t0 = Instant::now();
            while !(LIVE_KEY.is_enabled() && live_site()) && t0.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            println!("FLIPPED {}", live_site());
        }
        _ => panic!("unknown child {what}"),
    }
}

#[test]
fn list_file_names_rust_keys_and_functions() {
    let Some(tool) = tool() else { return };
    if !PATCHING {
        return;
    }
    let _ = (listed_site(), env_site(), live_site());
    let exe = std::env::current_exe().unwrap();
    let out = run_tool(&tool, &["list", exe.to_str().unwrap()]);
    for want in [
        "key cli::LISTED ",
        "key cli::ENV_KEY ",
        "key cli::LIVE_KEY ",
        "cli::listed_site+0x",
    ] {
        assert!(out.contains(want), "no '{want}' in:\n{out}");
    }
    // no mangled name or hash is left in the keys' lines
    for l in out.lines().filter(|l| l.contains("cli::")) {
        assert!(!l.contains("_ZN") && !l.contains("17h"), "{l}");
    }
    // JSON too
    let json = run_tool(&tool, &["list", exe.to_str().unwrap(), "--json"]);
    assert!(json.contains("\"cli::LISTED\""), "{json}");
}

#[test]
fn switchyard_keys_sets_a_rust_key_at_start_up() {
    if !PATCHING {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let off = spawn_child(&exe, "report").output().unwrap();
    let off = String::from_utf8_lossy(&off.stdout);
    assert!(off.contains("STATE false false"), "{off}");
    for spec in ["cli::ENV_KEY=on", "cli::ENV_*=on", "+cli::ENV_KEY"] {
        let on = spawn_child(&exe, "report")
            .env("SWITCHYARD_KEYS", spec)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&on.stdout);
        assert!(
            text.contains("STATE true true"),
            "SWITCHYARD_KEYS={spec}: {text}"
        );
    }
}

#[test]
fn list_and_set_a_running_rust_process() {
    list_and_set(true);
}

#[test]
fn list_and_set_a_rust_process_that_started_control_itself() {
    list_and_set(false);
}

/// env: the child serves through SWITCHYARD_CONTROL=1, else it calls
/// switchyard::control_start() (and has no SWITCHYARD_CONTROL).
fn list_and_set(env: bool) {
    let Some(tool) = tool() else { return };
    if !PATCHING {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut cmd = spawn_child(&exe, if env { "serve" } else { "serve_api" });
    if env {
        cmd.env("SWITCHYARD_CONTROL", "1");
    }
    let mut c = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let pid = c.id().to_string();
    let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
    // (libtest may print "test child_mode ... " before it on the line)
    let ready = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find(|l| l.contains("READY"));
    assert!(
        ready.as_deref().is_some_and(|l| l.ends_with("READY false")),
        "{ready:?}"
    );
    // the socket may come up just after main started: retry briefly
    let t0 = Instant::now();
    let listed = loop {
        let out = Command::new(&tool).args(["list", &pid]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() || t0.elapsed() > Duration::from_secs(10) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(listed.contains("cli::LIVE_KEY"), "{listed}");
    let set = run_tool(&tool, &["set", &pid, "cli::LIVE_KEY", "on"]);
    assert!(set.contains("cli::LIVE_KEY"), "{set}");
    // read to the end: the child writes after it (libtest's "ok")
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let flipped = rest.iter().find(|l| l.contains("FLIPPED"));
    assert!(
        flipped.is_some_and(|l| l.ends_with("FLIPPED true")),
        "{flipped:?}"
    );
    assert!(c.wait().unwrap().success());
}

#[test]
fn prepatch_writes_the_start_up_forms_of_a_rust_binary() {
    let Some(tool) = tool() else { return };
    if !PATCHING {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let copy = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-prepatched");
    let _ = std::fs::remove_file(&copy);
    run_tool(
        &tool,
        &[
            "prepatch",
            exe.to_str().unwrap(),
            "-o",
            copy.to_str().unwrap(),
        ],
    );
    let listed = run_tool(&tool, &["list", copy.to_str().unwrap()]);
    // ENV_KEY is false: its unlikely site holds the straight-line form
    let site = listed
        .lines()
        .skip_while(|l| !l.starts_with("key cli::ENV_KEY "))
        .nth(1)
        .unwrap_or_default();
    let form = if cfg!(target_arch = "x86_64") {
        "test"
    } else {
        "nop"
    };
    assert!(
        site.contains(form),
        "ENV_KEY's site in the prepatched copy: {site}\n{listed}"
    );
    // the copy runs, its keys as before and still settable at start-up
    let out = spawn_child(&copy, "report").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("STATE false false"));
    let out = spawn_child(&copy, "report")
        .env("SWITCHYARD_KEYS", "cli::ENV_KEY=on")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("STATE true true"));
    let _ = std::fs::remove_file(&copy);
}
