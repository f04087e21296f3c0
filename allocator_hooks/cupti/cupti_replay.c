/* cupti_replay.c - a dump of CUPTI buffers into a .memprof capture
 * (memprof/cupti_dump.h): the same iterator, translation and ordering as
 * the backend, the same memory id names, a writer lane for the times. */
#include <memprof/cupti_dump.h>
#include <memprof/cupti_translate.h>
#include <memprof/gpu_queue.h>
#include <memprof/writer.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	mp_cupti_translator_t tr;
	mp_gpu_queue_t q;
	int nomem;
} replay_t;

static int on_buffer(void *arg, const uint8_t *buf, size_t valid)
{
	replay_t *r = arg;

	if (mp_gpu_queue_buffer(&r->q, &r->tr, buf, valid))
		r->nomem = 1;
	return 0;
}

/* The queued events, in time order, into a new capture. */
static int write_capture(replay_t *r, uint64_t origin_ns, const char *out_path, mp_diag_t *diag)
{
	mp_writer_options_t opts = {0};
	mp_writer_t *w;
	mp_writer_lane_t *lane;
	mp_gpu_event_t e;
	int rc;

	opts.command_line = "memprof cupti replay";
	if ((rc = mp_writer_open(&w, out_path, 0, &opts, diag)))
		return rc;
	if ((rc = mp_writer_lane_open(w, &lane))) {
		mp_writer_close(w);
		return mp_diag_set(diag, rc, -1, -1, "could not open a lane on the capture");
	}
	while (mp_gpu_queue_pop_before(&r->q, UINT64_MAX, &e)) {
		char name[64];
		int mem = mp_writer_memory(w, mp_gpu_memory_name(&e, name, sizeof name), mp_gpu_memory_kind(&e), 0);
		uint64_t t = e.time_ns > origin_ns ? e.time_ns - origin_ns : 0;
		if (mem < 0)
			rc = mem;
		else
			rc = mp_writer_lane_event(lane, e.kind, (uint32_t)mem, t, e.address, e.bytes);
		if (rc) {
			mp_writer_close(w);
			return mp_diag_set(diag, rc, -1, -1, "could not write an event: %s", mp_strerror(rc));
		}
	}
	mp_writer_lane_hold(lane, UINT64_MAX);
	if ((rc = mp_writer_close(w)))
		return mp_diag_set(diag, rc, -1, -1, "could not complete the capture: %s", mp_strerror(rc));
	return 0;
}

int mp_cupti_replay(const char *dump_path, const char *out_path, struct mp_cupti_stats *stats, mp_diag_t *diag)
{
	mp_cupti_dump_header_t h;
	replay_t *r = calloc(1, sizeof *r);
	struct stat st;
	void *map = NULL;
	int fd, rc;

	if (!r)
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	mp_cupti_translator_init(&r->tr);
	mp_gpu_queue_init(&r->q);
	if ((fd = open(dump_path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st)) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		mp_diag_set(diag, rc, -1, -1, "cannot open: %s", mp_strerror(rc));
		mp_diag_set_file(diag, dump_path);
		free(r);
		return rc;
	}
	if (st.st_size > 0 && (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		rc = -errno;
		close(fd);
		free(r);
		mp_diag_set(diag, rc, -1, -1, "cannot read: %s", mp_strerror(rc));
		mp_diag_set_file(diag, dump_path);
		return rc;
	}
	close(fd);
	rc = mp_cupti_dump_parse(map ? map : (const void *)"", map ? (size_t)st.st_size : 0, dump_path, &h, on_buffer,
				 r, diag);
	if (map)
		munmap(map, (size_t)st.st_size);
	if (!rc && r->nomem)
		rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	if (!rc)
		rc = write_capture(r, h.origin_ns, out_path, diag);
	if (stats)
		*stats = r->tr.stats;
	mp_gpu_queue_free(&r->q);
	free(r);
	return rc;
}
