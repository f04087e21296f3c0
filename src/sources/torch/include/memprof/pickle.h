/* memprof/pickle.h - a streaming reader of Python pickles (protocols 2 to 5)
 * made of plain data: dicts, lists, tuples, strings, bytes, ints (of any
 * length: see "Integers" below), floats, booleans and None, with memo and
 * framing. It never imports nor calls: GLOBAL, STACK_GLOBAL, REDUCE,
 * BUILD, INST, OBJ, NEWOBJ(_EX), EXT*, PERSID and the out-of-band buffers
 * are refused with an error naming the byte offset (the allow-list of
 * such opcodes is empty: docs/torch.md says why). Protocol 0 and 1 text
 * opcodes are refused the same way.
 *
 * Streaming. A pickle builds containers bottom-up on a stack, so the
 * reader cannot know a container's place in the tree when it is created --
 * it guesses from the stack (which container it will be appended to, and
 * under which key) and asks the handler: handler.open() gives the new
 * container a role and may mark it "streamed". Items attached to a
 * streamed container (APPEND(S), SETITEM(S)) are handed to handler.item()
 * and dropped instead of being stored, and their memo slot is released, so
 * a list of millions of entries never exists in memory. Containers that
 * are not streamed are built whole (they are small: a trace entry, its
 * frames), and stay alive while the memo refers to them (PyTorch shares
 * the frames list of identical stacks, and the pickle refers back to it).
 *
 * What the memo keeps of a handed-over item: nothing of the item itself
 * (a later reference to it is an error), and for every container inside
 * it that the handler tagged (obj->user != 0, e.g. a frames list whose op
 * it has computed), only that tag: a later reference gives a value of kind
 * MP_PK_TOKEN with u.i = the tag. So a million distinct frames lists cost
 * a memo slot each, not their frames.
 *
 * Strings are interned in a string table the caller owns: values carry
 * ids. Errors: MP_EFORMAT (an opcode that is not plain data, bad
 * structure), MP_ETRUNCATED (the input ends), MP_ELIMIT (sizes beyond the
 * limits: a string over 1 GiB, an integer of more than 1 MiB), with diag's
 * offset the opcode's byte offset in the (decompressed) stream.
 *
 * Integers. LONG1 and LONG4 carry an integer of any length (little-endian
 * two's complement); a value that fits int64 is an MP_PK_INT like any
 * other, whatever its encoding's length. One that does not -- Python 3.13
 * PyTorch writes 2**64-1 for a frame line it does not know -- is an
 * MP_PK_BIGINT: never an error, and never stored whole (a value is 16
 * bytes, a memo slot too), but described by what a reader can act on: its
 * sign (big_neg), whether it fits uint64 and then its value (big_u64,
 * u.u: only positive values in [2**63, 2**64) do), and its length
 * big_len: the bytes of its shortest two's complement, as Python's pickle
 * writes it (9 for 2**63 .. 2**71-1 and for -2**71 .. -2**63-1), so
 * |value| < 2**(8 * big_len - 1). Protocol 0/1's text integers (INT,
 * LONG) are refused with the other text opcodes.
 */
#ifndef MEMPROF_PICKLE_H
#define MEMPROF_PICKLE_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mp_strtab;

typedef enum {
	MP_PK_NONE = 0,
	MP_PK_BOOL,
	MP_PK_INT,   /* u.i: any integer that fits int64 */
	MP_PK_FLOAT,
	MP_PK_STR,   /* u.str: an id in the caller's string table */
	MP_PK_BYTES, /* likewise (bytes, bytearray) */
	MP_PK_LIST,
	MP_PK_DICT,
	MP_PK_TUPLE,
	MP_PK_TOKEN, /* u.i: the user field of a container already handed over (see below) */
	MP_PK_MARK,  /* internal: never handed out */
	MP_PK_GONE,  /* internal: a memo slot whose object was streamed */
	MP_PK_BIGINT, /* an integer outside int64: big_neg, big_u64, big_len (and u.u) say what it is */
} mp_pk_kind_t;

typedef struct mp_pk_obj mp_pk_obj_t;

typedef struct mp_pk_value {
	uint8_t kind;     /* mp_pk_kind_t */
	/* BIGINT only (0 otherwise), in what would be padding: a value stays
	 * 16 bytes, on the stack and in the memo. */
	uint8_t big_neg;  /* below INT64_MIN (else above INT64_MAX) */
	uint8_t big_u64;  /* in [2**63, 2**64): u.u is its exact value (else u.u is 0) */
	uint32_t big_len; /* bytes of its shortest two's complement: 9 or more */
	union {
		int64_t i;        /* BOOL (0/1), INT, TOKEN */
		uint64_t u;       /* BIGINT when big_u64 */
		double f;         /* FLOAT */
		uint32_t str;     /* STR, BYTES */
		mp_pk_obj_t *obj; /* LIST, DICT, TUPLE */
	} u;
} mp_pk_value_t;

/* A container. Dicts hold key, value pairs back to back in items. */
struct mp_pk_obj {
	mp_pk_value_t *items;
	size_t n, cap;       /* n values (a dict: 2 per entry) */
	uint32_t refs;       /* internal */
	uint32_t memo;       /* memo slot, UINT32_MAX when none (internal) */
	mp_pk_obj_t *prev, *next; /* every live object (internal) */
	uint8_t kind;        /* MP_PK_LIST, MP_PK_DICT or MP_PK_TUPLE */
	uint8_t stream;      /* set by handler.open(): items go to handler.item() */
	uint16_t role;       /* the handler's, from open(); 0 = none */
	uint32_t user;       /* the handler's, free to use */
	uint32_t visit;      /* internal: the last walk that saw it */
};

typedef struct mp_pk_handler {
	void *ctx;
	/* A container was created. parent: where the reader guesses it will
	 * be attached (NULL at the top level or when nothing fits); key: its
	 * key there when parent is a dict, else NULL; alt: a second candidate
	 * parent (a list) when the stack is ambiguous (a list directly after
	 * another list's MARK may be that list's item or its sibling), else
	 * NULL. Sets obj->role, obj->stream, obj->user. Returns 0 or an error
	 * with diag filled. May be NULL (nothing is streamed). */
	int (*open)(void *ctx, const mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_obj_t *alt,
		    mp_pk_obj_t *obj, mp_diag_t *diag);
	/* An item attached to a streamed container: key is NULL for a list;
	 * parent NULL: the top-level value, at STOP.
	 * value is borrowed for the call (its containers are freed after it
	 * unless something else refers to them). Returns 0 or an error. */
	int (*item)(void *ctx, mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_value_t *value,
		    mp_diag_t *diag);
} mp_pk_handler_t;

/* Where the bytes come from: fills buf with up to size bytes, returns the
 * count (0 at the end) or a negative error with diag filled. */
typedef long (*mp_pk_read_fn)(void *io, uint8_t *buf, size_t size, mp_diag_t *diag);

/* Read one pickle (up to its STOP) from read/io, handing containers to h;
 * at STOP, h.item() gets the top-level value with parent NULL. strings: the
 * caller's table (<memprof/strtab.h>), where the values' string ids
 * point. Everything the reader built is freed before it returns. Returns 0
 * or an error with diag filled (offset = the failing opcode's offset). */
int mp_pickle_read(mp_pk_read_fn read, void *io, struct mp_strtab *strings, const mp_pk_handler_t *h,
		   mp_diag_t *diag);

/* In a dict: the value of the key whose string id is key, or NULL. */
const mp_pk_value_t *mp_pickle_dict_get(const mp_pk_obj_t *dict, uint32_t key);

#ifdef __cplusplus
}
#endif
#endif
