/* gpu_lane.h - the preload's side of the GPU backend's lane (table
 * version 2, annotate/backend.h): a lane on the writer this process records
 * into, so that CUDA memory and host memory share one capture and one
 * clock. */
#ifndef MP_PRELOAD_GPU_LANE_H
#define MP_PRELOAD_GPU_LANE_H

#include <stdint.h>

void *mp__gpu_lane_open(void);
int mp__gpu_lane_event(void *lane, int kind, int memory, uint64_t time_ns, uint64_t address, uint64_t bytes);
void mp__gpu_lane_hold(void *lane, uint64_t time_ns);
void mp__gpu_lane_dropped(void *lane, int memory, uint64_t n);
uint64_t mp__gpu_origin_ns(void);

#endif
