/* report_stream.c - report's text, JSON and CSV written one input at a time
 * (report_stream.h): each input is opened, solved, written and released
 * before the next, so that `report --process all` on a run of a thousand
 * processes holds one process's analysis, not all of them. The output is
 * byte for byte what the report of all inputs at once prints. */
#include "report_stream.h"

#include "cli.h"

#include <memprof/output/json.h>
#include <memprof/calltree.h>
#include <memprof/functions.h>
#include <memprof/report_doc.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What input i left for after the reports (--by-function's and --tree's
 * text): its name, and where its parts lie in the spool files. */
typedef struct {
	char *path;
	long fn_at, fn_end; /* fn_end < 0: no table */
	long tree_at, tree_end;
} later_t;

/* The reports' extras in the order write_text_extras prints them: every
 * input's function table, then every input's tree, named when several. */
static int copy_part(FILE *out, FILE *spool, long at, long end)
{
	char buf[8192];

	if (fseek(spool, at, SEEK_SET) < 0)
		return -errno;
	for (long left = end - at; left > 0;) {
		size_t n = fread(buf, 1, left < (long)sizeof(buf) ? (size_t)left : sizeof(buf), spool);
		if (!n || fwrite(buf, 1, n, out) != n)
			return -EIO;
		left -= (long)n;
	}
	return 0;
}

static int write_later(FILE *out, const later_t *l, int n, FILE *fn, FILE *tree, int with_tree)
{
	int err = 0;

	for (int i = 0; !err && i < n; i++)
		if (l[i].fn_end >= 0) {
			if (n > 1)
				fprintf(out, "\n%s\n", l[i].path);
			err = copy_part(out, fn, l[i].fn_at, l[i].fn_end);
		}
	for (int i = 0; !err && with_tree && i < n; i++) {
		if (n > 1)
			fprintf(out, "\n%s\n", l[i].path);
		err = copy_part(out, tree, l[i].tree_at, l[i].tree_end);
	}
	return err;
}

/* Input i's extras into the spools (text). */
static int spool_extras(const cli_report_stream_t *s, const cli_inputs_t *ci, int i, later_t *l, FILE *fn, FILE *tree)
{
	int err = 0;

	l->fn_end = -1;
	if (ci->functions[i]) {
		l->fn_at = ftell(fn);
		err = mp_functions_text(fn, ci->functions[i], ci->sources[i], s->ropt->top, ci->in[i].device_set,
					ci->in[i].device);
		l->fn_end = ftell(fn);
	}
	if (!err && s->tree >= 0) {
		l->tree_at = ftell(tree);
		err = mp_calltree_text(tree, ci->trees[i], ci->sources[i], ci->solvers[i], s->tree, ci->in[i].device_set,
				       ci->in[i].device);
		l->tree_end = ftell(tree);
	}
	return err;
}

/* CSV: each table's rows spooled per table as the inputs come (tables
 * go section by section, each with every input's rows). */
typedef struct {
	FILE *table[16];
	FILE *fn, *tree;
	int any_functions;
} csv_spools_t;

static int csv_spools_open(csv_spools_t *c, const cli_report_stream_t *s)
{
	size_t nt = mp_report_csv_table_count();

	if (nt > sizeof(c->table) / sizeof(c->table[0]))
		return -1;
	for (size_t t = 0; t < nt; t++)
		if (mp_report_csv_table_header(t, s->ropt) && !(c->table[t] = tmpfile()))
			return -1;
	return (c->fn = tmpfile()) && (c->tree = tmpfile()) ? 0 : -1;
}

static void csv_spools_close(csv_spools_t *c)
{
	for (size_t t = 0; t < sizeof(c->table) / sizeof(c->table[0]); t++)
		if (c->table[t])
			fclose(c->table[t]);
	if (c->fn)
		fclose(c->fn);
	if (c->tree)
		fclose(c->tree);
}

static int csv_input(csv_spools_t *c, const cli_report_stream_t *s, const cli_inputs_t *ci, int i)
{
	const mp_report_input_t *in = &ci->in[i];
	int err = 0;

	for (size_t t = 0; !err && t < mp_report_csv_table_count(); t++)
		if (c->table[t])
			err = mp_report_csv_table_rows(c->table[t], t, in, 1, s->ropt);
	if (!err && ci->functions[i]) {
		c->any_functions = 1;
		err = mp_functions_csv(c->fn, ci->functions[i], in->path, s->ropt->top, in->device_set, in->device);
	}
	if (!err && s->tree >= 0)
		err = mp_calltree_csv(c->tree, ci->trees[i], ci->sources[i], in->path, s->tree, in->device_set,
				      in->device);
	return err;
}

/* As mp_report_csv and cmd_report's CSV extras write them. */
static int csv_end(FILE *out, csv_spools_t *c, const cli_report_stream_t *s)
{
	int first = 1, err = 0;

	for (size_t t = 0; !err && t < mp_report_csv_table_count(); t++) {
		if (!c->table[t])
			continue;
		if (!first)
			fputc('\n', out);
		first = 0;
		fprintf(out, "%s\n", mp_report_csv_table_header(t, s->ropt));
		err = copy_part(out, c->table[t], 0, ftell(c->table[t]));
	}
	if (!err && c->any_functions) {
		fprintf(out, "\n%s\n", mp_functions_csv_header);
		err = copy_part(out, c->fn, 0, ftell(c->fn));
	}
	if (!err && s->tree >= 0) {
		fprintf(out, "\n%s\n", mp_calltree_csv_header);
		err = copy_part(out, c->tree, 0, ftell(c->tree));
	}
	return err;
}

int cli_report_stream(const cli_report_stream_t *s, char *const *files, int nfiles, const cli_inputs_options_t *io,
		      const cli_runs_t *runs)
{
	cli_inputs_t ci;
	later_t *later = calloc((size_t)nfiles + 1, sizeof(*later));
	int text = s->format == CLI_STREAM_TEXT;
	FILE *fn = text ? tmpfile() : NULL, *tree = text ? tmpfile() : NULL;
	csv_spools_t csv = {{0}, 0, 0, 0};
	mp_report_json_stream_t js = {stdout, NULL, 0};
	int rc = cli_inputs_init(&ci, nfiles), err = 0, printed = 0;

	if (rc == MP_EXIT_OK && (!later || (text && (!fn || !tree)) ||
				 (s->format == CLI_STREAM_CSV && csv_spools_open(&csv, s) < 0))) {
		mp_cli_error("out of memory, or no temporary file: %s", strerror(errno));
		rc = MP_EXIT_FAILURE;
	}
	for (int f = 0; rc == MP_EXIT_OK && !err && f < nfiles;) {
		int i = ci.n;
		if ((rc = cli_inputs_next(&ci, files, nfiles, &f, io)) != MP_EXIT_OK || ci.n == i)
			continue;
		if (s->format == CLI_STREAM_CSV) {
			err = csv_input(&csv, s, &ci, i);
		} else if (s->format == CLI_STREAM_JSON) {
			mp_report_doc_extras_t x = {ci.functions, ci.trees, s->tree, NULL, 0};
			json_t *one = mp_report_doc_input(ci.in, (size_t)i, s->ropt, &x);
			err = one ? mp_report_json_stream_add(&js, one) : MP_ENOMEM;
		} else {
			if (!s->functions_only && !printed++)
				cli_runs_print(stdout, runs, s->all_processes);
			if (!s->functions_only && i)
				fputc('\n', stdout);
			if (!s->functions_only)
				err = cli_keep_print(stdout, ci.paths[i]);
			if (!err && !s->functions_only)
				cli_window_print(stdout, &ci.in[i]);
			if (!err && !s->functions_only)
				err = mp_report_text(stdout, &ci.in[i], 1, s->ropt);
			if (!err && !(later[i].path = strdup(ci.paths[i])))
				err = MP_ENOMEM;
			if (!err)
				err = spool_extras(s, &ci, i, &later[i], fn, tree);
		}
		cli_inputs_release(&ci, i);
	}
	if (rc == MP_EXIT_OK && !err && ci.n) {
		if (s->format == CLI_STREAM_CSV)
			err = csv_end(stdout, &csv, s);
		else if (s->format == CLI_STREAM_JSON)
			err = mp_report_json_stream_end(&js, runs->runs, (size_t)runs->nruns);
		else
			err = write_later(stdout, later, ci.n, fn, tree, s->tree >= 0);
		if (!err && (fflush(stdout) == EOF || ferror(stdout)))
			err = errno ? -errno : -EIO;
	}
	if (rc == MP_EXIT_OK && err < 0) {
		mp_cli_error("writing the report: %s", mp_strerror(err));
		rc = err == MP_ENOMEM ? MP_EXIT_FAILURE : MP_EXIT_IO;
	}
	mp_report_json_stream_abandon(&js);
	for (int i = 0; later && i < nfiles; i++)
		free(later[i].path);
	free(later);
	csv_spools_close(&csv);
	if (fn)
		fclose(fn);
	if (tree)
		fclose(tree);
	cli_inputs_close(&ci);
	return rc;
}
