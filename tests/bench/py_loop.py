"""py_loop.py - a Python workload for scripts/bench_python.sh: dicts, json
and lists, the interpreter's everyday allocations (small objects from
pymalloc, list and dict tables from malloc when they grow).

  python3 py_loop.py [--seconds S | --iterations N]

Runs S seconds (default 5) or N iterations, keeping the last 2000
results alive (a heap that turns over rather than one that only grows or
stays empty), and prints "iterations=I seconds=T per_second=R cpu=C
per_cpu_second=P thread_cpu=M" on stdout: C is the process's CPU time over
the loop (every thread's: a recorder's flusher thread counts), the figure a
loaded machine moves least; M is the loop's own thread's alone
(scripts/bench_python_thread.sh).
"""
import json
import sys
import time


def one(i, keep):
    rec = {"id": i, "name": "item-%d" % i, "tags": ["t%d" % (i % 7), "u%d" % (i % 11)],
           "values": [float(j) * 0.5 for j in range(i % 32)], "nested": {"a": i, "b": str(i)}}
    text = json.dumps(rec)
    back = json.loads(text)
    words = sorted(back["name"].split("-") + back["tags"])
    keep[i % len(keep)] = (back, words, text)
    return len(text)


def main():
    seconds, iterations = 5.0, None
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--seconds":
        seconds = float(args[1])
    elif len(args) == 2 and args[0] == "--iterations":
        iterations = int(args[1])
    elif args:
        sys.exit("usage: py_loop.py [--seconds S | --iterations N]")
    keep = [None] * 2000
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    i = 0
    while True:
        for _ in range(100):
            one(i, keep)
            i += 1
        el = time.perf_counter() - t0
        if (iterations is not None and i >= iterations) or (iterations is None and el >= seconds):
            break
    cpu, mine = time.process_time() - c0, time.thread_time() - m0
    print("iterations=%d seconds=%.3f per_second=%.1f cpu=%.3f per_cpu_second=%.1f thread_cpu=%.3f"
          % (i, el, i / el, cpu, i / cpu, mine))


main()
