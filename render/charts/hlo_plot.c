/* hlo_plot.c - (being written) */
#include <memprof/charts.h>
