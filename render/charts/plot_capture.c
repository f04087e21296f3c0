/* plot_capture.c - (being written) */
#include <memprof/charts.h>
