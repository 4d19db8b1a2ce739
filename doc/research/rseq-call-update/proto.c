/* switchyard rseq call-site rewrite prototype + torture + bench (own code) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <errno.h>
#include <sys/syscall.h>
#include <sys/rseq.h>
#include <linux/membarrier.h>

extern char sy_site_fn[], sy_mov[], sy_guard[], sy_call[], sy_end[], sy_abort[];
extern char sy_target_A[], sy_target_B[], sy_desc[];
extern void *sy_slot;
void sy_site_fn_c(void) __asm__("sy_site_fn");
void sy_plain_fn_c(void) __asm__("sy_plain_fn");
extern char sy2_mov[], sy2_call[], sy2_guard[]; extern volatile char sy2_flag;
void sy2_site_fn_c(void) __asm__("sy2_site_fn");
static int use_flag;  /* 1: data-flag guard site (site2) */
static void (*S_fn)(void) = sy_site_fn_c; static char *S_call = sy_call;
__thread long sy_cnt_a, sy_cnt_b, sy_nabort, sy_njmp;

static int memfd = -1;
static void poke(void *addr, const void *src, size_t n) {
  if (pwrite(memfd, src, n, (off_t)(uintptr_t)addr) != (ssize_t)n) { perror("pwrite /proc/self/mem"); abort(); }
}
static void poke1(void *addr, uint8_t b) { poke(addr, &b, 1); }
static int membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }
static void mb_or_die(int cmd, const char *what) { if (membarrier(cmd)) { fprintf(stderr, "membarrier %s: %s\n", what, strerror(errno)); abort(); } }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static int rseq_ok;  /* 1: guards run as TEST; 0: guards parked on JMP forever */
static void setup(int need_rseq) {
  memfd = open("/proc/self/mem", O_RDWR);
  if (memfd < 0) { perror("open /proc/self/mem"); exit(1); }
  printf("__rseq_size=%u __rseq_offset=%ld __rseq_flags=%u\n", __rseq_size, (long)__rseq_offset, __rseq_flags);
  rseq_ok = __rseq_size >= 16 && __rseq_offset != 0;  /* need bytes 8..15 (rseq_cs) */
  if (__rseq_offset != 0) {
    int32_t disp = (int32_t)(__rseq_offset + 8);     /* &rseq->rseq_cs relative to %fs base */
    poke(sy_mov + 5, &disp, 4); poke(sy2_mov + 5, &disp, 4);
  } else {
    /* no rseq area: turn the arming store into a 9-byte nop so it can't scribble on the TCB */
    static const uint8_t nop9[9] = {0x66,0x0f,0x1f,0x84,0x00,0x00,0x00,0x00,0x00};
    poke(sy_mov, nop9, 9); poke(sy2_mov, nop9, 9);
  }
  if (rseq_ok) {
    int q = membarrier(MEMBARRIER_CMD_QUERY);
    if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)) rseq_ok = 0;
    else if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) || membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ)) rseq_ok = 0;
  }
  if (!rseq_ok) { poke1(sy_guard, 0xe9); sy2_flag = 1; }  /* park: every call goes via the slot */
  printf("rseq_ok=%d (guard %s)\n", rseq_ok, rseq_ok ? "TEST" : "parked on JMP");
  if (need_rseq && !rseq_ok) printf("WARNING: protocol needs rseq; falling back to parked guard + slot updates\n");
}

static void set_rel32(int32_t *dst, void *target) { *dst = (int32_t)((char *)target - (S_call + 5)); }

enum { M_PROTO, M_NAIVE2, M_NAIVE4, M_PROTO_TORN, M_NO_RSEQ_MB };
static const char *mname[] = {"proto", "naive2x2", "naive1x4", "proto_torn2x2", "proto_without_membarrier_rseq(2x2)"};
static volatile int go, stop;
struct wres { long iters, a, b, nabort, njmp; int blockall; };
static void *worker(void *p) {
  struct wres *r = p;
  if (r->blockall) { sigset_t s; sigfillset(&s); pthread_sigmask(SIG_BLOCK, &s, NULL); }
  while (!go) ;
  long it = 0;
  void (*f)(void) = S_fn;
  while (!stop) { f(); it++; }
  r->iters = it; r->a = sy_cnt_a; r->b = sy_cnt_b; r->nabort = sy_nabort; r->njmp = sy_njmp;
  return NULL;
}

static double gap_us;
static int torture(int mode, double secs) {
  if (getenv("SY_GAP_US")) { gap_us = atof(getenv("SY_GAP_US")); printf("updater gap %.1f us between updates\n", gap_us); }
  pthread_t t[2]; struct wres r[2] = {{.blockall = 0}, {.blockall = 1}};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &r[i]);
  void *cur = sy_target_A; long updates = 0;
  double t0 = now(); go = 1;
  while (now() - t0 < secs) {
    void *nt = cur == (void *)sy_target_A ? (void *)sy_target_B : (void *)sy_target_A;
    int32_t rel; set_rel32(&rel, nt);
    if ((mode == M_PROTO || mode == M_PROTO_TORN || mode == M_NO_RSEQ_MB) && rseq_ok) {
      __atomic_store_n(&sy_slot, nt, __ATOMIC_RELEASE);  /* 1. slot = new */
      if (use_flag) __atomic_store_n(&sy2_flag, 1, __ATOMIC_SEQ_CST);  /* 2'. data guard on */
      else {
      poke1(sy_guard, 0xe9);                               /* 2. guard -> JMP (1-byte store) */
      mb_or_die(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, "sync_core#1"); /* 3 */
      }
      if (mode != M_NO_RSEQ_MB) mb_or_die(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, "rseq"); /* 4 */
      if (mode == M_PROTO) poke(S_call + 1, &rel, 4);     /* 5. rel32, nobody can execute it */
      else { poke(S_call + 1, &rel, 2); poke(S_call + 3, (char *)&rel + 2, 2); } /* deliberately torn */
      mb_or_die(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, "sync_core#2"); /* 6 */
      if (use_flag) __atomic_store_n(&sy2_flag, 0, __ATOMIC_RELEASE); /* 7'. data guard off */
      else poke1(sy_guard, 0xa9);                          /* 7. guard -> TEST */
    } else if (mode == M_PROTO) {
      __atomic_store_n(&sy_slot, nt, __ATOMIC_RELEASE);    /* parked: slot only */
    } else if (mode == M_NAIVE2) {
      poke(sy_call + 1, &rel, 2); poke(sy_call + 3, (char *)&rel + 2, 2);
    } else {
      poke(sy_call + 1, &rel, 4);
    }
    cur = nt; updates++;
    if (gap_us > 0) { double g0 = now(); while ((now() - g0) * 1e6 < gap_us) ; }
  }
  stop = 1;
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  double el = now() - t0;
  int bad = 0;
  printf("mode=%s secs=%.2f updates=%ld (%.0f/s)\n", mname[mode], el, updates, updates / el);
  for (int i = 0; i < 2; i++) {
    long d = r[i].a + r[i].b - r[i].iters;
    printf("  thread%d%s iters=%ld a=%ld b=%ld a+b-iters=%ld detour: rseq_aborts=%ld jmp_entries=%ld\n", i,
           r[i].blockall ? "(all sigs blocked)" : "", r[i].iters, r[i].a, r[i].b, d, r[i].nabort, r[i].njmp);
    if (d) bad = 1;
  }
  printf("RESULT %s\n", bad ? "MISMATCH" : "exact");
  return bad;
}

static int cmpd(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
static void bench(const char *what, long n, int reps) {
  void (*f)(void) = !strcmp(what, "plain") ? sy_plain_fn_c : !strncmp(what, "flag", 4) ? sy2_site_fn_c : sy_site_fn_c;
  if (!strcmp(what, "flag")) sy2_flag = 0; else if (!strcmp(what, "flagpark")) sy2_flag = 1;
  if (!strcmp(what, "parked")) poke1(sy_guard, 0xe9);
  else if (!strcmp(what, "site")) poke1(sy_guard, 0xa9);
  double v[64];
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (long i = 0; i < n; i++) { f(); __asm__ volatile("" ::: "memory"); }
    v[r] = (now() - t0) * 1e9 / n;
  }
  qsort(v, reps, sizeof v[0], cmpd);
  printf("bench %-6s n=%ld reps=%d ns/call median=%.3f min=%.3f max=%.3f (a=%ld b=%ld aborts=%ld jmps=%ld)\n", what, n, reps,
         v[reps / 2], v[0], v[reps - 1], sy_cnt_a, sy_cnt_b, sy_nabort, sy_njmp);
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s info | torture proto|naive2|naive4 SECS | bench site|parked|plain N REPS\n", argv[0]); return 2; }
  if (!strcmp(argv[1], "info")) { setup(0); sy_site_fn_c(); printf("one call ok: a=%ld b=%ld aborts=%ld jmps=%ld\n", sy_cnt_a, sy_cnt_b, sy_nabort, sy_njmp); return 0; }
  if (getenv("SY_FLAG")) { use_flag = 1; S_fn = sy2_site_fn_c; S_call = sy2_call; printf("site variant: data-flag guard\n"); }
  if (!strcmp(argv[1], "torture")) {
    int mode = !strcmp(argv[2], "proto") ? M_PROTO : !strcmp(argv[2], "naive2") ? M_NAIVE2 : !strcmp(argv[2], "naive4") ? M_NAIVE4 : !strcmp(argv[2], "torn") ? M_PROTO_TORN : M_NO_RSEQ_MB;
    setup(mode != M_NAIVE2 && mode != M_NAIVE4);
    return torture(mode, argc > 3 ? atof(argv[3]) : 10);
  }
  if (!strcmp(argv[1], "bench")) { setup(0); bench(argv[2], atol(argv[3]), argc > 4 ? atoi(argv[4]) : 7); return 0; }
  return 2;
}
