// SPDX-License-Identifier: MIT
/*
 * ngx_switchyard_module - the static key of nginx's debug checks, for the
 * benchmark suite's E6 (bench/suite/e6_nginx.py). With
 * bench/e6/ngx_log.h.patch every ngx_log_debug*() site of a --with-debug
 * build starts with static_branch_unlikely(&ngx_debug_key): while the key
 * is off (the default) no debug line is written whatever error_log says;
 * `switchyard set PID ngx_debug_key on` (or SWITCHYARD_KEYS=ngx_debug_key=on
 * at start) turns the checks on, and the log levels apply again.
 *
 * Control of a worker: SWITCHYARD_CONTROL=1 makes the process that loads
 * the library serve control, and the child that goes on after a daemon's
 * fork. A worker is a child whose parent (the master) lives on, which the
 * library leaves without control unless it asks (switchyard(3), fork()):
 * this module asks, in each worker, when the master was started with
 * SWITCHYARD_CONTROL=1. The variable is read when the configuration is
 * loaded, in the master: nginx empties a worker's environment (keeping
 * only its "env" directives) before the workers' init_process runs.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <switchyard/static_key.h>
#include <switchyard/control.h>

DEFINE_STATIC_KEY_FALSE(ngx_debug_key);
SWITCHYARD_KEY_DESCRIPTION(ngx_debug_key,
			   "nginx's ngx_log_debug*() checks: off skips them");

static ngx_uint_t ngx_switchyard_control;

static ngx_int_t ngx_switchyard_init_module(ngx_cycle_t *cycle)
{
	const char *v = getenv("SWITCHYARD_CONTROL");

	(void)cycle;
	ngx_switchyard_control = v != NULL && ngx_strcmp(v, "1") == 0;
	return NGX_OK;
}

static ngx_int_t ngx_switchyard_init_process(ngx_cycle_t *cycle)
{
	int err;

	/* the master, and a single process (master_process off), already
	 * serve from the library's start-up */
	if (!ngx_switchyard_control || ngx_process != NGX_PROCESS_WORKER)
		return NGX_OK;
	err = switchyard_control_start();
	if (err < 0)
		ngx_log_error(NGX_LOG_WARN, cycle->log, -err,
			      "switchyard_control_start() failed");
	return NGX_OK;
}

static ngx_core_module_t ngx_switchyard_module_ctx = {
	ngx_string("switchyard"),
	NULL,
	NULL
};

ngx_module_t ngx_switchyard_module = {
	NGX_MODULE_V1,
	&ngx_switchyard_module_ctx,	/* module context */
	NULL,				/* module directives */
	NGX_CORE_MODULE,		/* module type */
	NULL,				/* init master */
	ngx_switchyard_init_module,	/* init module */
	ngx_switchyard_init_process,	/* init process */
	NULL,				/* init thread */
	NULL,				/* exit thread */
	NULL,				/* exit process */
	NULL,				/* exit master */
	NGX_MODULE_V1_PADDING
};
