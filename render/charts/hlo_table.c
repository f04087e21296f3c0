/* hlo_table.c - (being written) */
#include <memprof/charts.h>
