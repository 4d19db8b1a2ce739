/* SPDX-License-Identifier: MIT */
/*
 * libdeferred.c - a plugin with a deferred key of its own (100 ms rate
 * limit). deferred_plugin_queue() takes a reference and drops it with the
 * deferred decrement: the final decrement is then queued, due in 100 ms,
 * and its work item lives in this object.
 */
#include <switchyard.h>

#define PLUGIN_API __attribute__((visibility("default")))

DEFINE_STATIC_KEY_DEFERRED_FALSE(plugin_key, 100);

PLUGIN_API int deferred_plugin_site(void)
{
#ifdef DEFERRED_NO_SITE
	/* no site at all: the object's table is empty (the header's glue
	 * still registers it); the key's state read as a plain load */
	return static_key_enabled(&plugin_key.key);
#else
	return static_branch_unlikely(&plugin_key.key);
#endif
}

PLUGIN_API int deferred_plugin_count(void)
{
	return static_key_count(&plugin_key.key.key);
}

/* 0, or the first error. */
PLUGIN_API int deferred_plugin_queue(void)
{
	int r = static_branch_deferred_inc(&plugin_key);

	return r ? r : static_branch_slow_dec_deferred(&plugin_key);
}

PLUGIN_API int deferred_plugin_flush(void)
{
	return static_key_deferred_flush(&plugin_key);
}
