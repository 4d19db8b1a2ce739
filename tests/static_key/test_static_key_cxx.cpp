/* SPDX-License-Identifier: MIT */
/* The C++ twin of the header tests: the same source, compiled as C++. */
#include "test_static_key.c"
