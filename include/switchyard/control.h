/* SPDX-License-Identifier: MIT */
/*
 * switchyard/control.h - live control of a process's static keys from the
 * outside (`switchyard list PID`, `switchyard set PID KEY on|off|inc|dec`).
 *
 * Opt-in: nothing is started unless the process calls
 * switchyard_control_start() or runs with SWITCHYARD_CONTROL=1 in its
 * environment (read once, when the library loads, with secure_getenv()).
 * Then a control thread, which blocks every signal, serves a Unix socket
 * at
 *     $XDG_RUNTIME_DIR/switchyard/<pid>.sock
 *     /tmp/switchyard-<uid>/<pid>.sock        (XDG_RUNTIME_DIR unset or
 *                                              not absolute)
 * in a directory of mode 0700 owned by the process's user (refused if it
 * exists otherwise), the socket 0600. Every client is checked with
 * SO_PEERCRED: the same user, or root; others get one error line and are
 * closed. Requests are lines of at most 1024 bytes:
 *     list                       the keys and the static calls: one JSON
 *                                object
 *     set GLOB on|off|inc|dec    every key whose name matches GLOB
 *                                (fnmatch(3)), all in one patch batch
 *                                (one core sync); JSON: what changed
 *     call GLOB TARGET           every static call whose name matches
 *                                GLOB to its registered target TARGET
 *                                (SWITCHYARD_STATIC_CALL_TARGET()): one
 *                                static_call_update() each; JSON: what
 *                                changed, and why a call was left alone
 * A malformed request gets a JSON error and the connection stays usable;
 * a line too long, a client silent for 10 s, or one that does not read
 * its replies is closed. At most 16 clients at once. The process never
 * blocks on a client: every socket is non-blocking.
 *
 * Start-up states, without a socket: SWITCHYARD_KEYS="GLOB=on|off,..."
 * (or "+GLOB,-GLOB,...", dynamic_flag's convention)
 * (read with secure_getenv() on the first registration). Each key is
 * decided once, when the first object with its sites registers: before
 * that object's constructors run (before main() for the objects loaded
 * with the program, before dlopen() returns for the others), by the last
 * item whose glob matches its name as `list` shows it; the keys of one
 * object change in one batch. Each key set is logged (INFO); an item that
 * matched no key when the program's own keys registered is reported
 * (WARN); a malformed value (an item not NAME=on or NAME=off) is reported
 * and sets nothing.
 *
 * fork(): a process that serves control keeps it in the child that goes
 * on, the one whose parent exits (daemon(3), the double fork): such a
 * child waits for its parent's exit and then serves <its pid>.sock
 * (removing the parent's socket if the parent left it). A child whose
 * parent lives (a worker of a pool, a child about to exec) serves none
 * unless it calls switchyard_control_start(); it leaves no socket behind.
 *
 * Any length of XDG_RUNTIME_DIR works: the socket is bound and reached
 * through /proc/self/fd/<directory descriptor>/<pid>.sock when the path
 * passes sun_path's 108 bytes (without /proc mounted, such a path is
 * refused with -ENAMETOOLONG and logged).
 *
 * A program that must not act on SWITCHYARD_CONTROL and SWITCHYARD_KEYS
 * (a tool that inspects other programs and inherits their environment)
 * says so with SWITCHYARD_IGNORE_CONTROL_ENV at file scope in its
 * executable.
 *
 * Include <switchyard.h> rather than this file.
 */
#ifndef SWITCHYARD_CONTROL_H
#define SWITCHYARD_CONTROL_H

#include <stddef.h>

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * SWITCHYARD_IGNORE_CONTROL_ENV - at file scope in a program (the
 * executable, not a library): the library then ignores SWITCHYARD_CONTROL
 * and SWITCHYARD_KEYS in this process (switchyard_control_start() still
 * works). The library reads the symbol when it is loaded: it is a
 * definition the dynamic linker resolves, so there is no ordering with
 * constructors.
 */
#define SWITCHYARD_IGNORE_CONTROL_ENV \
	SY__DECL_C const int switchyard_ignore_control_env \
		__attribute__((visibility("default"))); \
	SY__DEF_C __attribute__((used)) \
		const int switchyard_ignore_control_env = 1
#ifdef __cplusplus
#define SY__DECL_C extern "C"
#define SY__DEF_C extern "C"
#else
#define SY__DECL_C extern
#define SY__DEF_C
#endif

/*
 * switchyard_control_start - start serving the control socket (idempotent:
 * 0 when already serving). Returns 0, or a negative errno: the directory
 * or socket could not be made (-EPERM: the directory exists with another
 * owner or mode), the thread could not start. Thread-safe; not
 * async-signal-safe.
 */
SWITCHYARD_API int switchyard_control_start(void);

/*
 * switchyard_control_stop - stop serving (or, in a forked child, waiting
 * to serve): the thread is joined, the socket closed and removed; the
 * children forked from now on get no control. 0, or -ESRCH when not
 * serving. Thread-safe; not async-signal-safe; not from the log callback
 * (switchyard_set_log()).
 */
SWITCHYARD_API int switchyard_control_stop(void);

/*
 * switchyard_control_path - the socket path of process pid (0: this one)
 * into buf. 0, -ENAMETOOLONG. Thread-safe; not async-signal-safe (it
 * formats with snprintf(3)).
 */
SWITCHYARD_API int switchyard_control_path(int pid, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_CONTROL_H */
