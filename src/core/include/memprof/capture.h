/* memprof/capture.h - the .memprof capture file: its writer and its reader.
 *
 * The format is specified in docs/format.md. In short: a header, then a
 * stream of deflate-compressed blocks, each with its length and CRC-32,
 * then a trailer with counts written at a clean close. The capture core is
 * built by stage (docs/architecture.md): the writer (<memprof/writer.h>,
 * memprof_write) and the reader (<memprof/reader.h>, memprof_read) share
 * the format (<memprof/format.h>, memprof_format); this header is both
 * ends, for programs that link memprof_core.
 */
#ifndef MEMPROF_CAPTURE_H
#define MEMPROF_CAPTURE_H

#include <memprof/reader.h>
#include <memprof/writer.h>

#endif
