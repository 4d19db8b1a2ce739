// SPDX-License-Identifier: MIT
// test_io_cxx.cpp - the C++ twin of test_io.c: <switchyard.h> from C++,
// the device copy called with C++'s conversions (volatile words, arrays).
#include "test_io.c"
