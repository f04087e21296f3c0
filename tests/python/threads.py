"""threads.py - two Python threads allocating in different functions, for
tests/python/test_python_sites.c: each holds its blocks until both are done
(the program's peak), then all are freed. At the peak the main thread
prints what each site holds, by the objects' own sizes (sys.getsizeof, the
bytes the interpreter asked for them), as JSON {"a": bytes, "b": bytes}:
the figures memprof's rows for the lines marked SITE:thread_a and
SITE:thread_b must match. Nothing else allocates much meanwhile.
"""
import json
import sys
import threading

held = {"a": [], "b": []}
built = threading.Barrier(3)
release = threading.Event()


def worker_a():
    out = held["a"]
    for _ in range(12):
        out.append(bytearray(2 << 20))  # SITE:thread_a
    built.wait()
    release.wait()


def worker_b():
    out = held["b"]
    for i in range(40000):
        out.append("b%0110d" % i)  # SITE:thread_b
    built.wait()
    release.wait()


def size(objs):
    return sys.getsizeof(objs) + sum(sys.getsizeof(o) for o in objs)


ts = [threading.Thread(target=worker_a), threading.Thread(target=worker_b)]
for t in ts:
    t.start()
built.wait()
print(json.dumps({"a": size(held["a"]), "b": size(held["b"])}))
sys.stdout.flush()
release.set()
for t in ts:
    t.join()
held.clear()
