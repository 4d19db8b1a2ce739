/* SPDX-License-Identifier: MIT */
/*
 * control_target.c - a process with three keys and a static call whose
 * sites two threads run all the time, serving its control socket (switchyard_control_start()
 * or SWITCHYARD_CONTROL=1) until its standard input closes; then it prints
 * how many passes took each key's path and exits (test_control.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(net_rx);
SWITCHYARD_KEY_DESCRIPTION(net_rx, "trace received packets {\"rx\"}");
DEFINE_STATIC_KEY_FALSE(net_tx);
DEFINE_STATIC_KEY_TRUE(disk_io);

/* codec: two registered targets; codec_secret is not one */
static unsigned long codec_calls[3];	/* atomic */
static __attribute__((noinline)) int codec_plain(int x)
{
	__atomic_add_fetch(&codec_calls[0], 1, __ATOMIC_RELAXED);
	return x;
}
static __attribute__((noinline)) int codec_fast(int x)
{
	__atomic_add_fetch(&codec_calls[1], 1, __ATOMIC_RELAXED);
	return x + 1;
}
__attribute__((noinline)) int codec_secret(int x);
__attribute__((noinline)) int codec_secret(int x)
{
	__atomic_add_fetch(&codec_calls[2], 1, __ATOMIC_RELAXED);
	return x + 2;
}
DEFINE_STATIC_CALL(codec, codec_plain);
SWITCHYARD_STATIC_CALL_TARGET(codec, codec_plain);
SWITCHYARD_STATIC_CALL_TARGET(codec, codec_fast);

static int stop;	/* atomic: the workers poll it */
static unsigned long hits[3];

static void *worker(void *arg)
{
	unsigned long h[3] = { 0, 0, 0 };

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (static_branch_unlikely(&net_rx))
			h[0]++;
		if (static_branch_unlikely(&net_tx))
			h[1]++;
		if (static_branch_likely(&disk_io))
			h[2]++;
		h[0] += (unsigned)static_call(codec)(0) > 2;	/* never */
	}
	for (int i = 0; i < 3; i++)
		__atomic_add_fetch(&hits[i], h[i], __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	char c;

	if (argc > 1 && !strcmp(argv[1], "api") && switchyard_control_start()) {
		fprintf(stderr, "control_target: switchyard_control_start failed\n");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("net_rx %d net_tx %d disk_io %d\n",
	       static_key_enabled(&net_rx), static_key_enabled(&net_tx),
	       static_key_enabled(&disk_io));
	printf("codec_plain %d codec_fast %d codec_secret %d\n",
	       codec_calls[0] > 0, codec_calls[1] > 0, codec_calls[2] > 0);
	return 0;
}
