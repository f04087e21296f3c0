"""train.py - a training loop's shape, marked with the memprof module
(test_python_module; docs/install.md). Run under `memprof record` with
PYTHONMALLOC=malloc, so that every buffer is a malloc of its own:
bytearray(N) asks malloc for N + 1 bytes (CPython keeps a NUL after the
data) and for its 56-byte object.

  step 1  op embed (persist, float32, [1000,64]): one 3000001-byte
          buffer, kept to the end
  step 2  op attention (temp, float32, [8,2048]): three 5000003-byte
          buffers, dropped when the scope ends
  step 3  op mlp (a decorated function; region unknown): one 7000005-byte
          buffer, kept; then a mark "done"

The peak is in step 2 (3 MB + 15 MB live, against 3 MB + 7 MB in step 3),
where the breakdown holds embed's and attention's buffers; steps 3..3
alone peak with embed's and mlp's. It prints the same line with or
without memprof."""
import memprof

memprof.step(1)
with memprof.op("embed", region="persist", dtype="float32", shape=(1000, 64)):
    weights = bytearray(3_000_001)

memprof.step(2)
with memprof.op("attention", region="temp", dtype="float32", shape=(8, 2048)):
    scores = [bytearray(5_000_003) for _ in range(3)]
    total = sum(len(s) for s in scores)
del scores


@memprof.op("mlp")
def mlp():
    return bytearray(7_000_005)


memprof.step(3)
out = mlp()
memprof.mark("done")
print("trained: %d + %d + %d bytes" % (len(weights), total, len(out)))
