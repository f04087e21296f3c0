/* hlo_buffers.c - (being written) */
#include <memprof/charts.h>
