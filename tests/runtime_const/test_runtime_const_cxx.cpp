// SPDX-License-Identifier: MIT
// test_runtime_const_cxx.cpp - the C++ twin of test_runtime_const.c.
#include "test_runtime_const.c"
