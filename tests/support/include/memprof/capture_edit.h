/* memprof/capture_edit.h - damage a capture on purpose, for the tests that
 * check how the reader takes a bad section (a checkpoint, a ROUND): read
 * a .memprof whole, inflate its blocks one by one, let the caller change
 * one block's raw bytes, and write the file again with that block
 * deflated and its frame's lengths and CRCs made right, so that only the
 * section the caller changed is wrong. Test support only (not shipped);
 * failures are cmocka assertions. */
#ifndef MEMPROF_CAPTURE_EDIT_H
#define MEMPROF_CAPTURE_EDIT_H

#include <stddef.h>
#include <stdint.h>

/* The file's bytes, read whole (binary; test_common.h's mp_test_slurp reads
 * a stream as text); *size its length. Owned by the caller (free). */
uint8_t *mp_test_read_file(const char *path, size_t *size);

/* The varint at *p, *p moved past it. */
uint64_t mp_test_getv(const uint8_t **p);

/* In a round's last block (raw: HORIZON, SUMMARY, then (2.5) ROUND, then
 * a CHECKPOINT where the round has one), the body of the section `tag`
 * (MP_SEC_ROUND or MP_SEC_CHECKPOINT): the position after its tag, at its
 * body length. NULL when raw is no such block or lacks that section.
 * Borrowed from raw. */
uint8_t *mp_test_round_section(uint8_t *raw, size_t len, int tag);

/* Called with each block's raw (inflated) bytes, in file order, and the
 * block's index; returns 1 after changing raw in place (without changing
 * its length): that block is the one written back. */
typedef int (*mp_test_edit_fn)(void *ctx, uint8_t *raw, size_t len, uint64_t index);

/* in, with the first block that fn changes, written to out; *index and
 * *offset: that block's index and file offset. Fails the test (naming
 * what) when fn changes none. */
void mp_test_edit_block(const char *in, const char *out, mp_test_edit_fn fn, void *ctx, const char *what,
			uint64_t *index, uint64_t *offset);

/* in, with the first checkpoint that holds live blocks (in block
 * `block`; UINT64_MAX: any) damaged: its first live block's size made one
 * larger, which its round's SUMMARY then contradicts; written to out,
 * *index and *offset: that block's. */
void mp_test_damage_checkpoint(const char *in, const char *out, uint64_t block, uint64_t *index, uint64_t *offset);

#endif
