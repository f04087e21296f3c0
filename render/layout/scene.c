/* scene.c - the display list: items, their points and strings in three
 * growing arrays, and a sticky error (memprof/scene.h). */
#include <memprof/error.h>
#include <memprof/layout.h>
#include <memprof/scene.h>
#include <memprof/vec.h>

#include <stdlib.h>
#include <string.h>

struct mp_scene {
	double width, height;
	uint32_t background;
	int status;
	mp_scene_item_t *items;
	size_t n, cap;
	mp_point_t *pts;
	size_t npts, ptscap;
	char *str;
	size_t nstr, strcap;
	uint32_t *pix;
	size_t npix, pixcap;
};

mp_scene_t *mp_scene_new(double width, double height, uint32_t background)
{
	mp_scene_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->width = width;
	s->height = height;
	s->background = background;
	return s;
}

void mp_scene_free(mp_scene_t *s)
{
	if (!s)
		return;
	free(s->items);
	free(s->pts);
	free(s->str);
	free(s->pix);
	free(s);
}

double mp_scene_width(const mp_scene_t *s) { return s->width; }
double mp_scene_height(const mp_scene_t *s) { return s->height; }
uint32_t mp_scene_background(const mp_scene_t *s) { return s->background; }
int mp_scene_status(const mp_scene_t *s) { return s->status; }

/* Room for `more` elements of `elem` bytes in *arr (count *n, capacity
 * *cap); on failure the scene's status turns MP_ENOMEM. */
static int reserve(mp_scene_t *s, void **arr, size_t *cap, size_t n, size_t more, size_t elem)
{
	if (s->status)
		return -1;
	if (mp_vec_reserve(arr, cap, n + more, elem) < 0) {
		s->status = MP_ENOMEM;
		return -1;
	}
	return 0;
}

static mp_scene_item_t *add(mp_scene_t *s, int kind)
{
	mp_scene_item_t *it;

	if (reserve(s, (void **)&s->items, &s->cap, s->n, 1, sizeof(*s->items)) < 0)
		return NULL;
	it = &s->items[s->n++];
	memset(it, 0, sizeof(*it));
	it->kind = (uint8_t)kind;
	return it;
}

long mp_scene_rect(mp_scene_t *s, double x, double y, double w, double h, const mp_style_t *style)
{
	mp_scene_item_t *it = add(s, MP_SCENE_RECT);

	if (!it)
		return -1;
	it->x = x;
	it->y = y;
	it->w = w;
	it->h = h;
	it->style = *style;
	return (long)(s->n - 1);
}

long mp_scene_path(mp_scene_t *s, const mp_point_t *points, size_t n, int closed, const mp_style_t *style)
{
	mp_scene_item_t *it;

	if (reserve(s, (void **)&s->pts, &s->ptscap, s->npts, n, sizeof(*s->pts)) < 0 || !(it = add(s, MP_SCENE_PATH)))
		return -1;
	memcpy(s->pts + s->npts, points, n * sizeof(*points));
	it->first = (uint32_t)s->npts;
	it->count = (uint32_t)n;
	it->closed = closed != 0;
	it->style = *style;
	s->npts += n;
	return (long)(s->n - 1);
}

long mp_scene_line(mp_scene_t *s, double x0, double y0, double x1, double y1, const mp_style_t *style)
{
	mp_point_t p[2] = {{x0, y0}, {x1, y1}};

	return mp_scene_path(s, p, 2, 0, style);
}

long mp_scene_text(mp_scene_t *s, double x, double y, const char *utf8, const mp_text_style_t *style)
{
	size_t len = strlen(utf8);
	mp_scene_item_t *it;

	if (!len)
		return -2;
	if (reserve(s, (void **)&s->str, &s->strcap, s->nstr, len + 1, 1) < 0 || !(it = add(s, MP_SCENE_TEXT)))
		return -1;
	memcpy(s->str + s->nstr, utf8, len + 1);
	mp_utf8_clean(s->str + s->nstr); /* what reaches the painter is UTF-8 */
	it->text = (uint32_t)s->nstr;
	it->x = x;
	it->y = y;
	it->text_style = *style;
	s->nstr += len + 1;
	return (long)(s->n - 1);
}

long mp_scene_image(mp_scene_t *s, double x, double y, uint32_t w, uint32_t h, const uint32_t *rgba)
{
	size_t n = (size_t)w * h;
	mp_scene_item_t *it;

	if (!n || s->npix + n > UINT32_MAX) {
		if (n)
			s->status = MP_ENOMEM;
		return n ? -1 : -2;
	}
	if (reserve(s, (void **)&s->pix, &s->pixcap, s->npix, n, sizeof(*s->pix)) < 0 || !(it = add(s, MP_SCENE_IMAGE)))
		return -1;
	memcpy(s->pix + s->npix, rgba, n * sizeof(*rgba));
	it->first = (uint32_t)s->npix;
	it->count = (uint32_t)n;
	it->x = x;
	it->y = y;
	it->w = w;
	it->h = h;
	s->npix += n;
	return (long)(s->n - 1);
}

const uint32_t *mp_scene_pixels(const mp_scene_t *s, const mp_scene_item_t *it)
{
	return it->kind == MP_SCENE_IMAGE ? s->pix + it->first : NULL;
}

void mp_scene_tag(mp_scene_t *s, long item, const char *tag)
{
	if (item >= 0 && (size_t)item < s->n)
		s->items[item].tag = tag;
}

void mp_scene_note(mp_scene_t *s, long item, const char *note, uint32_t ref)
{
	size_t len = strlen(note);

	if (item < 0 || (size_t)item >= s->n)
		return;
	if (s->nstr + len + 1 >= UINT32_MAX) /* its offset would not fit */
		s->status = MP_ENOMEM;
	if (reserve(s, (void **)&s->str, &s->strcap, s->nstr, len + 1, 1) < 0)
		return;
	memcpy(s->str + s->nstr, note, len + 1);
	mp_utf8_clean(s->str + s->nstr);
	s->items[item].note = (uint32_t)s->nstr + 1;
	s->items[item].ref = ref;
	s->nstr += len + 1;
}

const char *mp_scene_item_note(const mp_scene_t *s, const mp_scene_item_t *it)
{
	return it->note ? s->str + it->note - 1 : NULL;
}

size_t mp_scene_count(const mp_scene_t *s) { return s->n; }

const mp_scene_item_t *mp_scene_item(const mp_scene_t *s, size_t i)
{
	return i < s->n ? &s->items[i] : NULL;
}

const mp_point_t *mp_scene_points(const mp_scene_t *s, const mp_scene_item_t *it)
{
	return s->pts + it->first;
}

const char *mp_scene_string(const mp_scene_t *s, const mp_scene_item_t *it)
{
	return it->kind == MP_SCENE_TEXT ? s->str + it->text : "";
}

const mp_scene_item_t *mp_scene_find(const mp_scene_t *s, const char *tag, size_t *from)
{
	for (size_t i = *from; i < s->n; i++) {
		if (s->items[i].tag && !strcmp(s->items[i].tag, tag)) {
			*from = i + 1;
			return &s->items[i];
		}
	}
	*from = s->n;
	return NULL;
}
