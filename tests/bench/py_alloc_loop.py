"""A Python loop of small objects (dicts, lists, json), for the cost of
recording pymalloc's objects (docs/hooks.md, "Python's allocator"):

    python3 tests/bench/py_alloc_loop.py [ROUNDS]
    memprof record [--stacks] -- python3 tests/bench/py_alloc_loop.py [ROUNDS]

Prints its own wall time and process CPU time (the writer's flusher
thread included) for the loop alone.
"""
import json
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
data = {"a": [1, 2, 3], "b": {"c": "x" * 20, "d": [{"k": i, "v": "y" * i} for i in range(10)]}}
t0, c0 = time.perf_counter(), time.process_time()
n = 0
for i in range(ROUNDS):
    d = {str(j): j for j in range(20)}
    l = [x * 2 for x in range(50)]
    s = json.dumps(data)
    o = json.loads(s)
    n += len(o) + len(d) + len(l)
print("wall %.3f cpu %.3f" % (time.perf_counter() - t0, time.process_time() - c0))
