#!/usr/bin/env python3
"""gen_snapshots.py OUTDIR - PyTorch memory snapshot fixtures for memprof's
tests, written with Python's pickle module (the serializer that
torch.cuda.memory._dump_snapshot uses), and the figures the tests expect,
computed here by a separate model of the caching allocator's state (a few
lines over the same operations), never by memprof.

Each scenario is a script of allocator operations with explicit addresses.
The model plays the whole script, records the state after every trace
entry, then writes the snapshot as PyTorch would at the end: 'segments'
(the state at dump time, blocks included) and 'device_traces' (only the
newest entries when the scenario keeps fewer, as PyTorch's ring buffer
does). OUTDIR/expected.json holds, per fixture and device: the state after
each kept entry (time, allocated bytes, free bytes inside the segments,
largest free chunk), the peaks, each OOM's figures and cause.
"""
import gzip
import json
import os
import pickle
import sys

MIN_BLOCK = 512
MiB = 1 << 20


DIVISIONS = {}  # roundup_power2_divisions of the scenario being played: interval -> divisions


def rounded_divisions(n):
    """round_size with roundup_power2_divisions: between two powers of two,
    the next of `divisions` equal steps (sizes from 2**(20+k) on use the
    setting of interval k)."""
    k = min(max(n.bit_length() - 1 - 20, 0), 15)
    div = DIVISIONS.get(k, 0)
    if n < MIN_BLOCK or div <= 1 or n <= MIN_BLOCK * div or n & (n - 1) == 0:
        return None
    floor2 = 1 << (n.bit_length() - 1)
    step = floor2 >> (div.bit_length() - 1)
    return -(-n // step) * step


def rounded(n):
    if rounded_divisions(n):
        return rounded_divisions(n)
    return max(MIN_BLOCK, (n + MIN_BLOCK - 1) // MIN_BLOCK * MIN_BLOCK)


# Frames as PyTorch gives them: innermost first, identical stacks share one
# list object (so the pickle refers back to it through the memo).
def frame(filename, line, name):
    return {'filename': filename, 'line': line, 'name': name}


TORCH_ALLOC = frame('/usr/lib/python3/dist-packages/torch/cuda/memory.py', 120, '_alloc')
STDLIB = frame('/usr/lib/python3.11/contextlib.py', 81, '__enter__')
STACKS = {
    'fwd': [TORCH_ALLOC, frame('/home/u/train.py', 42, 'forward'), frame('/home/u/train.py', 90, 'main')],
    'bwd': [TORCH_ALLOC, STDLIB, frame('/home/u/model.py', 17, 'backward'), frame('/home/u/train.py', 91, 'main')],
    'opt': [frame('/home/u/optim.py', 5, 'step')],
    'int': [TORCH_ALLOC, STDLIB],
}
OP = {'fwd': 'forward (/home/u/train.py:42)', 'bwd': 'backward (/home/u/model.py:17)',
      'opt': 'step (/home/u/optim.py:5)', 'int': '_alloc (/usr/lib/python3/dist-packages/torch/cuda/memory.py:120)'}


class Device:
    """The model: regions (segments, mapped runs) and live blocks."""

    def __init__(self):
        self.regions = {}    # base -> size (expandable runs merged)
        self.expandable = set()
        self.blocks = {}     # addr -> (block size, requested, stack, user_metadata)
        self.awaiting = {}   # freed by the program, waiting on another stream: out of
                             # allocated bytes, still in the segment
        self.meta = ''       # the thread's user_metadata now ('' = none set)
        self.entries = []    # trace entries, in order
        self.states = []     # after each entry: (time_us, heap, region_free, largest, reserved)
        self.ooms = []       # (entry index, requested, region_free, largest, cause, device_free)
        self.live = []       # after each entry: by_meta(blocks)

    def add_run(self, a, b):
        for base, size in sorted(self.regions.items()):
            if base <= b and base + size >= a and base in self.expandable:
                del self.regions[base]
                self.expandable.discard(base)
                a, b = min(a, base), max(b, base + size)
        self.regions[a] = b - a
        self.expandable.add(a)

    def sub_run(self, a, b):
        for base, size in sorted(self.regions.items()):
            end = base + size
            if base < b and end > a and base in self.expandable:
                del self.regions[base]
                self.expandable.discard(base)
                if base < a:
                    self.regions[base] = a - base
                    self.expandable.add(base)
                if end > b:
                    self.regions[b] = end - b
                    self.expandable.add(b)

    def block_size(self, addr, req):
        """The caching allocator's block for a request carved at addr: the
        free block there runs to the next block in use (live or awaiting)
        or the region's end; it is split when enough would remain (small
        pool, expandable: 512 B; large pool: more than 1 MiB)."""
        base = next(b for b, sz in self.regions.items() if b <= addr < b + sz)
        end = min([a for a in list(self.blocks) + list(self.awaiting) if addr < a < base + self.regions[base]]
                  + [base + self.regions[base]])
        want, rest = rounded(req), end - addr - rounded(req)
        small = self.regions[base] == 2 * MiB and base not in self.expandable
        split = rest >= MIN_BLOCK if small or base in self.expandable else rest > MiB
        return want if split else end - addr

    def free_chunks(self):
        chunks = []
        for base, size in self.regions.items():
            cur = base
            for addr in sorted(a for a in self.blocks if base <= a < base + size):
                if addr > cur:
                    chunks.append(addr - cur)
                cur = max(cur, addr + self.blocks[addr][0])
            if base + size > cur:
                chunks.append(base + size - cur)
        return chunks

    def state(self):
        chunks = self.free_chunks()
        heap = sum(b[0] for b in self.blocks.values())
        return heap, sum(chunks), max(chunks, default=0), sum(self.regions.values())


def by_meta(blocks):
    """Bytes of the live blocks per user_metadata ('' = none)."""
    out = {}
    for size, _, _, meta in blocks.values():
        out[meta] = out.get(meta, 0) + size
    return out


def play(script, keep=None, devices=1, metadata=False, no_time=False, annotations=(), divisions=None):
    """Run script: a list of (device, time_us, op, args...). Returns the
    snapshot dict and the expectations of the kept entries. With metadata,
    every entry carries 'user_metadata' as PyTorch writes it ('' when none
    is set), and the expectations hold the bytes live at the peak and at
    the end per metadata value, and the last mark before the peak. With
    no_time, entries carry no time_us and the expected times are entry
    indexes; annotations: (device, time_us, 'START'|'END', name) as
    external_annotations, and the phase open at the peak is expected."""
    DIVISIONS.clear()
    DIVISIONS.update(divisions or {})
    devs = [Device() for _ in range(devices)]
    starts = []
    for d, t, op, *args in script:
        dev = devs[d]
        stream = 7
        if op == 'seg':
            addr, size = args
            dev.regions[addr] = size
            ent = [('segment_alloc', addr, size, None)]
        elif op == 'segfree':
            addr, = args
            size = dev.regions.pop(addr)
            ent = [('segment_free', addr, size, None)]
        elif op == 'map':
            addr, size = args
            dev.add_run(addr, addr + size)
            ent = [('segment_map', addr, size, None)]
        elif op == 'unmap':
            addr, size = args
            dev.sub_run(addr, addr + size)
            ent = [('segment_unmap', addr, size, None)]
        elif op == 'alloc':
            addr, req, stack = args
            dev.blocks[addr] = (dev.block_size(addr, req), req, stack, dev.meta)
            ent = [('alloc', addr, req, stack)]
        elif op == 'free':
            addr, = args
            size, req, stack, _ = dev.blocks.pop(addr)
            ent = [('free_requested', addr, req, stack), ('free_completed', addr, req, stack)]
        elif op == 'free_req':  # out of allocated bytes; in its segment until free_done
            addr, = args
            dev.awaiting[addr] = dev.blocks.pop(addr)
            size, req, stack, _ = dev.awaiting[addr]
            ent = [('free_requested', addr, req, stack)]
            stream = 9
        elif op == 'free_done':
            addr, = args
            size, req, stack, _ = dev.awaiting.pop(addr)
            ent = [('free_completed', addr, req, stack)]
        elif op == 'oom':
            req, device_free, stack = args
            heap, free, largest, reserved = dev.state()
            cause = 'full' if req > free else ('fragmented' if req > largest else 'fits')
            dev.ooms.append((len(dev.entries), req, free, largest, cause, device_free))
            ent = [('oom', device_free, req, stack)]
        elif op == 'meta':  # torch.cuda.memory._set_memory_metadata: no entry
            dev.meta, = args
            continue
        elif op == 'annotate':  # a mark: its name in user_metadata
            ent = [('annotate', 0, 0, None)]
        else:
            raise ValueError(op)
        for action, addr, size, stack in ent:
            e = {'action': action, ('device_free' if action == 'oom' else 'addr'): addr, 'size': size,
                 'stream': stream, 'time_us': t,
                 'frames': STACKS[stack] if stack else []}
            if no_time:  # an older PyTorch, or settings that omit it
                del e['time_us']
            if metadata:
                e['user_metadata'] = args[0] if action == 'annotate' else dev.meta
            if len(dev.entries) == 0:
                starts.append(d)
            dev.entries.append(e)
            dev.states.append(((len(dev.entries) - 1) if no_time else t,) + dev.state())
            dev.live.append(by_meta(dev.blocks))
    snap = {'segments': [], 'device_traces': [], 'allocator_settings': {'expandable_segments': False}}
    if divisions:  # as PyTorch writes them: the interval's MiB as the key
        snap['allocator_settings']['roundup_power2_divisions'] = {
            str(1 << k): divisions.get(k, 0) for k in range(16)}
    if annotations:
        snap['external_annotations'] = [{'stage': st, 'name': nm, 'device': dv, 'time_us': tu}
                                        for dv, tu, st, nm in annotations]
    expected = []
    for d, dev in enumerate(devs):
        for base, size in sorted(dev.regions.items()):
            blocks, cur = [], base
            inuse = dict(dev.blocks, **dev.awaiting)
            for addr in sorted(a for a in inuse if base <= a < base + size):
                if addr > cur:
                    blocks.append({'address': cur, 'size': addr - cur, 'requested_size': 0, 'state': 'inactive',
                                   'frames': []})
                bsize, req, stack, _ = inuse[addr]
                blocks.append({'address': addr, 'size': bsize, 'requested_size': req,
                               'state': 'active_pending_free' if addr in dev.awaiting else 'active_allocated',
                               'frames': STACKS[stack]})
                cur = addr + bsize
            if cur < base + size:
                blocks.append({'address': cur, 'size': base + size - cur, 'requested_size': 0,
                               'state': 'inactive', 'frames': []})
            snap['segments'].append({
                'device': d, 'address': base, 'total_size': size, 'allocated_size': 0, 'active_size': 0,
                'requested_size': 0, 'stream': 7, 'segment_type': 'small' if size == 2 * MiB else 'large',
                'segment_pool_id': (0, 0),
                'is_expandable': base in dev.expandable, 'frames': [], 'blocks': blocks})
        first = 0 if keep is None else max(0, len(dev.entries) - keep)
        kept = dev.entries[first:]
        snap['device_traces'].append(kept)
        states = dev.states[first:]
        # the state before the first kept entry counts too: it is the start
        before = dev.states[first - 1] if first > 0 else None
        allstates = ([before] if before else []) + states
        origin = 0 if no_time else min((e['time_us'] for devx in devs for e in devx.entries[
            (0 if keep is None else max(0, len(devx.entries) - keep)):]), default=0)
        scale = 1 if no_time else 1000  # entry indexes, or microseconds in ns
        peak = max(allstates, key=lambda s: s[1]) if allstates else None
        peak_i = [s[1] for s in allstates].index(peak[1]) if peak else 0
        if metadata:  # kept entries only (no scenario with metadata drops any)
            marks = [e['user_metadata'] for e in kept[:peak_i] if e['action'] == 'annotate']
            extra = {'peak_by_metadata': dev.live[peak_i], 'end_by_metadata': by_meta(dev.blocks),
                     'mark_before_peak': marks[-1] if marks else None}
        else:
            extra = {}
        expected.append(dict({
            'device': d,
            'entries': len(kept),
            'states': [[(s[0] - origin) * scale, s[1], s[2], s[3]] for s in states],
            'peak_allocated': peak[1] if peak else 0,
            'peak_time_ns': max(0, (allstates[peak_i][0] - origin) * scale) if peak and (
                before is None or peak_i > 0) else 0,
            'peak_phase': phase_at(annotations, d, allstates[peak_i][0]) if peak and annotations else None,
            'peak_reserved': max((s[4] for s in allstates), default=0),
            'ooms': [[o[1], o[2], o[3], o[4], o[5]] for o in dev.ooms if o[0] >= first],
        }, **extra))
    return snap, expected


def phase_at(annotations, device, t):
    """The innermost phase open at time t (a START at t is open, an END at
    t is not yet)."""
    open_ = []
    for dv, tu, st, nm in annotations:
        if dv != device or tu > t:
            continue
        if st == 'START':
            open_.append(nm)
        elif tu < t and nm in open_:
            del open_[len(open_) - 1 - open_[::-1].index(nm):]
    return open_[-1] if open_ else None


def scenarios():
    S = {}
    # A 20 MiB segment with known blocks: allocations, frees, a re-use.
    base = 0x7f0000000000
    S['blocks'] = play([
        (0, 1000, 'seg', base, 20 * MiB),
        (0, 1010, 'alloc', base, 4 * MiB, 'fwd'),
        (0, 1020, 'alloc', base + 4 * MiB, 1000, 'fwd'),          # rounded to 1024
        (0, 1030, 'alloc', base + 4 * MiB + 1024, 6 * MiB, 'bwd'),
        (0, 1040, 'free', base + 4 * MiB),
        (0, 1050, 'alloc', base + 10 * MiB + 1024, 2 * MiB, 'opt'),
        (0, 1060, 'free', base),
        (0, 1070, 'alloc', base, 3 * MiB, 'int'),
    ])
    # The same program with one more block live at the peak (memprof diff):
    # 1 MiB from torch's own frames at base + 14 MiB, split off the free
    # space above it (5 MiB remain), so the peak is 13 MiB at 1055.
    S['blocks_plus'] = play([
        (0, 1000, 'seg', base, 20 * MiB),
        (0, 1010, 'alloc', base, 4 * MiB, 'fwd'),
        (0, 1020, 'alloc', base + 4 * MiB, 1000, 'fwd'),
        (0, 1030, 'alloc', base + 4 * MiB + 1024, 6 * MiB, 'bwd'),
        (0, 1040, 'free', base + 4 * MiB),
        (0, 1050, 'alloc', base + 10 * MiB + 1024, 2 * MiB, 'opt'),
        (0, 1055, 'alloc', base + 14 * MiB, 1 * MiB, 'int'),
        (0, 1060, 'free', base),
        (0, 1070, 'alloc', base, 3 * MiB, 'int'),
    ])
    # The trace starts after allocations were made: the ring buffer kept
    # only the last 5 entries; two blocks and the segment are older.
    S['ring'] = play([
        (0, 500, 'seg', base, 20 * MiB),
        (0, 510, 'alloc', base, 8 * MiB, 'fwd'),
        (0, 520, 'alloc', base + 8 * MiB, 2 * MiB, 'bwd'),
        (0, 530, 'alloc', base + 10 * MiB, 1 * MiB, 'opt'),
        (0, 540, 'free', base + 8 * MiB),                         # 2 entries
        (0, 550, 'alloc', base + 12 * MiB, 4 * MiB, 'fwd'),
        (0, 560, 'free', base),                                   # older than the trace
        (0, 570, 'alloc', base + 16 * MiB, 2 * MiB, 'bwd'),
    ], keep=5)
    # Expandable segments: ranges mapped and unmapped at the end of one
    # virtual range, blocks across the joined runs.
    vbase = 0x7e0000000000
    S['expandable'] = play([
        (0, 100, 'map', vbase, 2 * MiB),
        (0, 110, 'map', vbase + 2 * MiB, 2 * MiB),
        (0, 120, 'alloc', vbase + 1 * MiB, 2 * MiB, 'fwd'),       # spans both mapped pages
        (0, 130, 'map', vbase + 4 * MiB, 4 * MiB),
        (0, 140, 'alloc', vbase + 4 * MiB, 3 * MiB, 'bwd'),
        (0, 150, 'free', vbase + 4 * MiB),
        (0, 160, 'unmap', vbase + 6 * MiB, 2 * MiB),
        (0, 170, 'alloc', vbase + 3 * MiB, 1 * MiB, 'opt'),
    ])
    # An OOM with enough cached bytes but no chunk large enough, then one
    # with the device full.
    S['oom'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 5 * MiB, 'fwd'),
        (0, 30, 'alloc', base + 5 * MiB, 5 * MiB, 'fwd'),
        (0, 40, 'alloc', base + 10 * MiB, 5 * MiB, 'fwd'),
        (0, 50, 'alloc', base + 15 * MiB, 5 * MiB, 'fwd'),
        (0, 60, 'free', base),
        (0, 70, 'free', base + 10 * MiB),
        (0, 80, 'oom', 8 * MiB, 6 * MiB, 'bwd'),                  # 10 MiB cached, largest 5 MiB
        (0, 90, 'oom', 12 * MiB, 1 * MiB, 'bwd'),                 # more than all the cached bytes
    ])
    # free_requested before free_completed: the block is used on another
    # stream and stays allocated until its free completes.
    S['streams'] = play([
        (0, 10, 'seg', base, 2 * MiB),
        (0, 20, 'alloc', base, 512 * 1024, 'fwd'),
        (0, 30, 'alloc', base + 512 * 1024, 256 * 1024, 'bwd'),
        (0, 40, 'free_req', base),
        (0, 50, 'alloc', base + 768 * 1024, 512 * 1024, 'opt'),
        (0, 60, 'free_done', base),
        (0, 70, 'free', base + 512 * 1024),
    ])
    # Two devices, entries interleaved in time.
    S['devices'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (1, 15, 'seg', base + (1 << 36), 2 * MiB),
        (0, 20, 'alloc', base, 12 * MiB, 'fwd'),
        (1, 25, 'alloc', base + (1 << 36), 1 * MiB, 'bwd'),
        (1, 35, 'alloc', base + (1 << 36) + MiB, 4096, 'opt'),
        (0, 40, 'free', base),
        (1, 45, 'free', base + (1 << 36)),
    ], devices=2)
    # user_metadata: what _set_memory_metadata was when each block was
    # allocated (none, then 'forward', 'backward', then a value that CSV
    # must quote), annotate marks, and a pending free that keeps its
    # allocation's metadata while another stream uses it.
    S['metadata'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 1 * MiB, 'fwd'),                   # no metadata
        (0, 25, 'meta', 'forward'),
        (0, 30, 'alloc', base + 1 * MiB, 4 * MiB, 'fwd'),
        (0, 40, 'alloc', base + 5 * MiB, 1000, 'fwd'),            # rounded to 1024
        (0, 45, 'annotate', 'stage: backward'),
        (0, 50, 'meta', 'backward'),
        (0, 55, 'alloc', base + 6 * MiB, 6 * MiB, 'bwd'),
        (0, 60, 'free_req', base + 1 * MiB),                      # still forward's
        (0, 70, 'alloc', base + 12 * MiB, 2 * MiB, 'bwd'),        # the peak
        (0, 80, 'free_done', base + 1 * MiB),
        (0, 85, 'meta', 'optimizer, "step"'),
        (0, 90, 'free', base + 6 * MiB),
        (0, 95, 'alloc', base + 6 * MiB, 1 * MiB, 'opt'),
        (0, 100, 'annotate', 'stage: end'),
    ], metadata=True)
    # Blocks the allocator did not split: 19.5 MiB in a 20 MiB segment
    # (0.5 MiB would remain: the large pool splits only above 1 MiB), a
    # 9.5 MiB request on a 10 MiB rest, a small-pool block that fills its
    # segment's rest exactly, and one split off (512 KiB remain).
    sbase = 0x7d0000000000
    S['unsplit'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 19 * MiB + 512 * 1024, 'fwd'),      # block: 20 MiB
        (0, 30, 'seg', base + 20 * MiB, 20 * MiB),
        (0, 40, 'alloc', base + 20 * MiB, 10 * MiB, 'fwd'),
        (0, 50, 'alloc', base + 30 * MiB, 9 * MiB + 512 * 1024, 'bwd'),  # block: 10 MiB
        (0, 60, 'seg', sbase, 2 * MiB),
        (0, 70, 'alloc', sbase, 1 * MiB, 'opt'),                   # small pool, split
        (0, 80, 'alloc', sbase + 1 * MiB, 1 * MiB, 'opt'),          # fills the rest exactly
        (0, 90, 'free', base + 30 * MiB),                           # freed before the dump
        (0, 100, 'alloc', base + 30 * MiB, 4 * MiB, 'opt'),          # 6 MiB remain: split
    ])
    # Blocks older than the trace, freed in it: only their requests are in
    # the trace. The 19.5 MiB one in its 20 MiB segment is pinned (the
    # 0.5 MiB after it could not be a free large-pool block); the 4 MiB one
    # with 20 MiB free after it was split off, or was up to 1 MiB larger:
    # the figures are a range.
    S['older'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 19 * MiB + 512 * 1024, 'fwd'),      # block: 20 MiB
        (0, 30, 'seg', base + 20 * MiB, 40 * MiB),
        (0, 40, 'alloc', base + 20 * MiB, 4 * MiB, 'fwd'),          # split: 36 MiB remain
        (0, 50, 'alloc', base + 44 * MiB, 8 * MiB, 'bwd'),
        (0, 60, 'free', base),                                      # the trace keeps these 5
        (0, 70, 'free', base + 20 * MiB),
        (0, 80, 'alloc', base + 20 * MiB, 2 * MiB, 'opt'),
        (0, 90, 'free', base + 44 * MiB),
    ], keep=7)
    # roundup_power2_divisions: 4 steps between 2 and 4 MiB, 8 between 16
    # and 32 MiB; other sizes as usual.
    S['divisions'] = play([
        (0, 10, 'seg', base, 40 * MiB),
        (0, 20, 'alloc', base, 2 * MiB + 300 * 1024, 'fwd'),        # 2.5 MiB block
        (0, 30, 'alloc', base + 2560 * 1024, 17 * MiB, 'fwd'),      # 18 MiB block
        (0, 40, 'alloc', base + 20992 * 1024, 5 * MiB + 1000, 'bwd'),  # no divisions there: 512 B steps
    ], divisions={1: 4, 4: 8})
    # An older PyTorch: no time_us; times are entry indexes.
    S['no_time'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 4 * MiB, 'fwd'),
        (0, 30, 'alloc', base + 4 * MiB, 6 * MiB, 'bwd'),
        (0, 40, 'free', base),
        (0, 50, 'alloc', base + 10 * MiB, 1 * MiB, 'opt'),
    ], no_time=True)
    # external_annotations: a forward phase, then the optimizer's step,
    # which holds the peak, nested in a 'train' phase.
    S['phases'] = play([
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 4 * MiB, 'fwd'),
        (0, 30, 'alloc', base + 4 * MiB, 4 * MiB, 'fwd'),
        (0, 40, 'free', base + 4 * MiB),
        (0, 50, 'alloc', base + 8 * MiB, 8 * MiB, 'opt'),           # the peak, in the step
        (0, 60, 'free', base + 8 * MiB),
    ], annotations=[(0, 5, 'START', 'train'), (0, 15, 'START', 'forward'), (0, 35, 'END', 'forward'),
                    (0, 45, 'START', 'Optimizer.step#AdamW.step'), (0, 55, 'END', 'Optimizer.step#AdamW.step'),
                    (0, 65, 'END', 'train')])
    return S

# --- Attribution: which frame names an allocation (docs/torch.md) -----------
# Stacks as PyTorch records them with stacks="all": the unwinder's and the
# allocator's C++ frames innermost, then ATen, autograd and Python frames.
# Frame dicts are shared between stacks, as PyTorch shares them. The op
# each stack must get is written here by hand, per --user-code setting.

def cxx(name, filename='??'):
    return frame(filename, 0, name)


VEC = 'std::vector<at::Tensor, std::allocator<at::Tensor> >&&'
UNWIND = [
    cxx('torch::unwind::unwind()'),
    cxx('torch::CapturedTraceback::gather(bool, bool, bool)'),
    cxx('torch::cuda::(anonymous namespace)::gather_with_cpp()', 'memory_snapshot.cpp'),
    cxx('c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(int, unsigned long, CUstream_st*)',
        'CUDACachingAllocator.cpp'),
    cxx('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, int, unsigned long, '
        'CUstream_st*)', ''),
    cxx('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long) const', ''),
    cxx('at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, '
        'c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)', ''),
    cxx('at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)'),
]
NODE_CALL = cxx('torch::autograd::Node::operator()(%s)' % VEC, '')
ENGINE = [
    cxx('torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, '
        'torch::autograd::Node*, torch::autograd::InputBuffer&, '
        'std::shared_ptr<torch::autograd::ReadyQueue> const&)'),
    cxx('torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)'),
]
THREAD = [
    cxx('torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)'),
    cxx('torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> '
        'const&, bool)'),
    frame('/opt/conda/gcc/libstdc++-v3/src/c++11/thread.cc', 82, 'execute_native_thread_routine'),
    cxx('start_thread'), cxx('__clone3', ''),
]
_KERNELS = {}


def kernel(op, args='at::Tensor const&'):
    """The dispatcher's frames of one ATen operator, innermost first."""
    if op not in _KERNELS:
        _KERNELS[op] = [
            cxx('c10::impl::wrap_kernel_functor_unboxed_<%s>::call(c10::OperatorKernel*, c10::DispatchKeySet, %s)'
                % (op, args), 'RegisterCUDA.cpp'),
            cxx('at::_ops::%s::redispatch(c10::DispatchKeySet, %s)' % (op, args)),
            cxx('torch::autograd::VariableType::(anonymous namespace)::%s(c10::DispatchKeySet, %s)' % (op, args),
                'VariableType_0.cpp'),
            cxx('at::_ops::%s::call(%s)' % (op, args)),
        ]
    return _KERNELS[op]


def node(name):
    return cxx('torch::autograd::%s::apply(%s)' % (name, VEC))


VENV = '/venv/lib/python3.10/site-packages/'
EINSUM = [frame(VENV + 'einops/_backends.py', 291, 'einsum'), frame(VENV + 'einops/einops.py', 907, 'einsum')]
MODULE_CALL = frame(VENV + 'torch/nn/modules/module.py', 1747, '_call_impl')
LLAMA = frame(VENV + 'transformers/models/llama/modeling_llama.py', 216, 'forward')
HOOKS = frame(VENV + 'accelerate/hooks.py', 166, 'new_forward')
ATTR_STACKS = {
    # the autograd thread: only C++ frames, the node and its operator
    'bwd_node': UNWIND + kernel('neg') + [node('generated::SubBackward0'), NODE_CALL] + ENGINE + THREAD,
    # an operator the engine itself calls (no node): reducing a gradient
    'bwd_no_node': UNWIND + kernel('sum_dim_IntList') + [
        cxx('torch::autograd::InputMetadata::reduce_grad(at::Tensor&) const'),
        cxx('torch::autograd::validate_outputs(std::vector<torch::autograd::Edge> const&, '
            'std::vector<at::Tensor>&, std::function<std::string (std::string const&)> const&)')] + ENGINE + THREAD,
    # allocation primitives (empty_strided, new_empty_strided) and no other operator
    'bwd_accumulate': UNWIND + kernel('empty_strided') + kernel('new_empty_strided') + [
        cxx('torch::autograd::utils::clone_obey_contract(at::Tensor const&, at::Tensor const&)'),
        cxx('void torch::autograd::AccumulateGrad::accumulateGrad<std::function<void (at::Tensor&&)> >('
            'at::Tensor const&, at::Tensor&, at::Tensor const&, long, std::function<void (at::Tensor&&)> const&)'),
        node('AccumulateGrad'), NODE_CALL] + ENGINE + THREAD,
    # clone's empty_like (an allocation primitive): clone is the operator
    'bwd_view': UNWIND + kernel('empty_memory_format') + kernel('empty_like') + kernel('clone') +
    kernel('reshape') + [node('generated::ViewBackward0'), NODE_CALL] + ENGINE + THREAD,
    # a C++ custom Function: a template argument with '::' in it
    'bwd_cppnode': UNWIND + kernel('mm') + [node('CppNode<my_ext::Scale>'), NODE_CALL] + ENGINE + THREAD,
    # CPU autograd on the caller's thread: the user's loss.backward() line further out
    'bwd_caller': UNWIND + kernel('mm') + [
        node('generated::MmBackward0'), NODE_CALL, ENGINE[0],
        cxx('torch::autograd::Engine::execute(std::vector<torch::autograd::Edge> const&, '
            'std::vector<at::Tensor> const&, bool, bool, bool, std::vector<torch::autograd::Edge> const&)'),
        cxx('THPEngine_run_backward(_object*, _object*, _object*)'),
        frame(VENV + 'torch/autograd/graph.py', 768, '_engine_run_backward'),
        frame(VENV + 'torch/autograd/__init__.py', 289, 'backward'),
        frame(VENV + 'torch/_tensor.py', 581, 'backward'),
        frame('/home/u/train.py', 91, 'main'), frame('/home/u/train.py', 120, '<module>')],
    # a Python autograd.Function of the user's: its backward is the user's code
    'bwd_pyfunction': UNWIND + kernel('mul_Tensor') + [
        cxx('torch::autograd::THPVariable_mul(_object*, _object*, _object*)'),
        frame('/home/u/fn.py', 12, 'backward'),
        frame(VENV + 'torch/autograd/function.py', 306, 'apply'),
        node('PyNode'), NODE_CALL] + ENGINE + THREAD,
    # a library's autograd.Function: every Python frame is library code
    'bwd_pylibrary': UNWIND + kernel('empty_memory_format') + [
        cxx('torch::autograd::THPVariable_empty(_object*, _object*, _object*)'),
        frame(VENV + 'bitsandbytes/functional.py', 1349, 'dequantize_4bit'),
        frame(VENV + 'bitsandbytes/autograd/_functions.py', 540, 'backward'),
        frame(VENV + 'torch/autograd/function.py', 306, 'apply'),
        node('PyNode'), NODE_CALL] + ENGINE + THREAD,
    # a package's frames, then two different lines of the user's model
    'lib_user_39': UNWIND + kernel('bmm') + EINSUM + [
        frame('/home/u/model.py', 39, 'forward'), MODULE_CALL, frame('/home/u/train.py', 42, 'forward')],
    'lib_user_55': UNWIND + kernel('bmm') + EINSUM + [
        frame('/home/u/model.py', 55, 'attention'), MODULE_CALL, frame('/home/u/train.py', 42, 'forward')],
    # Debian's dist-packages
    'deb_user': [frame('/usr/lib/python3/dist-packages/einops/_backends.py', 291, 'einsum'),
                 frame('/home/u/model.py', 70, 'forward')],
    # only library code (and torch, the standard library, frozen code)
    'lib_only': [TORCH_ALLOC, LLAMA, MODULE_CALL, HOOKS, frame('/usr/lib/python3.10/runpy.py', 86, '_run_code'),
                 frame('<frozen runpy>', 198, '_run_module_as_main')],
    # C++ only, no autograd: the operator
    'fwd_cpp': UNWIND + kernel('mm') + [cxx('at::native::linear(at::Tensor const&, at::Tensor const&)'),
                                        cxx('start_thread')],
    # C++ only, no operator: the innermost frame that is not plumbing
    'cpp_plain': UNWIND + [cxx('at::cuda::getCUDABlasLtWorkspace()'),
                           cxx('std::_Function_handler<void ()>::_M_invoke(std::_Any_data const&)'),
                           cxx('start_thread')],
}
ATTR_DEFAULT = {
    'bwd_node': 'SubBackward0: aten::neg (backward)',
    'bwd_no_node': 'aten::sum_dim_IntList (backward)',
    'bwd_accumulate': 'AccumulateGrad: aten::new_empty_strided (backward)',
    'bwd_view': 'ViewBackward0: aten::clone (backward)',
    'bwd_cppnode': 'CppNode<my_ext::Scale>: aten::mm (backward)',
    'bwd_caller': 'MmBackward0: aten::mm (backward of /home/u/train.py:91 main)',
    'bwd_pyfunction': 'backward (/home/u/fn.py:12)',
    'bwd_pylibrary': 'dequantize_4bit (%sbitsandbytes/functional.py:1349)' % VENV,
    'lib_user_39': 'forward (/home/u/model.py:39)',
    'lib_user_55': 'attention (/home/u/model.py:55)',
    'deb_user': 'forward (/home/u/model.py:70)',
    'lib_only': 'forward (%stransformers/models/llama/modeling_llama.py:216)' % VENV,
    'fwd_cpp': 'aten::mm',
    'cpp_plain': 'at::cuda::getCUDABlasLtWorkspace() (??:0)',
}
EINSUM_OP = 'einsum (%seinops/_backends.py:291)' % VENV
ATTR_OPS = {  # --user-code LIST: what changes from the default
    '': {},
    'packages': {'lib_user_39': EINSUM_OP, 'lib_user_55': EINSUM_OP,
                 'deb_user': 'einsum (/usr/lib/python3/dist-packages/einops/_backends.py:291)'},
    'einops': {'lib_user_39': EINSUM_OP, 'lib_user_55': EINSUM_OP,
               'deb_user': 'einsum (/usr/lib/python3/dist-packages/einops/_backends.py:291)'},
    VENV + 'accelerate/': {'lib_only': 'new_forward (%saccelerate/hooks.py:166)' % VENV},
    # torch's own frames too: the caller of backward() is torch's innermost
    'torch,bitsandbytes': {
        'bwd_caller': 'MmBackward0: aten::mm (backward of %storch/autograd/graph.py:768 _engine_run_backward)' % VENV,
        'lib_only': '_alloc (/usr/lib/python3/dist-packages/torch/cuda/memory.py:120)'},
}


def attribution(out, expected):
    """attribution.pickle: a block per stack of ATTR_STACKS, all live at
    the end, and a failed allocation from the autograd thread; in
    expected['_attribution'], each block's address and op per --user-code
    setting (and with --all-frames: the innermost frame)."""
    STACKS.update(ATTR_STACKS)
    base, script, addrs = 0x7d0000000000, [], {}
    script.append((0, 10, 'seg', base, 64 * MiB))
    for i, key in enumerate(sorted(ATTR_STACKS)):
        addrs[key] = base + i * MiB
        script.append((0, 20 + i, 'alloc', addrs[key], MiB, key))
    script.append((0, 100, 'oom', 256 * MiB, 3 * MiB, 'bwd_node'))
    snap, exp = play(script)
    with open(os.path.join(out, 'attribution.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    expected['attribution'] = exp
    ops = {setting: dict(ATTR_DEFAULT, **changed) for setting, changed in ATTR_OPS.items()}
    innermost = {k: '%s (%s:%d)' % (st[0]['name'], st[0]['filename'], st[0]['line']) for k, st in ATTR_STACKS.items()}
    expected['_attribution'] = {'file': 'attribution.pickle', 'addresses': addrs, 'ops': ops,
                                'all_frames': innermost, 'oom': ATTR_DEFAULT['bwd_node']}


# -- Frame lines that are not lines -----------------------------------------
# Python 3.13 PyTorch writes 2**64-1 for a frame whose line it does not
# know; Python's pickle writes that as a 9-byte LONG1 by itself (2**70 too;
# -3 as a BININT). memprof reads such a line as unknown: the op is
# "name (file:?)". It counts such frames once per frame dict in the
# pickle (a dict the pickle refers back to through its memo is one: the
# shared `fwd` below; an equal dict of its own, `dup`, is another).

UNKNOWN_LINE = 2**64 - 1


def _user_frame(f):
    """torch_frames.c's rule, restated: the user's code."""
    fn = f['filename']
    if not fn or fn.startswith('<') or not fn.endswith('.py'):
        return False
    if fn.startswith('torch/') or '/torch/' in fn:
        return False
    lib = fn.find('/lib/python')
    return lib < 0 or '-packages/' in fn[lib:]


def _line_known(line):
    return isinstance(line, int) and 0 <= line < 2**63


def _op_text(frames):
    pick = next((f for f in frames if _user_frame(f)), frames[0])
    line = pick['line'] if _line_known(pick['line']) else '?'
    return '%s (%s:%s)' % (pick['name'], pick['filename'], line)


def unknown_line_fixtures(out, expected):
    """unknown_line.pickle (a snapshot whose frames carry such lines) and
    size_too_big.pickle (an entry whose size is 2**64: an error)."""
    fwd = frame('/home/u/model.py', UNKNOWN_LINE, 'forward')
    dup = frame('/home/u/model.py', UNKNOWN_LINE, 'forward')
    main_f = frame('/home/u/train.py', 90, 'main')
    STACKS['unk_fwd'] = [TORCH_ALLOC, fwd, main_f]
    STACKS['unk_bwd'] = [TORCH_ALLOC, frame('/home/u/model.py', 2**70, 'backward'), fwd]
    STACKS['unk_neg'] = [frame('/home/u/data.py', -3, 'load')]
    STACKS['unk_int'] = [frame('/usr/lib/python3/dist-packages/torch/_subclasses/fake_tensor.py', UNKNOWN_LINE,
                               'init_gpu_context'), TORCH_ALLOC]
    STACKS['unk_dup'] = [dup, main_f]
    base = 0x7f0000000000
    script = [
        (0, 10, 'seg', base, 20 * MiB),
        (0, 20, 'alloc', base, 1 * MiB, 'unk_fwd'),       # the first active block at dump time
        (0, 30, 'alloc', base + 1 * MiB, 2 * MiB, 'unk_bwd'),
        (0, 40, 'free', base + 1 * MiB),
        (0, 50, 'alloc', base + 3 * MiB, 512 * 1024, 'unk_neg'),
        (0, 60, 'alloc', base + 4 * MiB, 4096, 'unk_int'),
        (0, 70, 'alloc', base + 5 * MiB, 1 * MiB, 'unk_dup'),
        (0, 80, 'alloc', base + 6 * MiB, 1 * MiB, 'fwd'),
    ]
    snap, exp = play(script)
    with open(os.path.join(out, 'unknown_line.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    expected['unknown_line'] = exp
    # what the reader sees, in pickle order: the active blocks' frames,
    # then the trace entries'
    seen = [b['frames'] for s in snap['segments'] for b in s['blocks'] if b['state'] == 'active_allocated']
    seen += [e['frames'] for t in snap['device_traces'] for e in t]
    unknown = [f for fr in seen for f in fr if not _line_known(f['line'])]
    first = unknown[0]
    expected['_unknown_line'] = {
        'file': 'unknown_line.pickle',
        'alloc_ops': sorted({_op_text(STACKS[a[5]]) for a in script if a[2] == 'alloc'}),
        'unknown_lines': len({id(f) for f in unknown}),
        'example': '%s (%s): line %d' % (first['name'], first['filename'], first['line']),
    }
    # an allocation's size that no 64 bits hold: an error naming the field,
    # at the APPEND that hands the entry over (the first after the integer)
    bad = {'segments': [], 'device_traces': [[{'action': 'alloc', 'addr': base, 'size': 2**64, 'stream': 7,
                                               'time_us': 10, 'frames': []}]]}
    data = pickle.dumps(bad, protocol=4)
    import pickletools
    ops = list(pickletools.genops(data))
    big = next(pos for op, arg, pos in ops if op.name == 'LONG1' and arg == 2**64)
    at = next(pos for op, arg, pos in ops if op.name in ('APPEND', 'APPENDS') and pos > big)
    with open(os.path.join(out, 'size_too_big.pickle'), 'wb') as f:
        f.write(data)
    expected['_errors']['size_too_big.pickle'] = {
        'code': 'MP_EFORMAT', 'offset': at,
        'says': "device 0, trace entry 0: field 'size' does not fit in 64 bits"}


# -- Call trees (memprof report --tree) --------------------------------------
# calltree.pickle: blocks from stacks that share their outer frames, with
# the unwinder's and the caching allocator's frames innermost (dropped by
# the tree) and one stack of only those (kept whole). The trees -- live at
# the peak, at the end, allocated -- are computed here from the script:
# per node, from the outermost frame in, its bytes and blocks, inclusive
# and exclusive. A node is "name\tfile\tline\tkind"; a path joins them
# with "\n".

TREE_DROPPED = ('torch::unwind::', 'torch::CapturedTraceback::', 'torch::cuda::(anonymous namespace)::gather',
                'c10::cuda::CUDACachingAllocator::', 'operator new')


def _tree_frames(frames):
    """A stack as the tree sees it: outermost first, without its innermost
    unwinder and allocator frames (all kept when all are)."""
    keep = 0
    while keep < len(frames) and frames[keep]['name'].startswith(TREE_DROPPED):
        keep += 1
    if keep == len(frames):
        keep = 0
    out = []
    for f in reversed(frames[keep:]):
        fn = f['filename']
        kind = 'python' if fn.endswith('.py') or fn.startswith('<') else 'native'
        out.append('%s\t%s\t%d\t%s' % (f['name'], '' if fn == '??' else fn, max(f['line'], 0), kind))
    return out


def _tree(blocks):
    """{path: [total bytes, self bytes, total blocks, self blocks]} of
    blocks [(bytes, stack key)]; the root's path is ''."""
    nodes = {'': [0, 0, 0, 0]}
    for size, key in blocks:
        path = _tree_frames(STACKS[key]) if key else ['(no stack)\t\t0\tunknown']
        nodes[''][0] += size
        nodes[''][2] += 1
        for i in range(len(path)):
            n = nodes.setdefault('\n'.join(path[:i + 1]), [0, 0, 0, 0])
            n[0] += size
            n[2] += 1
        n[1] += size
        n[3] += 1
    return nodes


def calltree(out, expected):
    UNW = UNWIND[:6]  # the unwinder's and the caching allocator's frames
    main_f = frame('/home/u/train.py', 90, 'main')
    STACKS.update({
        'tr_mm': UNW + kernel('mm') + [frame('/home/u/model.py', 39, 'forward'), main_f],
        'tr_add': UNW + kernel('add') + [frame('/home/u/model.py', 39, 'forward'), main_f],
        'tr_py': [frame('/home/u/model.py', 40, 'forward'), main_f],
        'tr_step': [TORCH_ALLOC, frame('/home/u/optim.py', 5, 'step'), frame('/home/u/train.py', 95, 'main')],
        'tr_unwind': UNW,
    })
    base = 0x7c0000000000
    script = [
        (0, 10, 'seg', base, 64 * MiB),
        (0, 20, 'alloc', base, 4 * MiB, 'tr_mm'),
        (0, 30, 'alloc', base + 4 * MiB, 2 * MiB, 'tr_add'),
        (0, 40, 'alloc', base + 6 * MiB, 1000, 'tr_py'),      # a 1024-byte block
        (0, 50, 'alloc', base + 7 * MiB, 8 * MiB, 'tr_mm'),
        (0, 60, 'alloc', base + 15 * MiB, 3 * MiB, 'tr_step'),
        (0, 70, 'alloc', base + 18 * MiB, 512, 'tr_unwind'),  # the peak
        (0, 80, 'free', base + 7 * MiB),
        (0, 90, 'free', base + 4 * MiB),
        (0, 100, 'alloc', base + 20 * MiB, 1 * MiB, 'tr_add'),
        (0, 110, 'free', base + 15 * MiB),
    ]
    snap, exp = play(script)
    with open(os.path.join(out, 'calltree.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    expected['calltree'] = exp
    # the model again, for the live blocks and their stacks
    dev, allocated, heap, peak, at_peak = Device(), [], 0, -1, []
    for _, _, op, *args in script:
        if op == 'seg':
            dev.regions[args[0]] = args[1]
        elif op == 'alloc':
            addr, req, key = args
            dev.blocks[addr] = (dev.block_size(addr, req), req, key, '')
            allocated.append((dev.blocks[addr][0], key))
        else:
            dev.blocks.pop(args[0])
        heap = sum(b[0] for b in dev.blocks.values())
        if heap > peak:
            peak, at_peak = heap, [(b[0], b[2]) for b in dev.blocks.values()]
    end = [(b[0], b[2]) for b in dev.blocks.values()]
    addrs = {k: a for _, _, op, *args in script if op == 'alloc' for a, _, k in [args]}
    # a snapshot without frames (recorded with context=None): no call tree
    snap, _ = play([(0, 10, 'seg', base, 2 * MiB), (0, 20, 'alloc', base, 4096, None), (0, 30, 'free', base)])
    with open(os.path.join(out, 'noframes.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    expected['_calltree'] = {
        'file': 'calltree.pickle', 'peak_bytes': peak,
        'trees': {'peak': _tree(at_peak), 'leaks': _tree(end), 'allocated': _tree(allocated)},
        # an allocation's frames as the source gives them, innermost first
        'frames': {str(addrs[k]): [[f['name'], '' if f['filename'] == '??' else f['filename'], max(f['line'], 0),
                                    'python' if f['filename'].endswith('.py') else 'native'] for f in STACKS[k]]
                   for k in ('tr_mm', 'tr_py')},
    }


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    expected = {}
    for name, (snap, exp) in scenarios().items():
        with open(os.path.join(out, name + '.pickle'), 'wb') as f:
            pickle.dump(snap, f, protocol=4)  # _dump_snapshot's default
        expected[name] = exp
    # the same snapshot in protocols 2 and 5, and gzip-compressed
    snap, _ = scenarios()['ring']
    for proto in (2, 5):
        with open(os.path.join(out, 'ring.p%d.pickle' % proto), 'wb') as f:
            pickle.dump(snap, f, protocol=proto)
    with open(os.path.join(out, 'ring.pickle.gz'), 'wb') as f:
        f.write(gzip.compress(pickle.dumps(snap, protocol=4)))
    # a dump that the trace does not end at: one live block 1 MiB larger
    # in the dump than the trace made it (the dump check must say so)
    snap, _ = scenarios()['blocks']
    live = [b for b in snap['segments'][0]['blocks'] if b['state'] == 'active_allocated']
    live[0]['size'] += MiB
    with open(os.path.join(out, 'broken_dump.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    expected['_broken_dump'] = {'address': live[0]['address'], 'replayed': live[0]['size'] - MiB,
                                'dump': live[0]['size'],
                                'allocated_replayed': sum(b['size'] for b in live) - MiB,
                                'allocated_dump': sum(b['size'] for b in live)}
    # a pickle that would import and call: GLOBAL at offset 2
    with open(os.path.join(out, 'global.pickle'), 'wb') as f:
        f.write(b'\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.')
    # a snapshot cut in the middle of a string: the opcode there fails
    data = pickle.dumps(scenarios()['blocks'][0], protocol=4)
    import pickletools
    cut = None
    for op, arg, pos in pickletools.genops(data):
        if op.name == 'SHORT_BINUNICODE' and pos > len(data) // 2:
            cut = pos + 3  # inside its bytes
            break
    with open(os.path.join(out, 'truncated.pickle'), 'wb') as f:
        f.write(data[:cut])
    expected['_errors'] = {
        'global.pickle': {'code': 'MP_EFORMAT', 'offset': 2, 'says': 'GLOBAL'},
        'truncated.pickle': {'code': 'MP_ETRUNCATED', 'offset': cut - 3, 'says': 'truncated'},
    }
    unknown_line_fixtures(out, expected)
    attribution(out, expected)
    calltree(out, expected)
    with open(os.path.join(out, 'expected.json'), 'w') as f:
        json.dump(expected, f, indent=1)


if __name__ == '__main__':
    main()
