/* timeline.c - (being written) */
#include <memprof/charts.h>
