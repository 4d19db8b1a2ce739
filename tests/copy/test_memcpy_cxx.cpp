// SPDX-License-Identifier: MIT
/*
 * test_memcpy_cxx.cpp - the C++ twin of test_memcpy.c: <switchyard.h>
 * compiles as C++ and every call of <switchyard/memcpy.h> works from it
 * (sizes 0..1024 x a few alignments through the dispatcher and each
 * strategy this CPU has; the thresholds; the calibration file's path).
 * Also run under qemu-x86_64 -cpu Nehalem where qemu is installed: a CPU
 * without AVX, where an AVX instruction would raise SIGILL.
 */
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sy_test.h"

static long copy_all(switchyard_memcpy_fn f)
{
	std::vector<unsigned char> src(1024 + 64), dst(1024 + 64 + 64);
	long bad = 0;

	for (size_t i = 0; i < src.size(); i++)
		src[i] = (unsigned char)(i * 131 + 7) % 0xee;
	for (unsigned sa : { 0u, 1u, 7u, 33u })
		for (unsigned da : { 0u, 3u, 16u, 63u })
			for (size_t n = 0; n <= 1024; n++) {
				unsigned char *d = dst.data() + 32 + da;

				std::memset(dst.data(), 0xee, dst.size());
				if (f(d, src.data() + sa, n) != d ||
				    std::memcmp(d, src.data() + sa, n) ||
				    d[-1] != 0xee || d[n] != 0xee)
					bad++;
			}
	return bad;
}

int main()
{
	switchyard_memcpy_thresholds t;
	char path[4096];
	int n = 0;

	CHECK_EQ(copy_all(switchyard_memcpy), 0);
	for (int s = 0; s < SWITCHYARD_MEMCPY_STRATEGIES; s++) {
		switchyard_memcpy_fn f = switchyard_memcpy_get_strategy(
			static_cast<switchyard_memcpy_strategy>(s));

		if (!f)
			continue;
		n++;
		CHECK_EQ(copy_all(f), 0);
	}
	CHECK(n >= 2);
	CHECK_EQ(switchyard_memcpy_get_thresholds(&t), 0);
	CHECK(t.short_max <= SWITCHYARD_MEMCPY_SHORT_LIMIT);
	/* the default, or (test_memcpy_no_avx) SWITCHYARD_MEMCPY asking for
	 * this library's own code */
	CHECK(t.source == SWITCHYARD_MEMCPY_FROM_DEFAULT ||
	      (t.source == SWITCHYARD_MEMCPY_FROM_ENV &&
	       switchyard_memcpy_get_libc_min() == UINT32_MAX));
#ifdef __x86_64__
	/* under qemu -cpu Nehalem (tests/copy/CMakeLists.txt): no AVX at
	 * all, and switchyard_memcpy (compiled for AVX2) leaves for the
	 * SSE2 dispatcher before its first AVX instruction */
	if (!boot_cpu_has(X86_FEATURE_AVX2))
		CHECK_EQ(t.loop, SWITCHYARD_MEMCPY_SSE2);
#endif
	CHECK_EQ(switchyard_memcpy_config_path(path, sizeof(path)), 0);
	CHECK(std::strstr(path, "/switchyard/memcpy-") != nullptr);
	CHECK_EQ(switchyard_memcpy_config_path(path, 4), -ENAMETOOLONG);
	CHECK_EQ(switchyard_calibrate(0, nullptr), -EINVAL);
	return sy_test_done("test_memcpy_cxx");
}
