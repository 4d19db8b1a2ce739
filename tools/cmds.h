/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the commands of the switchyard tool, as main() calls them from
 * its table (switchyard.c). Not library API.
 *
 * Each gets the command's words: argv[0] its name, then its operands,
 * their number checked by main() (bench: every word after it, options
 * included, as given); the global options are in util.h. Each returns the
 * exit status, or CMD_USAGE (util.h) for operands it rejects after saying
 * why.
 */
#ifndef SY_TOOLS_CMDS_H
#define SY_TOOLS_CMDS_H

int cmd_list(int argc, char **argv);	/* list FILE|PID (cmd_list.c) */
int cmd_set(int argc, char **argv);	/* set PID GLOB on|off|inc|dec */
int cmd_call(int argc, char **argv);	/* call PID GLOB TARGET */
int cmd_ps(int argc, char **argv);	/* ps (these three: cmd_live.c) */
int cmd_prepatch(int argc, char **argv);	/* prepatch FILE [-o OUT] */
int cmd_cpu(int argc, char **argv);	/* cpu (cmd_cpu.c) */
int cmd_calibrate(int argc, char **argv);	/* calibrate (cmd_cpu.c) */
int cmd_bench(int argc, char **argv);	/* bench ... (cmd_bench.c) */

#endif /* SY_TOOLS_CMDS_H */
