/* palette.c - colours by meaning, from Okabe and Ito's palette, which
 * readers with any common colour-vision deficiency can tell apart. */
#include <memprof/charts.h>

uint32_t mp_color_region(int region_type)
{
	switch (region_type) {
	case MP_REGION_PERSIST:
		return 0x0072B2; /* blue */
	case MP_REGION_DYNAMIC:
		return 0xE69F00; /* orange */
	case MP_REGION_OUTPUT:
		return 0x009E73; /* bluish green */
	case MP_REGION_TEMP:
		return 0x56B4E9; /* sky blue */
	case MP_REGION_STACK:
		return 0xCC79A7; /* reddish purple */
	default:
		return 0x6E6E6E; /* unknown: dark grey, apart from the light grey of free bytes */
	}
}

uint32_t mp_color_hlo(mp_hlo_category_t category)
{
	switch (category) {
	case MP_HLO_CAT_PARAMETER:
		return 0x0072B2;
	case MP_HLO_CAT_OUTPUT:
		return 0x009E73;
	case MP_HLO_CAT_THREAD_LOCAL:
		return 0xCC79A7;
	case MP_HLO_CAT_CONSTANT:
		return 0xF0E442; /* yellow */
	case MP_HLO_CAT_TEMPORARY:
		return 0xE69F00;
	default:
		return 0x8C8C8C; /* the small-buffer aggregate */
	}
}
