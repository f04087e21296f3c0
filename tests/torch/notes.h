/* notes.h - a source's note by memory id and key, for the snapshot tests. */
#ifndef MEMPROF_TEST_TORCH_NOTES_H
#define MEMPROF_TEST_TORCH_NOTES_H

#include <memprof/source.h>

#include <string.h>

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
