/* hlo_words.c - what the HLO charts say of a buffer and how they colour
 * it: the op name without its primitive's parameters, the shape without
 * the default layout, the buffers that get a colour of their own, and the
 * ranks the lifetime lanes leave out, with why.
 *
 * A reader tells buffers apart by colour and by the end of their op's
 * path (`…/self_attention/qk_einsum/dot_general`); the parameters of a
 * primitive (`[dimension_numbers=… weak_type=False]`) and the layout of a
 * row-major array (`{3,2,1,0}`) push both out of the room a cell has. */
#include "hlo_charts_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Copy [s, s + n) into buf with every bracketed group at depth 0 left
 * out; returns buf. */
static const char *drop_brackets(char *buf, size_t size, const char *s, size_t n)
{
	size_t o = 0;
	int depth = 0;

	for (size_t i = 0; i < n && o + 1 < size; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && depth > 0)
			depth--;
		else if (!depth)
			buf[o++] = s[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *hx_op_text(char *buf, size_t size, const char *op_name)
{
	const char *s = op_name ? op_name : "";

	if (!size)
		return "";
	/* unbalanced brackets (a cut or hostile name): kept as they are */
	{
		int depth = 0, ok = 1;
		for (const char *p = s; *p && ok; p++) {
			depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
			ok = depth >= 0;
		}
		if (!ok || depth) {
			snprintf(buf, size, "%s", s);
			return buf;
		}
	}
	return drop_brackets(buf, size, s, strlen(s));
}

/* Whether layout l ("3,2,1,0", n bytes) is the default of an array of
 * `dims` dimensions: major to minor, dims - 1 down to 0, nothing else. */
static int default_layout(const char *l, size_t n, size_t dims)
{
	char want[160];
	size_t o = 0;

	for (size_t d = dims; d-- > 0 && o < sizeof(want);)
		o += (size_t)snprintf(want + o, sizeof(want) - o, d ? "%zu," : "%zu", d);
	return o < sizeof(want) && o == n && !memcmp(want, l, n);
}

const char *hx_shape_text(char *buf, size_t size, const char *shape)
{
	const char *s = shape ? shape : "";
	size_t o = 0, dims = 0;
	int in_dims = 0;

	if (!size)
		return "";
	for (const char *p = s; *p && o + 1 < size; p++) {
		if (*p == '[') {
			in_dims = 1;
			dims = p[1] == ']' ? 0 : 1;
		} else if (*p == ']') {
			in_dims = 0;
		} else if (in_dims && *p == ',') {
			dims++;
		} else if (*p == '{' && !in_dims) {
			const char *e = strchr(p, '}');
			if (e && default_layout(p + 1, (size_t)(e - p - 1), dims)) {
				p = e; /* the layout every reader assumes: left out */
				continue;
			}
		}
		buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}

/* ---- colours of their own ------------------------------------------------ */

static const uint32_t palette[HX_PALETTE] = {
	0xE69F00, 0x56B4E9, 0x009E73, 0xF0E442, 0x0072B2, 0xD55E00, 0xCC79A7, 0x999933,
};

size_t hx_pick_colored(const mp_hlo_result_t *r, size_t *out)
{
	size_t n = hx_pick_lifetimes(r, HX_PALETTE, out);

	if (n)
		return n;
	for (size_t j = 0; j < r->n_buffers && n < HX_PALETTE; j++)
		if (r->buffers[r->by_size[j]].category != MP_HLO_CAT_SMALL && r->buffers[r->by_size[j]].size > 0)
			out[n++] = r->by_size[j];
	return n;
}

uint32_t hx_buffer_color(const size_t *colored, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (colored[k] == i)
			return palette[k];
	return HX_COLOR_REST;
}

/* ---- the ranks the lanes leave out -------------------------------------- */

size_t hx_lane_gaps(const mp_hlo_result_t *r, const size_t *life, size_t nlife, char *buf, size_t size)
{
	size_t li = 0, missing = 0, o = 0, run0 = 0, last = 0;
	int seen[MP_HLO_CAT_SMALL + 1] = {0}, first = 1;

	if (size)
		buf[0] = '\0';
	if (!nlife || !size)
		return 0;
	/* ranks above the last lane's without a lane, as ranges "#4–#12" */
	for (size_t j = 0; j < r->n_buffers && li < nlife; j++) {
		size_t i = r->by_size[j];
		int gap = !(li < nlife && life[li] == i) && r->buffers[i].category != MP_HLO_CAT_SMALL;
		if (!gap) {
			li += life[li] == i;
			continue;
		}
		if (r->buffers[i].category >= 0 && r->buffers[i].category <= MP_HLO_CAT_SMALL)
			seen[r->buffers[i].category] = 1;
		if (missing && j == last + 1) {
			last = j;
			missing++;
			continue;
		}
		if (missing && o < size)
			o += (size_t)snprintf(buf + o, size - o, run0 == last ? "%s#%zu" : "%s#%zu\xE2\x80\x93#%zu",
					      first ? "" : ", ", run0 + 1, last + 1), first = 0;
		run0 = last = j;
		missing++;
	}
	if (missing && o < size)
		o += (size_t)snprintf(buf + o, size - o, run0 == last ? "%s#%zu" : "%s#%zu\xE2\x80\x93#%zu",
				      first ? "" : ", ", run0 + 1, last + 1);
	if (!missing)
		return 0;
	if (o < size)
		o += (size_t)snprintf(buf + o, size - o, " %s no lane: live throughout the trace (",
				      missing > 1 ? "have" : "has");
	first = 1;
	for (int c = 0; c <= MP_HLO_CAT_SMALL && o < size; c++)
		if (seen[c]) {
			o += (size_t)snprintf(buf + o, size - o, "%s%s", first ? "" : ", ",
					      mp_hlo_category_name((mp_hlo_category_t)c));
			first = 0;
		}
	if (o < size)
		snprintf(buf + o, size - o, ")");
	return missing;
}

const char *hx_buffer_note(char *buf, size_t size, const char *first, const mp_hlo_buffer_t *b)
{
	char span[96], pad[64], hb[48];

	if (b->has_span)
		snprintf(span, sizeof(span), "program points %" PRId64 " to %" PRId64, b->span_start, b->span_limit);
	else
		snprintf(span, sizeof(span), "live throughout the trace");
	pad[0] = 0;
	if (b->unpadded_size && b->unpadded_size != b->size)
		snprintf(pad, sizeof(pad), ", %" PRId64 " B unpadded", b->unpadded_size);
	int has_op = b->op_name && b->op_name[0], has_code = b->opcode && b->opcode[0];

	snprintf(buf, size, "%s\n%s\nshape: %s\nop: %s%s%s%s\nsource: %s\nbytes: %s%s · %s\n%s", first,
		 b->instruction_name ? b->instruction_name : "", b->shape && b->shape[0] ? b->shape : "(none)",
		 has_op ? b->op_name : has_code ? "" : "(none)", has_op && has_code ? " (" : "",
		 has_code ? b->opcode : "", has_op && has_code ? ")" : "",
		 b->source && b->source[0] ? b->source : "(none)",
		 mp_bytes_exact(hb, sizeof(hb), b->size > 0 ? (uint64_t)b->size : 0), pad,
		 mp_hlo_category_name(b->category), span);
	return buf;
}
