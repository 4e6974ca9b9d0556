/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: nothing is exported from a host library. */
#ifndef FAIR_C_DIFF_EXPORT_H
#define FAIR_C_DIFF_EXPORT_H
#define EXPORT_SYMBOL(sym)
#endif
