/* SPDX-License-Identifier: MIT */
/*
 * switchyard/memcpy.h - a copy routine chosen by size and by CPU feature,
 * with its thresholds as run-time constants (<switchyard/runtime_const.h>),
 * the user-space counterpart of the kernel's copy_user_generic() choice
 * between an unrolled loop and "rep movsb".
 *
 *   switchyard_memcpy(dst, src, n);      // memcpy(3), returns dst
 *
 * Never slower than the C library: where no measurement says this
 * library's code loses nowhere on this CPU (a CPU not in the library's
 * table of measured rows, or one where it lost somewhere), the name
 * switchyard_memcpy resolves to the C library's memcpy itself (a GNU
 * indirect function: no call or jump in between). `switchyard calibrate
 * --save` measures a machine: run it once per machine, idle, like a tuning
 * step. Otherwise, on x86-64 (the flavour is chosen once, by CPU feature,
 * when the library loads: an alternative at the entry):
 *   n <= 128 (AVX2, AVX-512)    short moves: loads and stores of the first
 *   n <= short_max (SSE2)       and last bytes, overlapping (1..16 bytes
 *                               in general registers and xmm, then two,
 *                               four or eight vectors), no loop; with
 *                               AVX-512, 0..63 bytes in one masked move
 *   n >= libc_min               the C library's memcpy (a size class
 *                               measured to be its; 129 at the least)
 *   n >= rep_min                "rep movsb" (only with ERMS; without it
 *                               rep_min is UINT32_MAX: never); in the
 *                               AVX2 and AVX-512 flavours from 129 bytes
 *                               at the earliest
 *   otherwise                   more short moves to 256 (AVX2) or 512
 *                               (AVX-512) bytes, then a vector loop,
 *                               stores aligned
 * short_max only has an effect in the SSE2 flavour: in the others the
 * short moves and the loop's start are the same code up to 256 bytes.
 * Elsewhere switchyard_memcpy is the C library's memcpy. In a program
 * linked with the static library the name stays the dispatcher's (sizes
 * up to 128 bytes are this library's code even where libc_min is 0).
 *
 * Where the thresholds come from, at library start-up (a constructor),
 * each step overriding the one before:
 *  1. a default for this CPU's vendor, family, model and flavour: a table
 *     of measured rows (src/copy/memcpy.c, doc/DESIGN.md "Copy routine"),
 *     the C library's memcpy for every size on CPUs not in it;
 *  2. the calibration file
 *       ${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/
 *           memcpy-<vendor>-<family>-<model>
 *     (one path, e.g. ~/.cache/switchyard/memcpy-GenuineIntel-6-207:
 *     family and model in decimal, as /proc/cpuinfo shows them; a
 *     relative XDG_CACHE_HOME is ignored), written by
 *     switchyard_calibrate(SWITCHYARD_CALIBRATE_SAVE, ...);
 *     text, one "key=value" a line, '#' comments:
 *       short_max=<0..256>
 *       rep_min=<0..4294967295>
 *       libc_min=<0, or 129..4294967295>   (0: the C library's for every
 *                                           size; 4294967295: never)
 *  3. SWITCHYARD_MEMCPY="short_max=64,rep_min=2048" in the environment
 *     (any of the keys; the others come from steps 1-2; short_max or
 *     rep_min without libc_min where step 1-2 said "the C library's for
 *     every size" asks for this library's code: libc_min "never").
 * A file or variable that does not parse (unknown key, a key twice, a
 * number out of range or with trailing characters, an empty value) is
 * reported through the library's log (switchyard_set_log()) and ignored
 * as a whole: the step before it stands. Environment variables are read
 * with secure_getenv() (ignored in set-user-ID programs). The values are
 * written into the code once (runtime_const_init(): init once), so a
 * calibration, a new file or a new variable takes effect at the next
 * start of the process.
 */
#ifndef SWITCHYARD_MEMCPY_H
#define SWITCHYARD_MEMCPY_H

#include <stddef.h>
#include <stdint.h>

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most switchyard_memcpy's short moves copy (short_max's bound). */
#define SWITCHYARD_MEMCPY_SHORT_LIMIT 256

/*
 * switchyard_memcpy - copy n bytes from src to dst (which must not
 * overlap), as memcpy(3); returns dst. Thread-safe; async-signal-safe
 * (it reads no state but its code; the AVX2 paths end with vzeroupper,
 * the AVX-512 ones use zmm16-31 and k1 only, which need none). Clobbers
 * only what the ABI lets a call clobber.
 */
SWITCHYARD_API void *switchyard_memcpy(void *dst, const void *src, size_t n);

/* The strategies, for benchmarks and tests (switchyard_memcpy_get_strategy). */
enum switchyard_memcpy_strategy {
	SWITCHYARD_MEMCPY_SHORT = 0,	/* short moves; n > 256: the loop */
	SWITCHYARD_MEMCPY_LOOP,		/* the vector loop that
					   switchyard_memcpy uses (one of
					   the three below) */
	SWITCHYARD_MEMCPY_SSE2,		/* 16-byte vector loop */
	SWITCHYARD_MEMCPY_AVX2,		/* 32-byte vector loop */
	SWITCHYARD_MEMCPY_AVX512,	/* 64-byte vector loop */
	SWITCHYARD_MEMCPY_REP_MOVSB,	/* rep movsb */
	SWITCHYARD_MEMCPY_LIBC,		/* the C library's memcpy (as its
					   IFUNC resolution chose it for
					   this CPU); as a loop flavour in
					   the thresholds: switchyard_memcpy
					   is that function, for every size */
	SWITCHYARD_MEMCPY_STRATEGIES
};

typedef void *(*switchyard_memcpy_fn)(void *dst, const void *src, size_t n);

/*
 * switchyard_memcpy_get_strategy - one strategy alone, as a function with
 * memcpy's semantics at every size, or NULL when this CPU cannot run it
 * (AVX2 / AVX-512 absent or masked by SWITCHYARD_CPU_MASK; rep movsb
 * without ERMS; everything but SHORT and LOOP off x86-64) or which is out
 * of range. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API switchyard_memcpy_fn
switchyard_memcpy_get_strategy(enum switchyard_memcpy_strategy which);

/* Where the thresholds in effect came from. */
enum switchyard_memcpy_source {
	SWITCHYARD_MEMCPY_FROM_DEFAULT = 0,	/* the table for this CPU */
	SWITCHYARD_MEMCPY_FROM_FILE = 1,	/* the calibration file */
	SWITCHYARD_MEMCPY_FROM_ENV = 2,		/* SWITCHYARD_MEMCPY */
};

struct switchyard_memcpy_thresholds {
	uint32_t short_max;	/* n <= short_max: short moves */
	uint32_t rep_min;	/* n >= rep_min: rep movsb
				   (UINT32_MAX: never) */
	enum switchyard_memcpy_strategy loop;	/* the loop's flavour */
	enum switchyard_memcpy_source source;	/* of the later step that
						   set a threshold */
	int patched;		/* 1: written into the code (run-time
				   constants); 0: read from variables */
};

/*
 * switchyard_memcpy_get_thresholds - the thresholds in effect. Returns 0, or
 * -EINVAL for a NULL t. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API int
switchyard_memcpy_get_thresholds(struct switchyard_memcpy_thresholds *t);

/*
 * switchyard_memcpy_get_libc_min - the size from which switchyard_memcpy
 * hands a copy to the C library's memcpy: 0 (every size: switchyard_memcpy
 * resolves to the C library's function itself, no call in between), at
 * least 129 (a size class measured to be the C library's), or UINT32_MAX
 * (never). Thread-safe; async-signal-safe.
 */
SWITCHYARD_API uint32_t switchyard_memcpy_get_libc_min(void);

/*
 * switchyard_memcpy_config_path - the calibration file's path for this
 * CPU into buf (see above). Returns 0, -ENOENT (neither XDG_CACHE_HOME nor
 * HOME is set to an absolute path) or -ENAMETOOLONG (buf too small).
 * Thread-safe; not async-signal-safe.
 */
SWITCHYARD_API int switchyard_memcpy_config_path(char *buf, size_t size);

/* Conditions a calibration measures. */
enum switchyard_memcpy_condition {
	SWITCHYARD_MEMCPY_ALIGNED_FIXED = 0,	/* src, dst 64-aligned */
	SWITCHYARD_MEMCPY_MISALIGNED_FIXED,	/* src + 3, dst + 17 */
	SWITCHYARD_MEMCPY_ALIGNED_RANDOM,	/* sizes drawn around n */
	SWITCHYARD_MEMCPY_MISALIGNED_RANDOM,
	SWITCHYARD_MEMCPY_CONDITIONS
};

/*
 * A break-even size between two strategies A (used below) and B (above),
 * for one condition, on the calibration's grid of sizes:
 *   lo    the smallest size at which A is no longer significantly faster
 *         (Mann-Whitney, 5%)
 *   size  the smallest size from which B's median time is the lower at
 *         every larger size of the grid
 *   hi    the smallest size from which B is significantly faster at every
 *         larger size of the grid
 * lo <= size <= hi; between lo and hi they are within the noise ("~").
 * The grid's first size: B from the start; UINT32_MAX: no such size (A
 * to the end of the grid, or no B on this CPU).
 */
struct switchyard_memcpy_breakeven {
	uint32_t lo, size, hi;
};

struct switchyard_memcpy_calibration {
	/* short moves -> the vector loop, grid 2..256 (in the AVX2 and
	 * AVX-512 flavours the two are one code to 256 bytes: lo is the
	 * grid's first size, size and hi mostly none) */
	struct switchyard_memcpy_breakeven
		short_loop[SWITCHYARD_MEMCPY_CONDITIONS];
	/* the vector loop -> rep movsb, grid 64..65536 (UINT32_MAX
	 * everywhere without ERMS) */
	struct switchyard_memcpy_breakeven
		loop_rep[SWITCHYARD_MEMCPY_CONDITIONS];
	/* chosen: the thresholds with the least loss over all conditions
	 * and sizes of the grid (the mean of time / best time) */
	uint32_t short_max, rep_min;
	enum switchyard_memcpy_strategy loop;	/* the flavour measured */
	uint32_t libc_min;	/* chosen: the C library's memcpy from this
				   size (UINT32_MAX: never; 0: every size,
				   when this library's code was slower than
				   it somewhere: then short_max and rep_min
				   choose nothing) */
	double seconds;		/* the calibration's duration */
};

#define SWITCHYARD_CALIBRATE_QUICK 1u	/* fewer samples and sizes */
#define SWITCHYARD_CALIBRATE_SAVE 2u	/* write the calibration file */

/*
 * switchyard_calibrate - measure this CPU's break-even sizes between the
 * strategies, and each against the C library's memcpy (every condition
 * above; interleaved batches, medians, 95% confidence intervals; about
 * 8 s, QUICK 0.1 s and less certain) and fill *out. The choice: this
 * library's code only where it is slower than the C library's memcpy at
 * no size (Mann-Whitney, 5%, and over 2%), else the C library's for every
 * size (libc_min 0). With
 * SAVE, write the chosen thresholds (and the measurements, as comments)
 * to the calibration file, creating its directory, atomically (a
 * temporary file renamed). The thresholds in effect do not change: they
 * are read at the next start of the process. Returns 0, -EINVAL (out NULL
 * or unknown flags), -ENOMEM, or from SAVE the error of
 * switchyard_memcpy_config_path() or of the file system (-errno).
 * Thread-safe (other threads may copy meanwhile; they disturb the
 * measurements). Not async-signal-safe.
 */
SWITCHYARD_API int
switchyard_calibrate(unsigned flags, struct switchyard_memcpy_calibration *out);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_MEMCPY_H */
