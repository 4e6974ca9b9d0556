/* LD_PRELOAD shim for QEMU 7.2 logging speed: qemu_log() fflush()es the log
 * FILE after every message (one write(2) per logged TB). Make fflush() a no-op
 * on FILEs open on a "*.log" file under a directory named "insnprof", and give
 * such FILEs a 4 MiB buffer; fclose() still flushes everything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *cache_f;
static int cache_fd = -1, cache_skip;

static int is_log(FILE *f)
{
	int fd = fileno(f);
	char p[64], t[4096];
	ssize_t n;

	if (f == cache_f && fd == cache_fd)
		return cache_skip;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, t, sizeof(t) - 1);
	cache_skip = 0;
	if (n > 4) {
		t[n] = 0;
		cache_skip = strstr(t, "/insnprof/") && !strcmp(t + n - 4, ".log");
	}
	cache_f = f;
	cache_fd = fd;
	if (cache_skip)
		setvbuf(f, NULL, _IOFBF, 4 << 20);
	return cache_skip;
}

int fflush(FILE *f)
{
	static int (*real)(FILE *);
	if (!real)
		real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
	if (f && f != stdout && f != stderr && is_log(f))
		return 0;
	return real(f);
}

int fclose(FILE *f)
{
	static int (*real)(FILE *);
	if (!real)
		real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
	if (f == cache_f) {
		cache_f = NULL;
		cache_fd = -1;
	}
	return real(f);
}
