/* install_run.c - see install_run.h. */
#include "test_common.h"

#include "install_run.h"
#include "json_check.h"

#include <fcntl.h>

#define IT_DEADLINE_MS 120000 /* one command: cmake's configure takes a few seconds */

int it_mkdir(char *dir)
{
	snprintf(dir, 64, "/tmp/memprof-install-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

void it_rmdir(const char *dir)
{
	char cmd[128];

	if (strncmp(dir, "/tmp/memprof-install-", 21) != 0)
		return; /* only ever ours */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

/* fork + sh -c cmd, stdout to out_fd (-1: the log), stderr to the log. */
static int run(const char *dir, const char *cmd, int out_fd)
{
	char log[128];
	int fd, status;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/log", dir);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (dprintf(fd, "$ %s\n", cmd) < 0) {
		close(fd);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0); /* the deadline kills the whole group */
		dup2(out_fd >= 0 ? out_fd : fd, 1);
		dup2(fd, 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd);
	if (pid < 0)
		return -1;
	status = mp_test_wait_deadline(pid, -pid, IT_DEADLINE_MS);
	return status;
}

static void fail_with_log(const char *dir, const char *cmd, int status)
{
	char path[128];
	char *text;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "r");
	fprintf(stderr, "command failed (status %d): %s\n", status, cmd);
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0) {
		long from = n > 8000 ? n - 8000 : 0; /* the end says why */
		fseek(f, from, SEEK_SET);
		text = calloc(1, (size_t)(n - from) + 1);
		if (text && fread(text, 1, (size_t)(n - from), f) > 0)
			fprintf(stderr, "--- %s (end) ---\n%s\n---\n", path, text);
		free(text);
	}
	if (f)
		fclose(f);
	fail();
}

int it_sh(const char *dir, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return run(dir, cmd, -1);
}

void it_sh_ok(const char *dir, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	status = run(dir, cmd, -1);
	if (status != 0)
		fail_with_log(dir, cmd, status);
}

char *it_sh_out(const char *dir, const char *fmt, ...)
{
	char cmd[8192], path[128];
	va_list ap;
	int status, fd;
	FILE *f;
	char *text;
	long n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/stdout", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	status = run(dir, cmd, fd);
	close(fd);
	if (status != 0)
		fail_with_log(dir, cmd, status);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return text;
}

json_t *it_report(const char *dir, const char *memprof, const char *args, const char *cap)
{
	char *text = it_sh_out(dir, "'%s' report --json %s '%s'", memprof, args, cap);
	json_t *doc = mp_test_json_loads(text, "report");

	free(text);
	return doc;
}

const json_t *it_device(const json_t *report, const char *name)
{
	const json_t *devices = json_object_get(report, "devices"), *d;
	size_t i;

	json_array_foreach(devices, i, d)
	{
		if (!strcmp(json_string_value(json_object_get(d, "name")), name))
			return d;
	}
	fprintf(stderr, "no memory id '%s' in the report\n", name);
	fail();
	return NULL;
}

const json_t *it_row(const json_t *device, const char *list, const char *op, uint64_t requested)
{
	const json_t *rows = json_object_get(device, list), *r;
	size_t i;

	json_array_foreach(rows, i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "op")), op) &&
		    (uint64_t)json_integer_value(json_object_get(r, "requested_bytes")) == requested)
			return r;
	}
	return NULL;
}

int64_t it_int(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v)) {
		fprintf(stderr, "'%s' is not an integer\n", key);
		fail();
	}
	return (int64_t)json_integer_value(v);
}

void it_row_is(const json_t *row, const char *region, const char *dtype, const char *shape, int64_t occurrences)
{
	assert_non_null(row);
	assert_string_equal(json_string_value(json_object_get(row, "region")), region);
	assert_string_equal(json_string_value(json_object_get(row, "dtype")), dtype);
	assert_string_equal(json_string_value(json_object_get(row, "shape")), shape);
	assert_int_equal(it_int(row, "occurrences"), occurrences);
	/* what the breakdown sums: every occurrence's allocated bytes */
	assert_int_equal(it_int(row, "total_bytes"), it_int(row, "allocated_bytes") * occurrences);
	assert_true(it_int(row, "allocated_bytes") >= it_int(row, "requested_bytes"));
}
