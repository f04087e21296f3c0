/* hlo_space.c - (being written) */
#include <memprof/charts.h>
