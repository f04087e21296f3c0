/* report_ranks.c - `memprof report RUN0 RUN1 ...`: one run per rank of a
 * multi-rank job, a table of the ranks from their captures' summaries
 * (memprof/report_ranks.h, docs/report.md "Ranks"). */
#include <memprof/report_ranks.h>

#include <memprof/output/csv.h>
#include <memprof/output/json.h>
#include <memprof/output/units.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Rank r's main process and the memory id of its peak (NULL: none). */
static const mp_run_proc_t *rank_proc(mp_run_t *const *runs, int r, const mp_run_memory_t **mem)
{
	int k = mp_run_main(runs[r]);
	const mp_run_proc_t *p = k >= 0 ? mp_run_proc(runs[r], (size_t)k) : NULL;

	*mem = NULL;
	for (size_t m = 0; p && m < p->memory_count; m++)
		if (!*mem || p->memories[m].peak_bytes > (*mem)->peak_bytes)
			*mem = &p->memories[m];
	return p;
}

int mp_report_ranks_highest(mp_run_t *const *runs, size_t nruns)
{
	int best = 0;

	for (int r = 0; r < (int)nruns; r++) {
		const mp_run_memory_t *m, *b;
		rank_proc(runs, r, &m);
		rank_proc(runs, best, &b);
		if (m && (!b || m->peak_bytes > b->peak_bytes))
			best = r; /* a tie keeps the first */
	}
	return best;
}

void mp_report_rank_detail(mp_report_rank_detail_t *d, const mp_report_input_t *in)
{
	const mp_solver_device_t *best = NULL;

	d->step = -1;
	d->op = NULL;
	for (size_t i = 0; in && in->solver && i < mp_solver_device_count(in->solver); i++) {
		const mp_solver_device_t *x = mp_solver_device(in->solver, i);
		if (x->has_peak && (!best || x->peak_bytes > best->peak_bytes))
			best = x;
	}
	if (!best)
		return;
	d->step = best->peak.step;
	if (best->has_breakdown && best->breakdown_count) {
		/* the largest group live at the peak */
		const mp_solver_row_t *row = &best->breakdown[0];
		d->op = row->unknown_origin ? "(made before the capture)"
			: row->op	    ? mp_source_string(in->source, row->op)
					    : NULL;
	}
}

/* The program of a process: argv[0]'s last component. */
static void program(const mp_run_proc_t *p, char *buf, size_t n)
{
	const char *cmd = *p->command_line ? p->command_line : p->name, *prog = cmd;
	size_t len = strcspn(cmd, " ");

	for (size_t i = 0; i < len; i++)
		if (cmd[i] == '/')
			prog = cmd + i + 1;
	snprintf(buf, n, "%.*s", (int)(len - (size_t)(prog - cmd)), prog);
}

static const char *seconds(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%" PRIu64 ".%03" PRIu64 " s", ns / 1000000000u, ns / 1000000u % 1000u);
	return buf;
}

void mp_report_ranks_text(FILE *out, mp_run_t *const *runs, size_t nruns, int high, const mp_report_rank_detail_t *d)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int lo_r = 0;
	char b[64], t[32], s[24], prog[64];

	fprintf(out, "Ranks: %zu runs, one rank each (its main process); peaks from the captures' summaries\n",
		nruns);
	fprintf(out, "  %-5s %-8s %-16s %-10s %28s %12s %6s  %-24s %s\n", "rank", "pid", "program", "memory", "peak",
		"when", "step", "main op", "run");
	for (int r = 0; r < (int)nruns; r++) {
		const mp_run_memory_t *m;
		const mp_run_proc_t *p = rank_proc(runs, r, &m);
		uint64_t peak = m ? m->peak_bytes : 0;
		const char *op = r == high && d->op && *d->op ? d->op : "-";

		if (r == high && d->step >= 0)
			snprintf(s, sizeof(s), "%" PRId64, d->step);
		else
			snprintf(s, sizeof(s), "-");
		if (p)
			program(p, prog, sizeof(prog));
		fprintf(out, "%c %-5d %-8" PRIu64 " %-16s %-10s %28s %12s %6s  %-24s %s\n", r == high ? '*' : ' ', r,
			p ? p->pid : 0, p ? prog : "-", m ? m->name : "-", mp_bytes_exact(b, sizeof(b), peak),
			m ? seconds(t, sizeof(t), m->peak_time_ns) : "-", s, op, mp_run_path(runs[r]));
		if (peak < lo)
			lo = peak, lo_r = r;
		if (peak > hi)
			hi = peak;
	}
	fprintf(out, "  (* the highest peak, analysed below; step and main op -- the largest group live at\n"
		     "   the peak -- come from that analysis, not from the summaries: '-' for the others)\n");
	fprintf(out, "  skew: the highest peak is rank %d's, %s", high, mp_bytes_exact(b, sizeof(b), hi));
	fprintf(out, ", the lowest rank %d's, %s", lo_r, mp_bytes_exact(b, sizeof(b), lo));
	if (lo)
		fprintf(out, ": %.2fx\n\n", (double)hi / (double)lo);
	else
		fputs("\n\n", out);
}

json_t *mp_report_ranks_json(mp_run_t *const *runs, size_t nruns, int high, const mp_report_rank_detail_t *d)
{
	int bad = 0;
	json_t *o = mp_json_object(&bad), *rows = json_array();

	mp_json_put(o, "highest", json_integer(high), &bad);
	mp_json_put(o, "rule", json_string("one rank per run given, its main process"), &bad);
	mp_json_put(o, "rows", rows, &bad);
	for (int r = 0; !bad && r < (int)nruns; r++) {
		const mp_run_memory_t *m;
		const mp_run_proc_t *p = rank_proc(runs, r, &m);
		json_t *j = mp_json_object(&bad);
		char prog[64] = "";

		if (p)
			program(p, prog, sizeof(prog));
		mp_json_put(j, "rank", json_integer(r), &bad);
		mp_json_put(j, "run", mp_json_text(mp_run_path(runs[r])), &bad);
		mp_json_put(j, "capture", p ? mp_json_text(p->path) : json_null(), &bad);
		mp_json_put(j, "pid", p ? mp_json_u64(p->pid) : json_null(), &bad);
		mp_json_put(j, "program", mp_json_text(prog), &bad);
		mp_json_put(j, "memory", m ? mp_json_text(m->name) : json_null(), &bad);
		mp_json_put(j, "peak_bytes", mp_json_u64(m ? m->peak_bytes : 0), &bad);
		mp_json_put(j, "peak_time_ns", m ? mp_json_u64(m->peak_time_ns) : json_null(), &bad);
		mp_json_put(j, "step", r == high && d->step >= 0 ? json_integer(d->step) : json_null(), &bad);
		mp_json_put(j, "op", r == high && d->op && *d->op ? mp_json_text(d->op) : json_null(), &bad);
		if (json_array_append_new(rows, j) < 0)
			bad = 1;
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void mp_report_ranks_csv(FILE *out, mp_run_t *const *runs, size_t nruns, int high, const mp_report_rank_detail_t *d)
{
	fprintf(out, "\nsection,rank,run,pid,program,memory,peak_bytes,peak_time_ns,step,op,highest\n");
	for (int r = 0; r < (int)nruns; r++) {
		const mp_run_memory_t *m;
		const mp_run_proc_t *p = rank_proc(runs, r, &m);
		char prog[64] = "";

		if (p)
			program(p, prog, sizeof(prog));
		/* (paths and names with a comma or quote are quoted) */
		fprintf(out, "ranks,%d,", r);
		mp_csv_field(out, mp_run_path(runs[r]));
		fprintf(out, ",%" PRIu64 ",", p ? p->pid : 0);
		mp_csv_field(out, prog);
		fputc(',', out);
		mp_csv_field(out, m ? m->name : "");
		fprintf(out, ",%" PRIu64 ",", m ? m->peak_bytes : 0);
		if (m)
			fprintf(out, "%" PRIu64, m->peak_time_ns);
		fputc(',', out);
		if (r == high && d->step >= 0)
			fprintf(out, "%" PRId64, d->step);
		fputc(',', out);
		mp_csv_field(out, r == high && d->op ? d->op : "");
		fprintf(out, ",%d\n", r == high);
	}
}
