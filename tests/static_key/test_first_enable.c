/* SPDX-License-Identifier: MIT */
/*
 * test_first_enable.c - a reference returned is a reference in force.
 *
 * big_key has 10,000 sites, so its first enable (0 -> 1) takes a while to
 * write. Two threads loop on static_branch_inc(); run every site;
 * static_branch_dec(). Whichever thread's increment returns, every site must
 * already jump: an increment that finds the count above 0 returns at once
 * (lock-free), so the count must not read 1 before the other thread's first
 * enable has written and synchronised every site. A library that published
 * the count first fails here in most rounds (mutation testing: 195 of 200).
 *
 * Second phase, the other end: thread 0 drops the last reference (1 -> 0,
 * under the patch lock) while thread 1 takes one (lock-free while it reads
 * 1). Whichever wins, no reference may be lost: thread 1's increment must
 * leave its sites jumping and its decrement must succeed. A last disable
 * that stores 0 instead of compare-and-swapping 1 -> 0 loses thread 1's
 * increment when it lands in between; that window is a few instructions
 * wide and this phase has not hit it in any run here (scripts/mutate.sh,
 * mutant 10, survives): it checks the interleavings it does reach.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sy_test.h"

DEFINE_STATIC_KEY_FALSE(big_key);
DEFINE_STATIC_KEY_FALSE(small_key);

__attribute__((noinline)) static int small_site(void)
{
	return static_branch_unlikely(&small_key);
}

#define S1 if (static_branch_unlikely(&big_key)) n++;
#define S10 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1
#define S100 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10
#define S1000 S100 S100 S100 S100 S100 S100 S100 S100 S100 S100
#define NSITES 10000

/* How many of the 10,000 sites jump: ten functions of 1,000 sites (one
 * function of 10,000 takes gcc -O2 -g a minute and 2 GB to compile). */
#define PART(i)                                                               \
	__attribute__((noinline)) static int big_part##i(void)                \
	{                                                                     \
		int n = 0;                                                    \
		S1000                                                         \
		return n;                                                     \
	}
PART(0) PART(1) PART(2) PART(3) PART(4) PART(5) PART(6) PART(7) PART(8) PART(9)

static int big_sites(void)
{
	return big_part0() + big_part1() + big_part2() + big_part3() +
	       big_part4() + big_part5() + big_part6() + big_part7() +
	       big_part8() + big_part9();
}

#define ROUNDS 200

static pthread_barrier_t bar;
static atomic_int bad, errors, rounds;

static void check_sites(int who)
{
	int n = big_sites();

	if (n != NSITES && atomic_fetch_add(&bad, 1) < 5)
		fprintf(stderr, "thread %d: increment returned, %d of %d sites "
			"jump\n", who, n, NSITES);
}

/*
 * Each round starts with the key off. Thread 0 increments at once (the
 * first enable: it writes 10,000 sites); thread 1 waits a little (0 to
 * ~40 us, varied) and increments while that enable is often still
 * writing. Both check every site, decrement, and meet again.
 */
static void *holder(void *arg)
{
	int who = (int)(intptr_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		pthread_barrier_wait(&bar);
		if (who)
			for (volatile int spin = 0; spin < (i % 32) * 300; spin++)
				;
		if (static_branch_inc(&big_key)) {
			atomic_fetch_add(&errors, 1);
		} else {
			check_sites(who);
			if (static_branch_dec(&big_key))
				atomic_fetch_add(&errors, 1);
		}
		pthread_barrier_wait(&bar);
		if (!who)
			atomic_fetch_add(&rounds, 1);
	}
	return NULL;
}

#define ROUNDS2 5000

static atomic_int lost;

static void *last_ref(void *arg)
{
	int who = (int)(intptr_t)arg;

	for (int i = 0; i < ROUNDS2; i++) {
		if (!who && static_branch_inc(&small_key))
			atomic_fetch_add(&errors, 1);
		pthread_barrier_wait(&bar);
		if (!who) {
			if (static_branch_dec(&small_key))
				atomic_fetch_add(&errors, 1);
		} else {
			for (volatile int spin = 0; spin < i % 64; spin++)
				;
			if (static_branch_inc(&small_key)) {
				atomic_fetch_add(&errors, 1);
			} else {
				if (!small_site())
					atomic_fetch_add(&lost, 1);
				if (static_branch_dec(&small_key))
					atomic_fetch_add(&lost, 1);
			}
		}
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(void)
{
	struct switchyard_stats a, b;
	pthread_t th[2];

	CHECK_EQ(big_sites(), 0);
	CHECK_EQ(switchyard_get_stats(&a), 0);
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, holder,
					(void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(switchyard_get_stats(&b), 0);
	printf("%d rounds, %d with unpatched sites, %llu batches\n",
	       atomic_load(&rounds), atomic_load(&bad),
	       (unsigned long long)(b.patch_batches - a.patch_batches));
	CHECK_EQ(atomic_load(&bad), 0);
	CHECK_EQ(atomic_load(&errors), 0);
	CHECK_EQ(atomic_load(&rounds), ROUNDS);
#ifdef SY__ARCH_HAVE_JUMP_LABEL
	/* every round enabled and disabled the key: the scenario ran */
	CHECK(b.patch_batches - a.patch_batches >= 2 * ROUNDS);
#endif
	CHECK_EQ(static_key_count(&big_key.key), 0);
	CHECK_EQ(big_sites(), 0);

	/* phase 2: the last reference against a new one */
	switchyard_set_log(sy_test_log, NULL);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, last_ref,
					(void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	switchyard_set_log(NULL, NULL);
	printf("%d rounds of last reference against a new one, %d lost\n",
	       ROUNDS2, atomic_load(&lost));
	CHECK_EQ(atomic_load(&lost), 0);
	CHECK_EQ(atomic_load(&errors), 0);
	CHECK_EQ(static_key_count(&small_key.key), 0);
	CHECK_EQ(small_site(), 0);
	return sy_test_done("test_first_enable");
}
