/* hlo_header.c - (being written) */
#include <memprof/charts.h>
