// SPDX-License-Identifier: GPL-2.0
/*
 * eevdf-slice: the guest's sched_setattr()/sched_getattr() tool, built static
 * on the host by tools/build-guest-bin.sh (the guest has no compiler).
 *
 *   eevdf-slice check          round trips and bad inputs; exit 0 when every
 *                              answer is stock 6.12's and no bad call changed
 *                              the slice
 *   eevdf-slice set PID NS [other|batch|idle|fifo]
 *                              set the policy (and the slice of OTHER/BATCH)
 *   eevdf-slice get PID        print policy and sched_runtime
 *   eevdf-slice waker PERIOD_US SLICE_US LOOPS
 *                              periodic waker with the given slice: prints
 *                              "avg_us A max_us M" of its wakeup latency
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};

#define SCHED_ATTR_SIZE_VER1 56

static long setattr(pid_t pid, void *attr, unsigned int flags)
{
	return syscall(SYS_sched_setattr, pid, attr, flags);
}

static long getattr(pid_t pid, struct sched_attr *attr, unsigned int size)
{
	return syscall(SYS_sched_getattr, pid, attr, size, 0);
}

static int set_slice(pid_t pid, uint64_t ns, int policy)
{
	struct sched_attr a = { .size = sizeof(a), .sched_policy = policy,
				.sched_runtime = ns };

	return setattr(pid, &a, 0) ? -errno : 0;
}

static uint64_t get_slice(pid_t pid)
{
	struct sched_attr a;

	memset(&a, 0, sizeof(a));
	if (getattr(pid, &a, sizeof(a)))
		return (uint64_t)-1;
	return a.sched_runtime;
}

static uint64_t base_slice(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/debug/sched/base_slice_ns", "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int failures;

static void expect(const char *what, long long got, long long want)
{
	printf("%-44s got %-10lld want %-10lld %s\n", what, got, want,
	       got == want ? "ok" : "FAIL");
	if (got != want)
		failures++;
}

/* A bad call: its errno, and the slice must stay at `keep`. */
static void bad(const char *what, long rc, int want_errno, uint64_t keep)
{
	int e = rc ? errno : 0;

	expect(what, -e, -want_errno);
	expect("  ...slice unchanged", (long long)get_slice(0), (long long)keep);
}

static int check(void)
{
	struct sched_attr a;
	uint64_t keep = 3000000;

	expect("OTHER 3 ms kept", set_slice(0, 3000000, SCHED_OTHER) ?: (long long)get_slice(0), 3000000);
	expect("OTHER 50 us clamped to 100 us", set_slice(0, 50000, SCHED_OTHER) ?: (long long)get_slice(0), 100000);
	expect("OTHER 1 s clamped to 100 ms", set_slice(0, 1000000000ULL, SCHED_OTHER) ?: (long long)get_slice(0), 100000000);
	expect("BATCH 2 ms kept", set_slice(0, 2000000, SCHED_BATCH) ?: (long long)get_slice(0), 2000000);
	expect("OTHER 0 restores base_slice_ns", set_slice(0, 0, SCHED_OTHER) ?: (long long)get_slice(0), (long long)base_slice());
	expect("OTHER 3 ms again", set_slice(0, keep, SCHED_OTHER) ?: (long long)get_slice(0), (long long)keep);

	memset(&a, 0, sizeof(a));
	a.size = 8; /* below SCHED_ATTR_SIZE_VER0 */
	a.sched_runtime = 5000000;
	bad("bad size (8) -> E2BIG", setattr(0, &a, 0), E2BIG, keep);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_flags = 1ULL << 40;
	a.sched_runtime = 5000000;
	bad("bad sched_flags -> EINVAL", setattr(0, &a, 0), EINVAL, keep);

	a.sched_flags = 0;
	bad("bad syscall flags -> EINVAL", setattr(0, &a, 1), EINVAL, keep);

	a.sched_policy = 12345;
	bad("bad policy -> EINVAL", setattr(0, &a, 0), EINVAL, keep);

	a.sched_policy = SCHED_OTHER;
	bad("pid that does not exist -> ESRCH", setattr(4000000, &a, 0), ESRCH, keep);
	bad("NULL attr -> EINVAL", setattr(0, NULL, 0), EINVAL, keep);
	bad("bad pointer -> EFAULT", setattr(0, (void *)8, 0), EFAULT, keep);
	bad("negative pid -> EINVAL", setattr(-1, &a, 0), EINVAL, keep);

	memset(&a, 0, sizeof(a));
	expect("getattr size too small -> EINVAL", getattr(0, &a, 8) ? -errno : 0, -EINVAL);
	expect("getattr of a missing pid -> ESRCH", getattr(4000000, &a, sizeof(a)) ? -errno : 0, -ESRCH);

	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static int waker(long period_us, long slice_us, long loops)
{
	struct timespec next;
	uint64_t sum = 0, max = 0;
	long i;

	if (set_slice(0, slice_us * 1000ULL, SCHED_OTHER)) {
		perror("sched_setattr");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < loops; i++) {
		uint64_t target, lat;

		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		target = next.tv_sec * 1000000000ULL + next.tv_nsec;
		lat = now_ns() - target;
		sum += lat;
		if (lat > max)
			max = lat;
		/* a little work, as a periodic task does */
		for (volatile int k = 0; k < 2000; k++)
			;
	}
	printf("slice_us %ld avg_us %llu max_us %llu\n", slice_us,
	       (unsigned long long)(sum / loops / 1000), (unsigned long long)(max / 1000));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return check();
	if (argc >= 4 && !strcmp(argv[1], "set")) {
		int policy = SCHED_OTHER;

		if (argc > 4 && !strcmp(argv[4], "batch"))
			policy = SCHED_BATCH;
		else if (argc > 4 && !strcmp(argv[4], "idle"))
			policy = SCHED_IDLE;
		else if (argc > 4 && !strcmp(argv[4], "fifo")) {
			struct sched_attr a = { .size = sizeof(a),
						.sched_policy = SCHED_FIFO,
						.sched_priority = 1 };

			return setattr(atoi(argv[2]), &a, 0) ? 1 : 0;
		}
		return set_slice(atoi(argv[2]), strtoull(argv[3], NULL, 0),
				 policy) ? 1 : 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "get")) {
		printf("%llu\n", (unsigned long long)get_slice(atoi(argv[2])));
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "waker"))
		return waker(atol(argv[2]), atol(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: see the source\n");
	return 2;
}
