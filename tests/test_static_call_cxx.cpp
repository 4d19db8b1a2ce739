// SPDX-License-Identifier: MIT
// test_static_call_cxx.cpp - the C test of static calls, compiled as C++.
#include "test_static_call.c"
