/* SPDX-License-Identifier: MIT */
/*
 * switchyard.h - the umbrella header: run-time code patching for ordinary
 * Linux programs: static keys, static calls, introspection, CPU features,
 * run-time constants, alternatives, device copies, the copy routine.
 */
#ifndef SWITCHYARD_H
#define SWITCHYARD_H

#include <switchyard/core.h>
#include <switchyard/static_key.h>
#include <switchyard/static_call.h>
#include <switchyard/introspect.h>
#include <switchyard/cpufeature.h>
#include <switchyard/runtime_const.h>
#include <switchyard/alternative.h>
#include <switchyard/io.h>
#include <switchyard/memcpy.h>
#include <switchyard/control.h>

#endif /* SWITCHYARD_H */
