/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: <linux/stddef.h> from the C library's. */
#ifndef FAIR_C_DIFF_LINUX_STDDEF_H
#define FAIR_C_DIFF_LINUX_STDDEF_H
#include <stddef.h>
#include <stdbool.h>
#endif
