/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: <linux/container_of.h> without the type check. */
#ifndef FAIR_C_DIFF_CONTAINER_OF_H
#define FAIR_C_DIFF_CONTAINER_OF_H
#include <linux/stddef.h>
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif
