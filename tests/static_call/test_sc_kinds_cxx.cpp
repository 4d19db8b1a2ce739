// SPDX-License-Identifier: MIT
// test_sc_kinds_cxx.cpp - the C++ twin of test_sc_kinds.c: natives and
// callee-save sites through the C++ site templates. The functions throw
// nothing: SWITCHYARD_STATIC_CALL_NOTHROW keeps their sites patched.
#define SWITCHYARD_STATIC_CALL_NOTHROW 1
#include "test_sc_kinds.c"
