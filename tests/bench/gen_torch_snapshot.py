#!/usr/bin/env python3
"""gen_torch_snapshot.py OUT ENTRIES FRAMES - a large PyTorch memory snapshot
for scripts/bench_torch.sh, written opcode by opcode in a stream (the
snapshot is too large to build as Python objects first) with the opcodes
Python's pickle module emits for it in protocol 4: FRAME every 64 KiB,
MEMOIZE after every string, dict and list, BINGET/LONG_BINGET for what is
pickled again, APPENDS/SETITEMS in batches of up to 1000.

The trace: one device, one 4 GiB segment, allocations of 512 B to 1 MiB in
1 MiB slots, each freed (free_requested, free_completed) once 2048 are
live, and an OOM every 100000 entries. Every entry has its own frames list
(the worst case for memory: PyTorch shares the list of identical stacks)
of FRAMES frames taken from a pool of 4000 frame dicts (shared, as PyTorch
shares them): torch's own frames first, then the user's.
"""
import struct
import sys

EMPTY_DICT, EMPTY_LIST, MARK, MEMOIZE = b'}', b']', b'(', b'\x94'
APPENDS, SETITEMS, STOP = b'e', b'u', b'.'


class Writer:
    def __init__(self, f):
        self.f = f
        self.buf = []
        self.size = 0
        self.memo = 0
        self.strs = {}

    def put(self, b):
        self.buf.append(b)
        self.size += len(b)
        if self.size >= 65536:
            self.flush()

    def flush(self):
        if self.size:
            self.f.write(b'\x95' + struct.pack('<Q', self.size) + b''.join(self.buf))
        self.buf, self.size = [], 0

    def memoize(self):
        self.memo += 1
        return MEMOIZE

    def s(self, text):
        """A string: pickled once, then fetched from the memo."""
        if text in self.strs:
            return get(self.strs[text])
        raw = text.encode()
        self.strs[text] = self.memo
        op = (b'\x8c' + bytes([len(raw)]) if len(raw) < 256 else b'X' + struct.pack('<I', len(raw))) + raw
        return op + self.memoize()


def get(i):
    return b'h' + bytes([i]) if i < 256 else b'j' + struct.pack('<I', i)


def integer(v):
    if 0 <= v < 256:
        return b'K' + bytes([v])
    if 0 <= v < 65536:
        return b'M' + struct.pack('<H', v)
    if -2**31 <= v < 2**31:
        return b'J' + struct.pack('<i', v)
    n = (v.bit_length() + 8) // 8
    return b'\x8a' + bytes([n]) + v.to_bytes(n, 'little', signed=True)


def trace(entries, base, slot):
    """The trace as (action, addr, size, key); the same every time."""
    live, order, n, k = {}, [], 0, 0
    yield ('segment_alloc', base, 4 << 30, 'addr')
    n += 1
    while n < entries:
        if n % 100000 == 99999:
            yield ('oom', 8 << 30, 1 << 30, 'device_free')
            n += 1
        elif len(order) >= 2048:
            a = order.pop(0)
            sz = live.pop(a)
            yield ('free_requested', a, sz, 'addr')
            yield ('free_completed', a, sz, 'addr')
            n += 2
        else:
            a = base + (k % 4096) * slot
            k += 1
            if a in live:
                continue
            sz = 512 + (k * 7919) % (slot - 512)
            live[a] = sz
            order.append(a)
            yield ('alloc', a, sz, 'addr')
            n += 1
    return live


def main():
    out, entries, nframes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    base, slot = 0x7f0000000000, 1 << 20
    # the state at dump time comes first in the file: play the trace once
    gen = trace(entries, base, slot)
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        live = stop.value
    with open(out, 'wb', buffering=1 << 22) as f:
        f.write(b'\x80\x04')
        w = Writer(f)
        w.put(EMPTY_DICT + w.memoize() + MARK)
        # segments: one 4 GiB segment with the blocks live at dump time
        w.put(w.s('segments') + EMPTY_LIST + w.memoize() + MARK)
        seg = (EMPTY_DICT + w.memoize() + MARK + w.s('device') + integer(0) + w.s('address') + integer(base) +
               w.s('total_size') + integer(4 << 30) + w.s('is_expandable') + b'\x89' + w.s('frames') +
               EMPTY_LIST + w.memoize() + w.s('blocks') + EMPTY_LIST + w.memoize() + MARK)
        w.put(seg)
        for a in sorted(live):
            w.put(EMPTY_DICT + w.memoize() + MARK + w.s('address') + integer(a) + w.s('size') +
                  integer((live[a] + 511) // 512 * 512) + w.s('requested_size') + integer(live[a]) +
                  w.s('state') + w.s('active_allocated') + SETITEMS)
        w.put(APPENDS + SETITEMS + APPENDS)
        # the trace; the frame pool (4000 frame dicts) is pickled in the
        # first entry's frames, and fetched by memo afterwards
        w.put(w.s('device_traces') + EMPTY_LIST + w.memoize() + MARK + EMPTY_LIST + w.memoize() + MARK)
        cache = {}

        def S(text):
            if text in cache:
                return cache[text]
            b = w.s(text)
            cache[text] = get(w.strs[text])
            return b

        refs, t, n, batch = None, 1_700_000_000_000_000, 0, 0
        for action, addr, size, key in trace(entries, base, slot):
            t += 3
            e = (EMPTY_DICT + w.memoize() + MARK + S('action') + S(action) + S(key) + integer(addr) + S('size') +
                 integer(size) + S('stream') + integer(0) + S('time_us') + integer(t) + S('frames') +
                 EMPTY_LIST + w.memoize() + MARK)
            if refs is None:
                pool = []
                for i in range(4000):
                    if i % 4 == 0:
                        fn, name = '/usr/lib/python3/dist-packages/torch/nn/modules/module_%d.py' % (i % 40), 'forward'
                    else:
                        fn, name = '/home/user/project/model_%d.py' % (i % 97), 'layer_%d' % i
                    e += EMPTY_DICT + w.memoize()
                    pool.append(w.memo - 1)
                    e += MARK + S('filename') + S(fn) + S('line') + integer(i + 1) + S('name') + S(name) + SETITEMS
                refs = b''.join(get(i) for i in pool)
            else:
                off = (n * 37) % (4000 - nframes) * 5
                e += refs[off:off + nframes * 5]
            w.put(e + APPENDS + SETITEMS)
            n += 1
            batch += 1
            if batch == 1000:
                w.put(APPENDS + MARK)
                batch = 0
        w.put(APPENDS + APPENDS + SETITEMS + STOP)  # the device's list, device_traces, the top dict
        w.flush()
    print('%s: %d trace entries' % (out, n))


if __name__ == '__main__':
    main()
