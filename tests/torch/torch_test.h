/* torch_test.h - what the snapshot tests share: the generated fixtures
 * and their expected figures, and a source's note by memory id and key. */
#ifndef MEMPROF_TEST_TORCH_H
#define MEMPROF_TEST_TORCH_H

#include <memprof/source.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gen_snapshots.py writes its fixtures and expected.json into out (each
 * test program its own folder: they run in parallel); the expected
 * figures, or NULL with a message. Caller owns (json_decref). */
static inline json_t *mp_test_gen_snapshots(const char *out)
{
	char cmd[4096];
	json_error_t err;
	json_t *e;

	snprintf(cmd, sizeof(cmd), "python3 %s/tests/torch/gen_snapshots.py %s", MEMPROF_SOURCE_DIR, out);
	if (system(cmd) != 0) {
		fprintf(stderr, "gen_snapshots.py failed (python3 is a test dependency: scripts/deps.sh)\n");
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "%s/expected.json", out);
	if (!(e = json_load_file(cmd, 0, &err)))
		fprintf(stderr, "%s: %s\n", cmd, err.text);
	return e;
}

/* The note `key` about `memory` (MP_NOTE_INPUT: the input's), or NULL. */
static inline const mp_source_note_t *mp_test_note(const mp_source_t *src, uint32_t memory, const char *key)
{
	const mp_source_note_t *n;
	size_t count = mp_source_notes(src, &n);

	for (size_t i = 0; i < count; i++)
		if (n[i].memory == memory && !strcmp(n[i].key, key))
			return &n[i];
	return NULL;
}

#endif
