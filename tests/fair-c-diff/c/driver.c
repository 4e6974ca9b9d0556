// SPDX-License-Identifier: GPL-2.0
/*
 * The harness's side of the C: one runqueue, its tasks, and the calls the core
 * (kernel/sched/core.c) makes into fair.c, in core.c's order, for the
 * operations the harness drives. build.rs appends this file to the extracted
 * fair.c functions, so that it can call their static definitions.
 *
 * Every decision is fair.c's: this file only sequences the calls (wakeup,
 * sleep, migration, the sched_change of set_user_nice() and
 * sched_setattr(), yield, the pick and the switch) and reads state back.
 */

#define FCD_MAX_TASKS 1024

struct rq fcd_rq;
static struct task_struct fcd_tasks[FCD_MAX_TASKS];
u64 sysctl_sched_features;
unsigned int sysctl_sched_base_slice;
u64 fcd_tick_nsec;
unsigned long fcd_warnings;
int fcd_warn_line;
/* The task whose delayed dequeue pick_next_entity() finished, or -1. */
static int fcd_blocked = -1;

/* What the harness reads back of an entity. */
struct fcd_entity {
	u64 vruntime;
	u64 deadline;
	u64 slice;
	u64 min_vruntime;
	u64 min_slice;
	s64 vlag;
	u64 weight;
	u32 inv_weight;
	u8 on_rq;
	u8 sched_delayed;
	u8 rel_deadline;
	u8 custom_slice;
};

/* What the harness reads back of the runqueue. */
struct fcd_cfs_rq {
	u64 zero_vruntime;
	s64 avg_vruntime;
	u64 avg_load;
	u64 load_weight;
	u64 clock_task;
	unsigned long warnings;
	u32 nr_running;
	s32 curr;
	s32 next;
	s32 need_resched;
	s32 warn_line;
};

static const char *const fcd_feature_names[] = {
#define SCHED_FEAT(name, enabled) #name,
#include "sched_features.h"
#undef SCHED_FEAT
};

static int fcd_index(struct sched_entity *se)
{
	if (!se)
		return -1;
	return (int)(task_of(se) - fcd_tasks);
}

static struct sched_entity *fcd_se(int i)
{
	return &fcd_tasks[i].se;
}

/* pick_next_entity() finishes a delayed dequeue through dequeue_entities(); for
 * one runqueue that is dequeue_entity(), after which the task is blocked. */
static int dequeue_entities(struct rq *rq, struct sched_entity *se, int flags)
{
	fcd_blocked = fcd_index(se);
	return dequeue_entity(cfs_rq_of(se), se, flags);
}

/* The bit of features.h's flag @name in sysctl_sched_features, or -1. */
int fcd_feature_bit(const char *name)
{
	for (int i = 0; i < __SCHED_FEAT_NR; i++) {
		const char *a = fcd_feature_names[i], *b = name;

		while (*a && *a == *b)
			a++, b++;
		if (!*a && !*b)
			return i;
	}
	return -1;
}

int fcd_max_tasks(void)
{
	return FCD_MAX_TASKS;
}

/* An empty runqueue at @zero_vruntime (init_cfs_rq() starts at -2^20). */
void fcd_reset(u64 features, unsigned int base_slice, u64 tick_nsec, u64 zero_vruntime)
{
	for (int i = 0; i < FCD_MAX_TASKS; i++) {
		struct task_struct *p = &fcd_tasks[i];

		*p = (struct task_struct){ 0 };
		p->policy = SCHED_NORMAL;
		RB_CLEAR_NODE(&p->se.run_node);
	}
	fcd_rq = (struct rq){ 0 };
	fcd_rq.cfs.tasks_timeline = RB_ROOT_CACHED;
	fcd_rq.cfs.zero_vruntime = zero_vruntime;
	/* Any start: exec_start is only ever subtracted from it. */
	fcd_rq.clock_task = 1000000000ULL;
	sysctl_sched_features = features;
	sysctl_sched_base_slice = base_slice;
	fcd_tick_nsec = tick_nsec;
	fcd_warnings = 0;
	fcd_warn_line = 0;
	fcd_blocked = -1;
}

void fcd_set_features(u64 features)
{
	sysctl_sched_features = features;
}

/*
 * A new task @i, not queued: __sched_fork()'s EEVDF fields (vruntime, vlag,
 * rel_deadline and the run times cleared), with the weight set_load_weight()
 * gives it and the slice it inherited from its parent (the slice and
 * custom_slice survive fork). The deadline is the parent's too; it is set to 0
 * here, and place_entity() sets it.
 */
void fcd_new_task(int i, unsigned long weight, u32 inv_weight, u64 slice, int custom)
{
	struct sched_entity *se = fcd_se(i);

	SCHED_WARN_ON(se->on_rq);
	se->on_rq = 0;
	se->exec_start = 0;
	se->sum_exec_runtime = 0;
	se->prev_sum_exec_runtime = 0;
	se->nr_migrations = 0;
	se->vruntime = 0;
	se->vlag = 0;
	se->rel_deadline = 0;
	se->deadline = 0;
	se->sched_delayed = 0;
	se->load.weight = weight;
	se->load.inv_weight = inv_weight;
	se->slice = slice;
	se->custom_slice = custom;
}

/* A tick's worth of time: the clock moves and current is charged (entity_tick()). */
void fcd_tick(u64 delta_ns)
{
	fcd_rq.clock_task += delta_ns;
	update_curr(&fcd_rq.cfs);
}

/*
 * wakeup_preempt() for the woken task @i: with a fair current,
 * check_preempt_wakeup_fair(); with none (the idle task runs), a reschedule.
 */
void fcd_wakeup_preempt(int i, int wake_flags)
{
	struct sched_entity *curr = fcd_rq.cfs.curr;

	if (!curr) {
		resched_curr(&fcd_rq);
		return;
	}
	fcd_rq.curr = task_of(curr);
	check_preempt_wakeup_fair(&fcd_rq, &fcd_tasks[i], wake_flags);
}

/* activate_task(): enqueue_task_fair() of a task that is not queued. */
void fcd_enqueue(int i, int flags)
{
	enqueue_entity(&fcd_rq.cfs, fcd_se(i), flags);
}

/* ttwu_runnable() of a delayed task: enqueue_task_fair(ENQUEUE_DELAYED). */
void fcd_requeue_delayed(int i)
{
	requeue_delayed_entity(fcd_se(i));
}

/* dequeue_task_fair() for one level: 1 when @i left, 0 when its dequeue was delayed. */
int fcd_dequeue(int i, int flags)
{
	return dequeue_entity(&fcd_rq.cfs, fcd_se(i), flags);
}

/*
 * pick_task_fair() on one runqueue: -1 when nothing is queued, else the task
 * pick_next_entity() returned, or -2 when it finished the delayed dequeue of
 * the task it picked (*blocked: which), after which core.c picks again.
 */
int fcd_pick(int *blocked)
{
	struct cfs_rq *cfs_rq = &fcd_rq.cfs;
	struct sched_entity *se;

	*blocked = -1;
	if (!cfs_rq->nr_running)
		return -1;
	if (cfs_rq->curr && cfs_rq->curr->on_rq)
		update_curr(cfs_rq);
	fcd_blocked = -1;
	se = pick_next_entity(&fcd_rq, cfs_rq);
	if (!se) {
		*blocked = fcd_blocked;
		return -2;
	}
	return fcd_index(se);
}

/*
 * put_prev_set_next_task() to @i (nothing when @i is current), or, with
 * @i == -1, current put away for the idle task; __schedule() clears the
 * reschedule request.
 */
void fcd_switch(int i)
{
	struct cfs_rq *cfs_rq = &fcd_rq.cfs;
	struct sched_entity *prev = cfs_rq->curr;
	struct sched_entity *se = i < 0 ? NULL : fcd_se(i);

	if (se != prev) {
		if (prev)
			put_prev_entity(cfs_rq, prev);
		if (se)
			set_next_entity(cfs_rq, se);
	}
	fcd_rq.need_resched = 0;
}

/* A group entity's new share: update_cfs_group()'s reweight_entity(). */
void fcd_reweight(int i, unsigned long weight)
{
	reweight_entity(&fcd_rq.cfs, fcd_se(i), weight);
}

/*
 * The sched_change of set_user_nice() and __sched_setscheduler(): a queued
 * task is dequeued with DEQUEUE_SAVE, current put back, the change made, the
 * task enqueued with ENQUEUE_RESTORE and set as current again. (prio_changed()
 * after it is the core's, not EEVDF's, and left out.)
 */
static void fcd_change_begin(struct sched_entity *se, int *queued, int *running)
{
	*queued = se->on_rq;
	*running = fcd_rq.cfs.curr == se;
	if (*queued)
		dequeue_entity(&fcd_rq.cfs, se, DEQUEUE_SAVE | DEQUEUE_MOVE | DEQUEUE_NOCLOCK);
	if (*running)
		put_prev_entity(&fcd_rq.cfs, se);
}

static void fcd_change_end(struct sched_entity *se, int queued, int running)
{
	if (queued)
		enqueue_entity(&fcd_rq.cfs, se, ENQUEUE_RESTORE | ENQUEUE_MOVE | ENQUEUE_NOCLOCK);
	if (running)
		set_next_entity(&fcd_rq.cfs, se);
}

/* set_user_nice(): reweight_task_fair() inside the sched_change. */
void fcd_renice(int i, unsigned long weight, u32 inv_weight)
{
	struct sched_entity *se = fcd_se(i);
	int queued, running;

	fcd_change_begin(se, &queued, &running);
	reweight_entity(&fcd_rq.cfs, se, weight);
	se->load.inv_weight = inv_weight;
	fcd_change_end(se, queued, running);
}

/* sched_setattr() of SCHED_OTHER: __setscheduler_params()'s slice rule
 * (kernel/sched/syscalls.c) inside the sched_change. */
void fcd_setattr(int i, u64 sched_runtime)
{
	struct sched_entity *se = fcd_se(i);
	int queued, running;

	fcd_change_begin(se, &queued, &running);
	if (sched_runtime) {
		se->custom_slice = 1;
		se->slice = clamp_t(u64, sched_runtime, NSEC_PER_MSEC / 10, NSEC_PER_MSEC * 100);
	} else {
		se->custom_slice = 0;
		se->slice = sysctl_sched_base_slice;
	}
	fcd_change_end(se, queued, running);
}

/* sched_yield() of current: yield_task_fair(); the schedule() after it is the
 * harness's next operation. */
void fcd_yield(void)
{
	fcd_rq.nr_running = fcd_rq.cfs.nr_running;
	fcd_rq.curr = task_of(fcd_rq.cfs.curr);
	yield_task_fair(&fcd_rq);
}

/* The observations, none of which changes the runqueue. */

int fcd_pick_eevdf(void)
{
	return fcd_index(pick_eevdf(&fcd_rq.cfs));
}

int fcd_eligible(int i)
{
	return entity_eligible(&fcd_rq.cfs, fcd_se(i));
}

int fcd_protected(int i)
{
	return protect_slice(fcd_se(i));
}

/* V, without moving zero_vruntime (avg_vruntime() does). */
u64 fcd_avg_vruntime(void)
{
	struct cfs_rq *cfs_rq = &fcd_rq.cfs;
	s64 avg = cfs_rq->avg_vruntime;
	u64 zero = cfs_rq->zero_vruntime;
	u64 v = avg_vruntime(cfs_rq);

	cfs_rq->avg_vruntime = avg;
	cfs_rq->zero_vruntime = zero;
	return v;
}

u64 fcd_min_slice(void)
{
	return cfs_rq_min_slice(&fcd_rq.cfs);
}

void fcd_entity(int i, struct fcd_entity *out)
{
	struct sched_entity *se = fcd_se(i);

	out->vruntime = se->vruntime;
	out->deadline = se->deadline;
	out->slice = se->slice;
	out->min_vruntime = se->min_vruntime;
	out->min_slice = se->min_slice;
	out->vlag = se->vlag;
	out->weight = se->load.weight;
	out->inv_weight = se->load.inv_weight;
	out->on_rq = se->on_rq;
	out->sched_delayed = se->sched_delayed;
	out->rel_deadline = se->rel_deadline;
	out->custom_slice = se->custom_slice;
}

/* The in-order position of @i in the timeline (deadline order), or -1. */
int fcd_tree_position(int i)
{
	struct rb_node *target = &fcd_se(i)->run_node, *n;
	int pos = 0;

	for (n = rb_first_cached(&fcd_rq.cfs.tasks_timeline); n; n = rb_next(n), pos++) {
		if (n == target)
			return pos;
	}
	return -1;
}

void fcd_cfs_rq(struct fcd_cfs_rq *out)
{
	struct cfs_rq *cfs_rq = &fcd_rq.cfs;

	out->zero_vruntime = cfs_rq->zero_vruntime;
	out->avg_vruntime = cfs_rq->avg_vruntime;
	out->avg_load = cfs_rq->avg_load;
	out->load_weight = cfs_rq->load.weight;
	out->clock_task = fcd_rq.clock_task;
	out->warnings = fcd_warnings;
	out->nr_running = cfs_rq->nr_running;
	out->curr = fcd_index(cfs_rq->curr);
	out->next = fcd_index(cfs_rq->next);
	out->need_resched = fcd_rq.need_resched;
	out->warn_line = fcd_warn_line;
}

/* sched.h's flag values, for the Rust side of the harness. */
struct fcd_flags {
	int enqueue_wakeup, enqueue_restore, enqueue_migrated, enqueue_initial;
	int dequeue_sleep, dequeue_save, dequeue_special, dequeue_delayed;
	int wf_ttwu, wf_fork, wf_sync, wf_rq_selected;
};

const struct fcd_flags fcd_flags = {
	ENQUEUE_WAKEUP, ENQUEUE_RESTORE, ENQUEUE_MIGRATED, ENQUEUE_INITIAL,
	DEQUEUE_SLEEP, DEQUEUE_SAVE, DEQUEUE_SPECIAL, DEQUEUE_DELAYED,
	WF_TTWU, WF_FORK, WF_SYNC, WF_RQ_SELECTED,
};
