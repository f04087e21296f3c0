"""noop_check.py - the memprof module when nothing records this process
(test_python_module): nothing loaded, one shared object from op(), a
decorator that returns the function itself, the same errors as when
recording; then the cost of a scope, printed for docs/install.md."""
import sys
import timeit

import memprof

assert memprof._lib is None, memprof._lib
assert not memprof.enabled()
a = memprof.op("a")
assert a is memprof.op("b", region="temp", dtype="float32", shape=(8, 2048))


def f():
    return 1


assert memprof.op("x")(f) is f
try:
    memprof.op("x", region="bogus")
    sys.exit("an unknown region was accepted")
except ValueError as e:
    assert "region must be one of" in str(e), e
memprof.step(3)
memprof.mark("nothing")
with memprof.op("attention", region="temp") as scope:
    assert scope is a

if len(sys.argv) > 1:
    n = 200000
    bare = min(timeit.repeat("pass", number=n, repeat=5)) / n * 1e9
    scoped = min(timeit.repeat('with op("attention", region="temp"):\n    pass',
                               globals={"op": memprof.op}, number=n, repeat=5)) / n * 1e9
    step = min(timeit.repeat("step(1)", globals={"step": memprof.step}, number=n, repeat=5)) / n * 1e9
    print("not recording: empty statement %.0f ns, with memprof.op(...) %.0f ns, memprof.step %.0f ns"
          % (bare, scoped, step))
print("ok")
