# victim_py.py - test_hooks_pystack runs this under `memprof record --stacks`
# with each installed CPython. The line numbers below are the test's golden
# figures: keep them where they are (or update PY_LINE_* in the test).
import threading


class Holder:
    def grow(self):
        return bytearray(3 << 20)  # line 9: Holder.grow, a 3 MiB + 1 request


def make_buffer():
    return bytearray(1 << 20)  # line 13: make_buffer, a 1 MiB + 1 request


def make_lists():
    return [str(i) * 3 for i in range(20000)]


def worker():
    return bytearray(2 << 20)  # line 21: worker, in a second thread


def main():
    lists = make_lists()
    buf = make_buffer()  # line 26: main calls make_buffer
    big = Holder().grow()  # line 27: main calls Holder.grow
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    return len(lists) + len(buf) + len(big)


main()
