"""sites.py - a Python program with known allocation sites, for
tests/python/test_python_sites.c (issue 40, "How it is checked").

Each site is one line, marked `# SITE:<name>` at its end; the test finds
the lines by their markers, so they may move. The program builds
everything, holds it at one moment (its peak: nothing is freed before it,
everything is freed after it), then frees it all. A transient block is
allocated and freed before the peak, so that it must count 0 there.

  python3 sites.py                 as recorded by memprof (no tracemalloc)
  python3 sites.py --tracemalloc   the reference: at the peak, tracemalloc's
                                   statistics by line for this file, printed
                                   as JSON {"LINE": bytes, ..., "minor": 12}
                                   on stdout (minor: the Python's 3.X)

Sizes are chosen so that they are well above the interpreter's own noise
(a few KiB per line): each site holds 1 MiB or more at the peak.
"""
import sys

TRACE = "--tracemalloc" in sys.argv
if TRACE:
    import tracemalloc

    tracemalloc.start(1)

N = 20000


def make_strings(n):
    out = []
    for i in range(n):
        out.append("s%0110d" % i)  # SITE:strings
    return out


def make_buffers(n):
    out = []
    for _ in range(n):
        out.append(bytearray(1 << 20))  # SITE:bytearrays
    return out


def make_tuples(n):
    out = []
    for i in range(n):
        out.append((i * 0.5, i * 1.5, i * 2.5))  # SITE:tuples
    return out


def make_comprehension(n):
    return ["c%0110d" % i for i in range(n)]  # SITE:comprehension


def transient():
    t = bytearray(4 << 20)  # SITE:transient
    return len(t)


def at_peak(held):
    tmp = bytes(6 << 20)  # SITE:temporary
    report(held)
    return len(tmp)


def report(held):
    """The peak: everything built is live, the temporary too."""
    if not TRACE:
        return
    snap = tracemalloc.take_snapshot()
    snap = snap.filter_traces([tracemalloc.Filter(True, __file__)])
    stats = {}
    for s in snap.statistics("lineno"):
        stats[str(s.traceback[0].lineno)] = s.size
    stats["minor"] = sys.version_info.minor
    import json

    print(json.dumps(stats))
    sys.stdout.flush()


def main():
    transient()
    held = [make_strings(N), make_buffers(16), make_tuples(N * 2), make_comprehension(N)]
    at_peak(held)
    held.clear()


main()
