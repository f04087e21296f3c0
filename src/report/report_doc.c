/* report_doc.c - the whole JSON document of `memprof report` and the
 * process trees of runs in it (memprof/report_doc.h). */
#include <memprof/report_doc.h>

#include <memprof/output/json.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Input i's object with its functions and call tree, or NULL. */
static json_t *input_json(const mp_report_input_t *in, const mp_report_options_t *o, const mp_report_doc_extras_t *x,
			  size_t i)
{
	json_t *one = mp_report_json_input(&in[i], o), *fj;

	if (!one || !x)
		return one;
	if (x->functions && x->functions[i]) {
		fj = mp_functions_json(x->functions[i], in[i].source, o->top, in[i].device_set, in[i].device);
		if (!fj || json_object_set_new(one, "functions", fj))
			goto nomem;
	}
	if (x->trees && x->trees[i]) {
		fj = mp_calltree_json(x->trees[i], in[i].source, x->tree_kind, in[i].device_set, in[i].device);
		if (!fj || json_object_set_new(one, "call_tree", fj))
			goto nomem;
	}
	return one;
nomem:
	json_decref(one);
	return NULL;
}

json_t *mp_report_doc_input(const mp_report_input_t *in, size_t i, const mp_report_options_t *o,
			    const mp_report_doc_extras_t *x)
{
	return input_json(in, o, x, i);
}

json_t *mp_report_json_document(const mp_report_input_t *in, size_t n, const mp_report_options_t *o,
				const mp_report_doc_extras_t *x)
{
	json_t *doc = NULL, *files = NULL;

	if (n != 1 && (!(doc = json_object()) || !(files = json_array()) || json_object_set_new(doc, "files", files)))
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		json_t *one = input_json(in, o, x, i);
		if (!one)
			goto nomem;
		if (n == 1)
			doc = one;
		else if (json_array_append_new(files, one))
			goto nomem;
	}
	if (x && x->nruns) { /* the process trees of the runs these captures came from */
		json_t *arr = json_array();
		if (!arr || json_object_set_new(doc, "runs", arr))
			goto nomem;
		for (size_t r = 0; r < x->nruns; r++)
			if (json_array_append_new(arr, mp_report_run_json(x->runs[r])))
				goto nomem;
	}
	return doc;
nomem:
	json_decref(doc);
	return NULL;
}

const char *mp_report_proc_end_word(mp_proc_end_t e)
{
	switch (e) {
	case MP_PROC_EXITED:
		return "exited";
	case MP_PROC_EXECED:
		return "exec'd";
	case MP_PROC_ABRUPT:
		return "abrupt";
	case MP_PROC_WRITE_FAILED:
		return "write failed";
	default:
		return "unreadable";
	}
}

const char *mp_report_wait_status(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(buf, n, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, n, "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return buf;
}

static int put_memories(json_t *mem, const mp_run_proc_t *p)
{
	for (size_t m = 0; m < p->memory_count; m++) {
		const mp_run_memory_t *x = &p->memories[m];
		json_t *k = json_object();
		if (!k || json_array_append_new(mem, k) || json_object_set_new(k, "name", json_string(x->name)) ||
		    json_object_set_new(k, "peak_bytes", json_integer((json_int_t)x->peak_bytes)) ||
		    json_object_set_new(k, "allocations", json_integer((json_int_t)x->allocations)) ||
		    json_object_set_new(k, "frees", json_integer((json_int_t)x->frees)) ||
		    json_object_set_new(k, "live_blocks", json_integer((json_int_t)x->live_blocks)) ||
		    json_object_set_new(k, "live_bytes", json_integer((json_int_t)x->live_bytes)))
			return -1;
	}
	return 0;
}

json_t *mp_report_run_json(const mp_run_t *run)
{
	json_t *o = json_object(), *procs = json_array();

	if (!o || !procs || json_object_set_new(o, "path", json_string(mp_run_path(run))) ||
	    json_object_set_new(o, "command", json_string(mp_run_command(run))) ||
	    json_object_set_new(o, "ended", json_string(mp_run_outcome(run))) ||
	    json_object_set_new(o, "main", json_integer(mp_run_main(run))) || json_object_set(o, "processes", procs))
		goto fail;
	for (size_t i = 0; i < mp_run_count(run); i++) {
		const mp_run_proc_t *p = mp_run_proc(run, i);
		json_t *j = json_object(), *mem = json_array();
		char status[96];

		if (!j || !mem || json_array_append_new(procs, j)) {
			json_decref(j);
			json_decref(mem);
			goto fail;
		}
		if (json_object_set_new(j, "memories", mem) || json_object_set_new(j, "capture", json_string(p->path)) ||
		    json_object_set_new(j, "pid", json_integer((json_int_t)p->pid)) ||
		    json_object_set_new(j, "ppid", json_integer((json_int_t)p->ppid)) ||
		    json_object_set_new(j, "parent", json_integer(p->parent)) ||
		    json_object_set_new(j, "exec_index", json_integer(p->exec_index)) ||
		    json_object_set_new(j, "command_line", json_string(p->command_line)) ||
		    json_object_set_new(j, "exe", json_string(p->exe)) ||
		    json_object_set_new(j, "start_wall_ns", json_integer((json_int_t)p->start_wall_ns)) ||
		    json_object_set_new(j, "end_wall_ns", json_integer((json_int_t)p->end_wall_ns)) ||
		    json_object_set_new(j, "ended", json_string(mp_report_proc_end_word(p->end))) ||
		    json_object_set_new(j, "status", p->reaped ? json_string(mp_report_wait_status(p->status, status,
											     sizeof(status)))
							       : json_null()) ||
		    json_object_set_new(j, "events", json_integer((json_int_t)p->events)) ||
		    json_object_set_new(j, "peak_bytes", json_integer((json_int_t)p->peak_bytes)) ||
		    json_object_set_new(j, "helper", json_boolean(p->helper)) ||
		    json_object_set_new(j, "error", p->error ? json_string(p->error) : json_null()) || put_memories(mem, p))
			goto fail;
	}
	json_decref(procs);
	return o;
fail:
	json_decref(procs);
	json_decref(o);
	return NULL;
}

/* A JSON value as it reads at depth (JSON_INDENT(2) nests 2 spaces a
 * level; strings hold no raw newline: every one is the layout's). */
static int put_nested(FILE *out, json_t *v, int depth)
{
	char *text = json_dumps(v, MP_JSON_LAYOUT);

	if (!text)
		return MP_ENOMEM;
	for (const char *c = text; *c; c++) {
		fputc(*c, out);
		if (*c == '\n')
			fprintf(out, "%*s", 2 * depth, "");
	}
	free(text);
	return 0;
}

/* The "runs" array of the document, or NULL (none, or out of memory: *bad). */
static json_t *runs_json(mp_run_t *const *runs, size_t nruns, int *bad)
{
	json_t *arr;

	if (!nruns)
		return NULL;
	if (!(arr = json_array())) {
		*bad = 1;
		return NULL;
	}
	for (size_t r = 0; r < nruns; r++)
		if (json_array_append_new(arr, mp_report_run_json(runs[r])))
			*bad = 1;
	return arr;
}

/* The first input's object is held until a second comes (one input is
 * the document itself); from the second on, each is written in
 * {"files": [...]} as it comes. */
int mp_report_json_stream_add(mp_report_json_stream_t *s, json_t *one)
{
	int err = 0;

	if (s->n++ == 0) {
		s->first = one;
		return 0;
	}
	if (s->n == 2) {
		fputs("{\n  \"files\": [\n    ", s->out);
		err = put_nested(s->out, s->first, 2);
		json_decref(s->first);
		s->first = NULL;
	}
	if (!err) {
		fputs(",\n    ", s->out);
		err = put_nested(s->out, one, 2);
	}
	json_decref(one);
	return err;
}

int mp_report_json_stream_end(mp_report_json_stream_t *s, mp_run_t *const *runs, size_t nruns)
{
	int bad = 0, err;
	json_t *arr = runs_json(runs, nruns, &bad), *first = s->first;

	s->first = NULL;
	if (bad) {
		json_decref(arr);
		json_decref(first);
		return MP_ENOMEM;
	}
	if (s->n == 1) {
		if (arr && json_object_set_new(first, "runs", arr)) {
			json_decref(first);
			return MP_ENOMEM;
		}
		return mp_json_write(s->out, first, MP_JSON_LAYOUT); /* takes first */
	}
	fputs("\n  ]", s->out);
	err = 0;
	if (arr) {
		fputs(",\n  \"runs\": ", s->out);
		err = put_nested(s->out, arr, 1);
		json_decref(arr);
	}
	fputs("\n}\n", s->out);
	return err;
}

void mp_report_json_stream_abandon(mp_report_json_stream_t *s)
{
	json_decref(s->first);
	s->first = NULL;
}
