/* pickle_impl.h - the pickle reader's state, shared by its two files:
 * pickle_vm.c (the opcodes) and pickle_obj.c (values, containers, the
 * stack, the memo). Internal to src/sources/torch. */
#ifndef MEMPROF_PICKLE_IMPL_H
#define MEMPROF_PICKLE_IMPL_H

#include <memprof/pickle.h>

#include <memprof/strtab.h>
#include <memprof/vec.h>

#include <stddef.h>
#include <stdint.h>

/* Limits that keep a hostile file from asking for unbounded memory. A real
 * snapshot holds at most 1000 items per APPENDS/SETITEMS batch on the
 * stack, and memo indexes that grow by one. */
#define PK_MAX_STACK (1u << 24)      /* values on the stack */
#define PK_MAX_MEMO (1u << 30)       /* memo slots */
#define PK_MAX_MEMO_GAP (1u << 16)   /* a BINPUT this far past the last slot */
#define PK_MAX_STRING (1u << 30)     /* bytes in one string */
#define PK_BUF (1u << 20)            /* the read buffer */
/* Bytes in one LONG1/LONG4 integer: 2**(8 MiB) is far past any number a
 * snapshot holds, and it fits the read buffer, so an integer is read in
 * place like any short argument. */
#define PK_MAX_LONG (1u << 20)
_Static_assert(PK_MAX_LONG <= PK_BUF, "an integer is read from the buffer in one piece");
_Static_assert(sizeof(mp_pk_value_t) == 16, "a value (on the stack, in the memo) costs 16 bytes");

typedef struct pk {
	mp_pk_read_fn read;
	void *io;
	mp_diag_t *diag;
	const mp_pk_handler_t *h;
	mp_strtab_t *strings;

	uint8_t *buf;        /* PK_BUF bytes; buf[pos..len) not yet used */
	size_t pos, len;
	uint64_t base;       /* stream offset of buf[0] */
	int eof;
	uint8_t *big;        /* a string longer than the buffer */
	size_t bigcap;
	uint64_t op_off;     /* offset of the opcode being run */

	mp_pk_value_t *st;   /* the stack */
	size_t sp, stcap;
	size_t *marks;       /* stack positions of the MARKs */
	size_t nmarks, mcap;
	mp_pk_value_t *memo; /* unset slots are MP_PK_MARK */
	size_t nmemo, memocap;
	mp_pk_obj_t *live;   /* every object not yet freed (cycles included) */
	mp_pk_obj_t **work;  /* the iterative free's worklist */
	size_t nwork, workcap;
	mp_pk_obj_t **twork; /* pk_memo_tokenize's */
	size_t ntwork, tworkcap;
	uint32_t walk;       /* pk_memo_tokenize's walk number (a list may contain itself) */
	int oom;
} pk_t;

/* An error at the current opcode. */
int pk_fail(pk_t *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The handler failed at the current opcode: its diag gets the offset. */
void pk_note_offset(pk_t *p);

static inline int pk_is_obj(const mp_pk_value_t *v)
{
	return v->kind == MP_PK_LIST || v->kind == MP_PK_DICT || v->kind == MP_PK_TUPLE;
}

mp_pk_obj_t *pk_obj_new(pk_t *p, uint8_t kind);
void pk_ref(const mp_pk_value_t *v);
void pk_unref(pk_t *p, const mp_pk_value_t *v);
/* Append v to obj's items (the reference moves in). 0 or MP_ENOMEM. */
int pk_obj_add(pk_t *p, mp_pk_obj_t *obj, const mp_pk_value_t *v);
void pk_free_all(pk_t *p);

int pk_push(pk_t *p, const mp_pk_value_t *v);
int pk_push_mark(pk_t *p);
/* Pop down to the topmost MARK: *first = the stack index of the first
 * value above it (the values stay where they are until pk_drop_mark). */
int pk_find_mark(pk_t *p, size_t *first);
void pk_drop_mark(pk_t *p, size_t first);

int pk_memo_put(pk_t *p, uint64_t idx);
int pk_memo_get(pk_t *p, uint64_t idx);
/* A streamed container's memo slot is released: the pickle must not refer
 * to it again. */
void pk_memo_release(pk_t *p, mp_pk_obj_t *obj);

/* value was handed over: the containers inside it that the handler
 * tagged leave only their tag in the memo (MP_PK_TOKEN). */
int pk_memo_tokenize(pk_t *p, const mp_pk_value_t *value);

/* Where a new container will be attached (see handler.open). */
void pk_guess_parent(const pk_t *p, mp_pk_obj_t **parent, const mp_pk_value_t **key, mp_pk_obj_t **alt);

#endif
