/* diff_hlo.h - `memprof diff` of two HLO modules (diff_hlo.c). */
#ifndef MEMPROF_CLI_DIFF_HLO_H
#define MEMPROF_CLI_DIFF_HLO_H

#include <memprof/diff.h>

#include <stddef.h>
#include <stdint.h>

typedef struct cli_diff_hlo_options {
	const char *module;           /* --module NAME|ID, or NULL */
	int json;
	uint32_t top;                 /* 0: text 20, JSON all */
	const mp_diff_gate_t *gates;
	size_t ngates;
} cli_diff_hlo_options_t;

/* 1 when path names an HloProto (*.hlo.pb[.gz], *.hlo_proto.pb). */
int cli_diff_looks_hlo(const char *path);

/* Diff two HLO modules, print it, check the gates; returns the exit code. */
int cli_diff_hlo(const char *a, const char *b, const cli_diff_hlo_options_t *o);

#endif
