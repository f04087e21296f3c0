/* test_report_nospace.c - a capture cut by the file system says why.
 *
 * A child process writes events under a 256 KiB file size limit
 * (RLIMIT_FSIZE: the writer meets EFBIG as it would ENOSPC on a full disk,
 * without a file system to fill), flushing every 2000 events, until a flush
 * fails. SIGXFSZ keeps its default action: the writer must stop below the
 * limit, never write past it (which would kill the child). Then:
 *  - the child's close returns -EFBIG and it exits 0;
 *  - the file is within the limit, and ends with a trailer that says EFBIG
 *    at the offset where its blocks end;
 *  - the reader returns a gap-free prefix of the events, at least every
 *    event written before the last flush that succeeded, as many as the
 *    trailer counts, and ends MP_END_WRITE_FAILED (not abrupt);
 *  - the summary (what `memprof record` prints) says EFBIG, not "ended
 *    abruptly";
 *  - `memprof report` says "cut short: the file size limit was reached"
 *    in text, and "end": "write_failed" with the reason in JSON. */
#include "test_common.h"

#include "json_check.h"
#include <memprof/capsummary.h>
#include <memprof/capture.h>

#include <errno.h>
#include <jansson.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define LIMIT (256u * 1024u)
#define BATCH 2000

/* The child: events until a flush fails; writes to fd the events written
 * before the last flush that succeeded and all it wrote. Exit 0 when close
 * said EFBIG. */
static void child(const char *path, int fd)
{
	struct rlimit rl = {LIMIT, LIMIT};
	uint64_t i = 0, ok = 0, x = 88172645463325252ull, counts[2];
	mp_writer_t *w;
	mp_diag_t d;
	int rc;

	if (setrlimit(RLIMIT_FSIZE, &rl) || mp_writer_open(&w, path, 1, NULL, &d) ||
	    mp_writer_memory(w, "host", MP_MEMORY_HOST, 0) < 0)
		_exit(2);
	for (;;) {
		uint64_t k;
		for (k = 0; k < BATCH; k++, i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* sizes that do not compress away */
			mp_writer_alloc(w, 0, i << 4, 1 + x % 100000, 16 + x % 100000);
		}
		if (mp_writer_flush(w))
			break;
		ok = i;
		if (i > 100000000)
			_exit(3); /* never stopped */
	}
	counts[0] = ok;
	counts[1] = i;
	if (write(fd, counts, sizeof(counts)) != (ssize_t)sizeof(counts))
		_exit(4);
	rc = mp_writer_close(w);
	_exit(rc == -EFBIG ? 0 : 5);
}

static char *run_report(const char *args)
{
	char cmd[4096], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "%s report %s", MEMPROF, args);
	out = mp_test_sh(cmd, &st);
	assert_int_equal(st, 0);
	return out;
}

static void test_file_size_limit(void **state)
{
	char *path = mp_test_tmpfile(".memprof"), args[4200], *out;
	uint64_t counts[2], next = 0;
	int fds[2], status, rc;
	const mp_capture_trailer_t *t;
	mp_capture_summary_t sum;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t d;
	struct stat sb;
	json_t *doc;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		child(path, fds[1]);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], counts, sizeof(counts)), (ssize_t)sizeof(counts));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("the child ended with status 0x%x (SIGXFSZ is %d)", status, SIGXFSZ);
	printf("%llu events written, %llu before the last good flush\n", (unsigned long long)counts[1],
	       (unsigned long long)counts[0]);
	assert_true(counts[0] > 0 && counts[0] < counts[1]);

	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size <= (off_t)LIMIT);

	assert_int_equal(mp_capture_open(&cap, path, &d), 0);
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, &d)) == 1) {
		if (ev.kind != MP_EV_ALLOC)
			continue;
		assert_int_equal(ev.address, next << 4); /* no gap, no duplicate */
		next++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(mp_source_end_status(src), MP_END_WRITE_FAILED);
	assert_non_null(t = mp_capture_trailer(cap));
	assert_int_equal(t->write_errno, EFBIG);
	assert_int_equal(t->events, next);
	assert_true(next >= counts[0] && next <= counts[1]);
	/* the blocks end where it stopped, at least the reserve below the
	 * limit; the trailer follows (16 bytes of frame and CRCs, 8 varints) */
	assert_true(t->write_offset <= LIMIT - 4096);
	assert_true((uint64_t)sb.st_size > t->write_offset + 16 && (uint64_t)sb.st_size <= t->write_offset + 16 + 80);
	assert_true(t->complete_ns > 0 && t->complete_ns <= t->end_time_ns);
	printf("stopped at offset %llu of a %llu-byte file, %llu events read\n", (unsigned long long)t->write_offset,
	       (unsigned long long)sb.st_size, (unsigned long long)next);
	mp_capture_close(cap);

	assert_int_equal(mp_capture_summary_read(path, &sum, &d), 0);
	assert_int_equal(sum.write_errno, EFBIG);
	assert_int_equal(sum.ended_cleanly, 0);
	assert_true(sum.write_offset <= LIMIT - 4096);
	mp_capture_summary_free(&sum);

	snprintf(args, sizeof(args), "'%s'", path);
	out = run_report(args);
	assert_non_null(strstr(out, "events, capture cut short: the file size limit was reached (EFBIG) at "));
	assert_non_null(strstr(out, " are not all in it"));
	assert_null(strstr(out, "cut off"));
	free(out);
	snprintf(args, sizeof(args), "--json '%s'", path);
	out = run_report(args);
	doc = mp_test_json_loads(out, "report");
	assert_string_equal(json_string_value(json_object_get(doc, "end")), "write_failed");
	assert_non_null(strstr(json_string_value(json_object_get(doc, "end_reason")),
			       "cut short: the file size limit was reached (EFBIG) at "));
	json_decref(doc);
	free(out);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_size_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
