/* fuzz_pickle.c - libFuzzer target for memprof's pickle reader alone: the
 * bytes are a pickle, read through a handler that streams the top-level
 * container and every list inside a streamed one (as the snapshot reader
 * does), and looks into every dict it is handed. Any crash, leak or
 * sanitizer report is a bug; errors are expected. */
#include <memprof/strtab.h>

#include <memprof/pickle.h>

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct io {
	const uint8_t *p;
	size_t n, pos;
} io_t;

static long rd(void *ctx, uint8_t *buf, size_t cap, mp_diag_t *diag)
{
	io_t *io = ctx;
	size_t k = io->n - io->pos < 7 ? io->n - io->pos : 7; /* small reads: every refill path */

	(void)diag;
	if (k > cap)
		k = cap;
	memcpy(buf, io->p + io->pos, k);
	io->pos += k;
	return (long)k;
}

static int f_open(void *ctx, const mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_obj_t *alt,
		  mp_pk_obj_t *obj, mp_diag_t *diag)
{
	(void)ctx, (void)key, (void)diag;
	if (!parent || (parent->stream && obj->kind == MP_PK_LIST) || (alt && alt->stream))
		obj->stream = 1;
	obj->role = parent ? (uint16_t)(parent->role + 1) : 1;
	return 0;
}

static int f_item(void *ctx, mp_pk_obj_t *parent, const mp_pk_value_t *key, const mp_pk_value_t *value,
		  mp_diag_t *diag)
{
	mp_strtab_t *t = ctx;

	(void)parent, (void)diag;
	if (key && key->kind == MP_PK_STR)
		(void)mp_strtab_get(t, key->u.str);
	if (value->kind == MP_PK_DICT) {
		const mp_pk_obj_t *d = value->u.obj;
		for (size_t i = 0; i + 1 < d->n; i += 2)
			if (d->items[i].kind == MP_PK_STR)
				(void)mp_pickle_dict_get(d, d->items[i].u.str);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mp_strtab_t t;
	io_t io = {data, size, 0};
	mp_pk_handler_t h;
	mp_diag_t diag;

	mp_strtab_init(&t);
	h.ctx = &t;
	h.open = f_open;
	h.item = f_item;
	(void)mp_pickle_read(rd, &io, &t, &h, &diag);
	mp_strtab_free(&t);
	return 0;
}
