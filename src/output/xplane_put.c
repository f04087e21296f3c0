/* xplane_put.c - one entry of XPlane.event_metadata or stat_metadata, for
 * what writes XSpaces: the exporter, the generator (memprof_xplane_gen) and
 * the tests' XSpace builder (memprof/xplane_export.h). */
#include <memprof/xplane_export.h>

void mp_xplane_put_meta(mp_pw_buf_t *plane, uint32_t field, uint64_t id, const char *name)
{
	mp_pw_buf_t e = {0}, v = {0};

	mp_pw_put_uint(&v, 1, id);
	mp_pw_put_str(&v, 2, name);
	mp_pw_put_uint(&e, 1, id);
	mp_pw_put_msg(&e, 2, &v);
	mp_pw_put_msg(plane, field, &e);
	mp_pw_buf_free(&e);
	mp_pw_buf_free(&v);
}
