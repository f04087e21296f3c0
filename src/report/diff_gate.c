/* diff_gate.c - the regression gate of `memprof diff --fail-above`
 * (memprof/diff.h, docs/diff.md), and the signed figures it prints. */
#include "diff_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *dp_human_change(char *buf, size_t size, int64_t change)
{
	char h[32];
	uint64_t m = change < 0 ? (uint64_t)0 - (uint64_t)change : (uint64_t)change;

	mp_bytes_human(h, sizeof(h), m);
	snprintf(buf, size, "%s%s", change > 0 ? "+" : change < 0 ? "-" : "", h);
	return buf;
}

const char *dp_percent(char *buf, size_t size, const mp_diff_memory_t *m)
{
	if (isnan(m->change_percent))
		snprintf(buf, size, "new");
	else
		snprintf(buf, size, "%+.2f%%", m->change_percent);
	return buf;
}

/* "64MiB", "1.5GiB", "100", "100B" -> bytes. */
static int parse_bytes(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {{"", 1}, {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
		     {"TiB", 1099511627776.0}};
	char *end;
	double v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			double b = v * units[i].scale;
			if (b > 9.2e18 || (units[i].scale == 1 && b != floor(b)))
				return -1;
			*out = (uint64_t)llround(b);
			return 0;
		}
	return -1;
}

int mp_diff_gate_parse(const char *spec, mp_diff_gate_t *g, char *why, size_t whysize)
{
	/* the last ':' ends the memory's name: names may hold one (cuda:0) */
	const char *colon = strrchr(spec, ':'), *limit = colon ? colon + 1 : spec;
	size_t n = strlen(limit);

	memset(g, 0, sizeof(*g));
	g->spec = spec;
	if (colon) {
		size_t len = (size_t)(colon - spec);
		if (!len || len >= sizeof(g->memory)) {
			snprintf(why, whysize, "invalid --fail-above '%s' (expected [NAME:|total:]LIMIT)", spec);
			return MP_EUSAGE;
		}
		if (len == 5 && !strncmp(spec, "total", 5)) {
			g->total = 1;
		} else {
			memcpy(g->memory, spec, len);
			g->memory[len] = '\0';
		}
	}
	if (n > 1 && limit[n - 1] == '%') {
		char *end;
		errno = 0;
		g->limit_percent = strtod(limit, &end);
		g->percent = 1;
		if (errno || end != limit + n - 1 || limit[0] == '-' || limit[0] == '+' || !(g->limit_percent >= 0) ||
		    isinf(g->limit_percent)) {
			snprintf(why, whysize, "invalid --fail-above '%s' (a percentage such as 5%% or 0.5%%)", spec);
			return MP_EUSAGE;
		}
		return 0;
	}
	if (parse_bytes(limit, &g->limit_bytes) < 0) {
		snprintf(why, whysize,
			 "invalid --fail-above '%s' (expected a percentage such as 5%% or a size such as 67108864, 64MiB, "
			 "1.5GiB; units B KiB MiB GiB TiB)", spec);
		return MP_EUSAGE;
	}
	return 0;
}

int mp_diff_gate_exceeds(const mp_diff_gate_t *g, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	if (!g->percent)
		return b - a > g->limit_bytes;
	if (a == 0)
		return 1; /* any growth from nothing is above any percentage */
	return 100.0 * (double)(b - a) / (double)a > g->limit_percent;
}

void mp_diff_gate_say(FILE *err, const mp_diff_gate_t *g, const char *memory, uint64_t a, uint64_t b)
{
	char h[48], pct[32];
	int64_t c = (int64_t)(b - a);

	if (!err)
		return;
	if (a)
		snprintf(pct, sizeof(pct), "%+.2f%%", 100.0 * (double)c / (double)a);
	else
		snprintf(pct, sizeof(pct), "new");
	fprintf(err,
		"memprof: diff: regression: %s: peak %+" PRId64 " B (%s, %s) from %" PRIu64 " B to %" PRIu64
		" B, above --fail-above %s\n",
		memory, c, dp_human_change(h, sizeof(h), c), pct, a, b, g->spec);
}

int mp_diff_gate_row(json_t *arr, const mp_diff_gate_t *g, const char *memory, uint64_t a, uint64_t b)
{
	json_t *row = json_object();
	int bad = !row;

	mp_json_put(row, "gate", json_string(g->spec), &bad);
	mp_json_put(row, "memory", json_string(memory), &bad);
	mp_json_put(row, "a_bytes", mp_json_u64(a), &bad);
	mp_json_put(row, "b_bytes", mp_json_u64(b), &bad);
	mp_json_put(row, "change_bytes", json_integer((int64_t)(b - a)), &bad);
	mp_json_put(row, "failed", json_boolean(mp_diff_gate_exceeds(g, a, b)), &bad);
	if (bad) {
		json_decref(row);
		return MP_ENOMEM;
	}
	return json_array_append_new(arr, row) < 0 ? MP_ENOMEM : 0; /* steals row either way */
}

int dp_gate_eval(const mp_diff_t *d, const mp_diff_gate_t *g, dp_gate_result_t *res)
{
	int n = 0;

	if (g->total) {
		uint64_t a = 0, b = 0;
		for (size_t i = 0; i < d->n; i++) {
			a += d->mem[i].a.dev->peak_bytes;
			b += d->mem[i].b.dev->peak_bytes;
		}
		res[0] = (dp_gate_result_t){"total", a, b, mp_diff_gate_exceeds(g, a, b)};
		return 1;
	}
	for (size_t i = 0; i < d->n; i++) {
		const mp_diff_memory_t *m = &d->mem[i];
		if (g->memory[0] && strcmp(g->memory, m->a.name) && strcmp(g->memory, m->b.name))
			continue;
		res[n++] = (dp_gate_result_t){m->a.name, m->a.dev->peak_bytes, m->b.dev->peak_bytes,
					      mp_diff_gate_exceeds(g, m->a.dev->peak_bytes, m->b.dev->peak_bytes)};
	}
	return g->memory[0] && !n ? MP_EUSAGE : n;
}

int mp_diff_gate_check(const mp_diff_t *d, const mp_diff_gate_t *gates, size_t ngates, FILE *err)
{
	dp_gate_result_t *res = calloc(d->n + 1, sizeof(*res));
	int failures = 0;

	if (!res)
		return MP_ENOMEM;
	for (size_t k = 0; k < ngates; k++) {
		int n = dp_gate_eval(d, &gates[k], res);
		if (n < 0) {
			if (err)
				fprintf(err, "memprof: error: --fail-above '%s': no memory id '%s' in both inputs\n",
					gates[k].spec, gates[k].memory);
			free(res);
			return MP_EUSAGE;
		}
		for (int i = 0; i < n; i++)
			if (res[i].failed) {
				failures++;
				mp_diff_gate_say(err, &gates[k], res[i].memory, res[i].a, res[i].b);
			}
	}
	free(res);
	return failures;
}
