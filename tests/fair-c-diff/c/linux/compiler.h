/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: what lib/rbtree.c and the rbtree headers need of <linux/compiler.h>. */
#ifndef FAIR_C_DIFF_COMPILER_H
#define FAIR_C_DIFF_COMPILER_H
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif
#define WRITE_ONCE(x, val) (*(volatile __typeof__(x) *)&(x) = (val))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#endif
