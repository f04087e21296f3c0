/* cmd_dump.c - `memprof dump FILE`: the header and every event of a capture
 * (or of a PyTorch memory snapshot), one line each, so the format can be
 * inspected. */
#include "cli.h"
#include "options.h"
#include "runs.h"

#include <memprof/capture.h>
#include <memprof/torch.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: memprof dump [--header] [--stacks] [--pid N] FILE.memprof|RUN|SNAPSHOT.pickle\n"
		     "\n"
		     "Print the capture's header, then every event in timestamp order, one per\n"
		     "line. Says when the capture ended abruptly (writer killed) and stops with an\n"
		     "error naming the block and its offset when the file is corrupted.\n"
		     "\n"
		     "  --header   print the header only\n"
		     "  --stacks   also print the call stacks and loaded objects (captures\n"
		     "             recorded with --stacks), frames as object+offset\n"
		     "  --pid N    in a 'memprof record' run, that process's capture\n"
		     "\n"
		     "RUN, a 'memprof record' run: its process tree, then the main process's\n"
		     "capture (the largest peak), or --pid's. SNAPSHOT, a PyTorch memory\n"
		     "snapshot: what it holds, then the events memprof makes of it\n"
		     "(docs/torch.md).\n");
}

static void print_header(const char *path, const mp_capture_header_t *h)
{
	time_t secs = (time_t)(h->start_wall_ns / 1000000000u);
	struct tm tm;
	char when[64] = "?";

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("capture   %s\n", path);
	printf("format    %u.%u\n", h->version_major, h->version_minor);
	printf("clock     %s, origin %" PRIu64 " ns (event times are ns since the origin)\n", h->clock,
	       h->clock_origin_ns);
	printf("started   %s.%03u UTC (%" PRIu64 " ns since the epoch)\n", when,
	       (unsigned)(h->start_wall_ns / 1000000u % 1000u), h->start_wall_ns);
	printf("host      %s\n", h->hostname);
	printf("pid       %" PRIu64 "\n", h->pid);
	if (h->ppid)
		printf("parent    %" PRIu64 "\n", h->ppid);
	if (h->exe && *h->exe)
		printf("program   %s\n", h->exe);
	printf("command   %s\n", h->command_line);
}

static void print_event(const mp_source_t *src, const mp_event_t *e)
{
	const mp_memory_info_t *m = mp_source_memory(src, e->memory);
	const char *mem = m ? m->name : "?";

	printf("#%" PRIu64 " t=%" PRIu64 " thread=%u step=%" PRId64 " %s", e->index, e->time_ns, e->thread, e->step,
	       mp_event_kind_name(e->kind));
	switch (e->kind) {
	case MP_EV_ALLOC:
		printf(" memory=%s addr=%#" PRIx64 " requested=%" PRIu64 " allocated=%" PRIu64, mem, e->address,
		       e->requested_bytes, e->allocated_bytes);
		break;
	case MP_EV_FREE:
	case MP_EV_REGION_REMOVE:
		printf(" memory=%s addr=%#" PRIx64, mem, e->address);
		break;
	case MP_EV_ALLOC_FAILED:
		printf(" memory=%s requested=%" PRIu64, mem, e->requested_bytes);
		break;
	case MP_EV_REGION_ADD:
		printf(" memory=%s base=%#" PRIx64 " size=%" PRIu64, mem, e->address, e->requested_bytes);
		break;
	case MP_EV_MARK:
		printf(" label=\"%s\"%s", mp_source_string(src, e->label),
		       e->flags & MP_EVENT_F_PHASE_BEGIN ? " phase=begin" : e->flags & MP_EVENT_F_PHASE_END ? " phase=end" : "");
		break;
	case MP_EV_MEMORY:
		printf(" id=%u name=\"%s\" kind=%s capacity=%" PRIu64, e->memory, mem,
		       m ? mp_memory_kind_name(m->kind) : "?", m ? m->capacity_bytes : 0);
		break;
	case MP_EV_DROPPED:
		printf(" memory=%s count=%" PRIu64, mem, e->requested_bytes);
		break;
	default:
		break;
	}
	if (e->kind == MP_EV_ALLOC || e->kind == MP_EV_ALLOC_FAILED) {
		if (e->op)
			printf(" op=\"%s\"", mp_source_string(src, e->op));
		if (e->region)
			printf(" region=%s", mp_region_type_name(e->region));
		if (e->dtype)
			printf(" dtype=%s", mp_source_string(src, e->dtype));
		if (e->shape)
			printf(" shape=%s", mp_source_string(src, e->shape));
		if (e->metadata)
			printf(" metadata=\"%s\"", mp_source_string(src, e->metadata));
	}
	if (e->stack)
		printf(" stack=%u", e->stack);
	if (e->flags & MP_EVENT_F_REALLOC)
		printf(" (realloc)");
	putchar('\n');
}

/* --stacks: the call stacks (frames as module+offset; an interpreter
 * frame, format 2.2, as "py:function@file:line") and the module map. */
static void print_stacks(const mp_capture_t *cap)
{
	size_t i;
	uint32_t id, f, n;
	const uint64_t *pcs;

	printf("\n%zu loaded objects\n", mp_capture_module_count(cap));
	for (i = 0; i < mp_capture_module_count(cap); i++) {
		const mp_capture_module_t *m = mp_capture_module(cap, i);
		printf("module %zu %#" PRIx64 "-%#" PRIx64 " bias=%#" PRIx64 " build-id=", i, m->start, m->end, m->bias);
		for (f = 0; f < m->build_id_len; f++)
			printf("%02x", m->build_id[f]);
		printf("%s '%s'\n", m->build_id_len ? "" : "none", m->path);
	}
	printf("\n%u call stacks\n", mp_capture_stack_count(cap));
	for (id = 1; id <= mp_capture_stack_count(cap); id++) {
		if (mp_capture_stack(cap, id, &pcs, &n))
			break;
		printf("stack %u:", id);
		for (f = 0; f < n; f++) {
			const mp_capture_module_t *m;
			const char *base, *fn, *file;
			uint32_t line;
			int kind;
			if (pcs[f] & MP_STACK_FRAME_TAG) {
				if (mp_capture_frame(cap, pcs[f], &fn, &file, &line, &kind))
					printf(" frame#%" PRIu64 "?", (uint64_t)(pcs[f] & ~MP_STACK_FRAME_TAG));
				else
					printf(" %s:%s@%s:%" PRIu32, kind == MP_FRAME_PYTHON ? "py" : mp_frame_kind_name(kind),
					       fn[0] ? fn : "?", file[0] ? file : "?", line);
				continue;
			}
			m = mp_capture_module_at(cap, pcs[f]);
			base = m ? strrchr(m->path, '/') : NULL;
			if (m)
				printf(" %s+%#" PRIx64, base ? base + 1 : m->path, pcs[f] - m->bias);
			else
				printf(" %#" PRIx64, pcs[f]);
		}
		putchar('\n');
	}
}

/* Every event of src, one a line, counted in *n. MP_EXIT_OK, or the exit
 * code of a read error (in diag: the one the source was opened with, which
 * names its file) after saying how far it got. */
static int print_events(mp_source_t *src, uint64_t *n, mp_diag_t *diag)
{
	mp_event_t ev;
	int rc;

	putchar('\n');
	while ((rc = mp_source_next(src, &ev, diag)) == 1) {
		print_event(src, &ev);
		(*n)++;
	}
	fflush(stdout);
	if (rc < 0) {
		printf("\n%" PRIu64 " events read before the error\n", *n);
		fflush(stdout);
		return mp_cli_diag(diag);
	}
	return MP_EXIT_OK;
}

/* The header and events of one capture (and its stacks). */
static int dump_capture(const char *path, int header_only, int stacks)
{
	mp_capture_t *cap;
	mp_source_t *src;
	mp_diag_t diag;
	uint64_t n = 0;
	int rc;

	if (mp_capture_open(&cap, path, &diag))
		return mp_cli_diag(&diag);
	print_header(path, mp_capture_header(cap));
	if (header_only) {
		mp_capture_close(cap);
		return MP_EXIT_OK;
	}
	src = mp_capture_source(cap);
	if ((rc = print_events(src, &n, &diag)) != MP_EXIT_OK) {
		mp_capture_close(cap);
		return rc;
	}
	if (stacks)
		print_stacks(cap);
	if (mp_source_end_status(src) == MP_END_ABRUPT) {
		printf("\n%" PRIu64 " events; the capture ended abruptly (no trailer: the writer was killed or "
		       "is still running): read up to its last complete block (%" PRIu64 " blocks)\n",
		       n, mp_capture_blocks_read(cap));
	} else if (mp_source_end_status(src) == MP_END_WRITE_FAILED) {
		const mp_capture_trailer_t *t = mp_capture_trailer(cap);
		printf("\n%" PRIu64 " events; the writer stopped: %s at offset %" PRIu64 " (trailer: %" PRIu64
		       " events, %" PRIu64 " blocks, last horizon t=%" PRIu64 " ns, stopped at t=%" PRIu64 " ns)\n",
		       n, strerror((int)t->write_errno), t->write_offset, t->events, t->blocks, t->complete_ns,
		       t->end_time_ns);
	} else {
		const mp_capture_trailer_t *t = mp_capture_trailer(cap);
		printf("\n%" PRIu64 " events; the capture ended cleanly (trailer: %" PRIu64 " events, %" PRIu64
		       " dropped, %" PRIu64 " blocks, %" PRIu64 " strings, ended at t=%" PRIu64 " ns)\n",
		       n, t->events, t->dropped, t->blocks, t->strings, t->end_time_ns);
	}
	mp_capture_close(cap);
	return MP_EXIT_OK;
}

/* A PyTorch snapshot: its counts, then its events (the trace entries as
 * the report sees them: metadata, marks, the state before the trace). */
static int dump_snapshot(const char *path, int header_only)
{
	mp_source_t *src;
	mp_torch_info_t ti;
	mp_diag_t diag;
	uint64_t n = 0;
	int rc;

	mp_diag_clear(&diag);
	if (mp_torch_open_source(&src, path, NULL, &diag))
		return mp_cli_diag(&diag);
	mp_torch_info(src, &ti);
	printf("snapshot  %s\n", path);
	printf("holds     %" PRIu32 " devices, %" PRIu64 " segments and %" PRIu64 " blocks at dump time, %" PRIu64
	       " trace entries\n", ti.devices, ti.segments, ti.blocks, ti.trace_entries);
	printf("rebuilt   %" PRIu64 " allocations before the trace, %" PRIu64 " frees awaiting another stream\n",
	       ti.before_trace, ti.pending_frees);
	if (!header_only) {
		if ((rc = print_events(src, &n, &diag)) != MP_EXIT_OK) {
			mp_source_close(src);
			return rc;
		}
		printf("\n%" PRIu64 " events\n", n);
	}
	mp_source_close(src);
	return MP_EXIT_OK;
}

int cmd_dump(int argc, char **argv)
{
	int header_only = 0, stacks = 0, rc;
	const struct option opts[] = {
		{"header", no_argument, &header_only, 1},
		{"stacks", no_argument, &stacks, 1},
		{NULL, 0, NULL, 0},
	};
	cli_input_args_t args = {0};
	cli_parser_t p = {.command = "dump", .usage = usage, .shortopts = "h", .own = opts, .inputs = CLI_IN_PID,
			  .unknown_prints_usage = 1, .in = &args};
	cli_runs_t runs = {0};

	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (optind != argc - 1) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if ((rc = cli_runs_expand(&runs, argv + optind, 1, &args.sel)) != MP_EXIT_OK) {
		cli_runs_free(&runs);
		return rc;
	}
	cli_runs_print(stdout, &runs, 1); /* a dump lists every process */
	if (mp_torch_path_is_candidate(runs.files[0]))
		rc = dump_snapshot(runs.files[0], header_only);
	else
		rc = dump_capture(runs.files[0], header_only, stacks);
	cli_runs_free(&runs);
	return rc;
}
