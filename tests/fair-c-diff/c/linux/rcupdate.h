/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: the two RCU helpers the rbtree headers use; the harness is single-threaded. */
#ifndef FAIR_C_DIFF_RCUPDATE_H
#define FAIR_C_DIFF_RCUPDATE_H
#include <linux/compiler.h>
#define rcu_assign_pointer(p, v) WRITE_ONCE(p, v)
#define RCU_INIT_POINTER(p, v) WRITE_ONCE(p, v)
#define rcu_dereference_raw(p) READ_ONCE(p)
#endif
