/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shim under fair.c's EEVDF functions: just enough of the kernel for the
 * functions that build.rs extracts, by name, from the pristine 6.12.117
 * kernel/sched/fair.c (and the macros it extracts from kernel/sched/sched.h,
 * include/linux/sched.h and include/linux/math64.h) to compile on the host,
 * for one CPU's root cfs_rq.
 *
 * The structures carry the fields those functions read and write, under the
 * kernel's names and types. What the EEVDF code does not read (load tracking,
 * statistics, bandwidth, the group hierarchy, NUMA) is a no-op here; each
 * stub says where the kernel's version lives. Nothing of fair.c's logic is
 * written here: a function that decides anything comes from the tarball.
 */
#ifndef FAIR_C_DIFF_SHIM_H
#define FAIR_C_DIFF_SHIM_H

#include <stdint.h>
#include <linux/compiler.h>
#include <linux/stddef.h>
#include <linux/rbtree_augmented.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;

#define BITS_PER_LONG 64
#define CONFIG_64BIT 1
/* math64.h's 128-bit mul_u64_u32_shr(), as x86_64 builds it. */
#define CONFIG_ARCH_SUPPORTS_INT128 1
/* Neither CONFIG_SMP, CONFIG_FAIR_GROUP_SCHED nor CONFIG_SCHEDSTATS: their code is load
 * tracking, the hierarchy and statistics, none of which the EEVDF decisions read. */

/* include/linux/minmax.h, without the type checks. */
#define min(a, b) ({ __typeof__(a) __a = (a); __typeof__(b) __b = (b); __a < __b ? __a : __b; })
#define max(a, b) ({ __typeof__(a) __a = (a); __typeof__(b) __b = (b); __a > __b ? __a : __b; })
#define max_t(t, a, b) ({ t __a = (a); t __b = (b); __a > __b ? __a : __b; })
#define clamp(v, lo, hi) min((__typeof__(v))max(v, lo), hi)
#define clamp_t(t, v, lo, hi) ({ t __v = (v); t __l = (lo); t __h = (hi); __v < __l ? __l : (__v > __h ? __h : __v); })

/* include/asm-generic/bitops/fls.h */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* The harness counts WARNs: a WARN in fair.c is a finding, never silent. */
extern unsigned long fcd_warnings;
extern int fcd_warn_line;
#define WARN_ON_ONCE(x) ({ int __r = !!(x); if (__r) { fcd_warnings++; fcd_warn_line = __LINE__; } __r; })
#define SCHED_WARN_ON(x) WARN_ON_ONCE(x)

/* Scheduler feature bits from the tarball's kernel/sched/features.h, as sched.h numbers them. */
#define SCHED_FEAT(name, enabled) __SCHED_FEAT_##name,
enum {
#include "sched_features.h"
	__SCHED_FEAT_NR,
};
#undef SCHED_FEAT
extern u64 sysctl_sched_features;
#define sched_feat(x) (!!(sysctl_sched_features & (1ULL << __SCHED_FEAT_##x)))

/* The tunables fair.c reads. */
extern unsigned int sysctl_sched_base_slice;
extern u64 fcd_tick_nsec;
#define TICK_NSEC fcd_tick_nsec
#define NSEC_PER_MSEC 1000000ULL

struct list_head {
	struct list_head *next, *prev;
};

/* include/linux/sched.h */
struct load_weight {
	unsigned long weight;
	u32 inv_weight;
};

struct sched_statistics {
	u64 exec_max;
	u64 slice_max;
};

struct sched_entity {
	/* For load-balancing: */
	struct load_weight load;
	struct rb_node run_node;
	u64 deadline;
	u64 min_vruntime;
	u64 min_slice;

	struct list_head group_node;
	unsigned char on_rq;
	unsigned char sched_delayed;
	unsigned char rel_deadline;
	unsigned char custom_slice;
	/* hole */

	u64 exec_start;
	u64 sum_exec_runtime;
	u64 prev_sum_exec_runtime;
	u64 vruntime;
	s64 vlag;
	u64 slice;

	u64 nr_migrations;
	struct sched_entity *parent;
};

#define SCHED_NORMAL 0
#define SCHED_BATCH 3
#define SCHED_IDLE 5

struct task_struct {
	struct sched_entity se;
	unsigned int policy;
};

/* kernel/sched/sched.h */
struct cfs_rq {
	struct load_weight load;
	unsigned int nr_running;
	unsigned int h_nr_running;
	unsigned int h_nr_runnable;
	unsigned int idle_nr_running;
	unsigned int h_nr_delayed;

	s64 avg_vruntime;
	u64 avg_load;

	u64 zero_vruntime;

	struct rb_root_cached tasks_timeline;

	struct sched_entity *curr;
	struct sched_entity *next;
};

struct rq {
	unsigned int nr_running;
	u64 clock_task;
	struct cfs_rq cfs;
	struct task_struct *curr;
	/* TIF_NEED_RESCHED of rq->curr. */
	int need_resched;
	/* Only its address is taken (dl_server_active()). */
	int fair_server;
};

/* The one runqueue of the harness (driver.c). */
extern struct rq fcd_rq;

static inline struct rq *rq_of(struct cfs_rq *cfs_rq) { return &fcd_rq; }
static inline struct cfs_rq *cfs_rq_of(struct sched_entity *se) { return &fcd_rq.cfs; }
static inline struct task_struct *task_of(struct sched_entity *se)
{
	return container_of(se, struct task_struct, se);
}
static inline struct cfs_rq *task_cfs_rq(struct task_struct *p) { return &fcd_rq.cfs; }
#define entity_is_task(se) 1
#define for_each_sched_entity(se) for (; se; se = se->parent)
static inline int se_is_idle(struct sched_entity *se) { return 0; }
static inline int normal_policy(int policy) { return policy == SCHED_NORMAL; }
static inline void find_matching_se(struct sched_entity **se, struct sched_entity **pse) { }
static inline int throttled_hierarchy(struct cfs_rq *cfs_rq) { return 0; }
static inline int cfs_rq_throttled(struct cfs_rq *cfs_rq) { return 0; }
static inline int task_on_rq_migrating(struct task_struct *p) { return 0; }
static inline u64 rq_clock_task(struct rq *rq) { return rq->clock_task; }
static inline void update_rq_clock(struct rq *rq) { }
static inline void rq_clock_skip_update(struct rq *rq) { }
static inline void resched_curr(struct rq *rq) { rq->need_resched = 1; }
static inline int test_tsk_need_resched(struct task_struct *p) { return fcd_rq.need_resched; }

/* Statistics (kernel/sched/stats.h, fair.c's update_stats_*): not compiled in. */
#define schedstat_enabled() 0
static struct sched_statistics fcd_stats;
#define __schedstats_from_se(se) (&fcd_stats)
#define __schedstat_set(var, val) do { } while (0)
static inline void check_schedstat_required(void) { }
#define update_stats_enqueue_fair(cfs_rq, se, flags) do { } while (0)
#define update_stats_dequeue_fair(cfs_rq, se, flags) do { } while (0)
#define update_stats_wait_start_fair(cfs_rq, se) do { } while (0)
#define update_stats_wait_end_fair(cfs_rq, se) do { } while (0)

/* Load tracking (PELT) and group shares: the EEVDF decisions do not read them. */
#define UPDATE_TG 0x1
#define SKIP_AGE_LOAD 0x2
#define DO_ATTACH 0x4
#define DO_DETACH 0x8
#define update_load_avg(cfs_rq, se, flags) do { } while (0)
#define se_update_runnable(se) do { } while (0)
#define update_cfs_group(se) do { } while (0)
#define enqueue_load_avg(cfs_rq, se) do { } while (0)
#define dequeue_load_avg(cfs_rq, se) do { } while (0)
#define update_idle_cfs_rq_clock_pelt(cfs_rq) do { } while (0)

/* Bandwidth control and the deadline server: not configured. */
#define account_cfs_rq_runtime(cfs_rq, delta) do { } while (0)
#define return_cfs_rq_runtime(cfs_rq) do { } while (0)
#define check_enqueue_throttle(cfs_rq) do { } while (0)
#define check_cfs_rq_runtime(cfs_rq) false
#define list_add_leaf_cfs_rq(cfs_rq) do { } while (0)
#define dl_server_active(s) 0
#define dl_server_update(s, d) do { } while (0)
/* update_curr_task(): tracing and cputime accounting. */
#define update_curr_task(p, delta) do { } while (0)

/* pick_next_entity() finishes a delayed dequeue through it (driver.c). */
static int dequeue_entities(struct rq *rq, struct sched_entity *se, int flags);

#endif
