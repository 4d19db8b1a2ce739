// SPDX-License-Identifier: MIT
// test_cpu_cxx.cpp - the C++ twin of test_cpu.c.
#include "test_cpu.c"
