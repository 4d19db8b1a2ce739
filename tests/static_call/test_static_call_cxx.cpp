// SPDX-License-Identifier: MIT
// test_static_call_cxx.cpp - the C test of static calls, compiled as C++.
// The functions here throw nothing: SWITCHYARD_STATIC_CALL_NOTHROW lets
// their calls be patched sites although they are not declared noexcept
// (without it, a C++ build with exceptions calls them indirectly).
#define SWITCHYARD_STATIC_CALL_NOTHROW 1
#include "test_static_call.c"
