/* SPDX-License-Identifier: MIT */
/* gdb_plugin.c - a dlopen'ed library with its own key and sites. */
#include "gdb_sites.h"

DEFINE_STATIC_KEY_FALSE(plugin_key);
GDB_PATH_FNS

__attribute__((used)) int plugin_path(void)
{
	return gdb_path;
}

GDB_SITE_FN(plugin_short, static_branch_unlikely, plugin_key, GDB_NONE,
	    GDB_NONE)
GDB_SITE_FN(plugin_long, static_branch_unlikely, plugin_key, GDB_NONE,
	    GDB_FILLER())

__attribute__((used)) int plugin_set(int on)
{
	return on ? static_branch_enable(&plugin_key)
		  : static_branch_disable(&plugin_key);
}
