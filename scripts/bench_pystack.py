# bench_pystack.py - a Python workload for scripts/bench_pystack.sh: dicts,
# json, lists and strings, with large blocks (malloc) beside pymalloc's
# small objects. Prints wall_s= (its own run time) like alloc_bench.
import json
import sys
import time


def record(i):
    return {"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)], "score": i * 0.5}


def batch(n):
    rows = [record(i) for i in range(n)]
    text = json.dumps(rows)
    back = json.loads(text)
    blob = bytearray(len(text))  # a large block: malloc
    return len(back) + len(blob)


def main(rounds):
    t = time.perf_counter()
    total = 0
    for _ in range(rounds):
        total += batch(2000)
    print("wall_s=%.3f total=%d" % (time.perf_counter() - t, total))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
