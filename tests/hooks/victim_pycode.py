# victim_pycode.py - test_hooks_pystack runs this under `memprof record
# --stacks`: functions made and dropped one after the other, so that each
# new code object (and its names) is likely made at the address of the one
# before, run by a frame at the same address, at the same instruction. The
# stack of each allocation must name its own function, never a dead one's.
SRC = "def f_%d(n):\n    return bytearray(n)\n"


def run(k):
    ns = {}
    exec(compile(SRC % k, "<pycode>", "exec"), ns)
    ns["f_%d" % k](300 + k)  # a pymalloc object of 301 + k bytes, made by f_k


for k in range(100):
    run(k)
