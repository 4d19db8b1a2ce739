/* SPDX-License-Identifier: MIT */
/*
 * ready_loop.h - the main loop of the names test targets (C and C++):
 * print "ready PID" and the states once, then again for every line on the
 * standard input, until it closes (test_names_live.sh drives them so).
 */
#ifndef SY_TEST_READY_LOOP_H
#define SY_TEST_READY_LOOP_H
#include <stdio.h>
#include <unistd.h>

static inline int ready_loop(void (*states)(void))
{
	char line[64];

	printf("ready %d\n", (int)getpid());
	states();
	while (fgets(line, sizeof(line), stdin))
		states();
	return 0;
}
#endif
