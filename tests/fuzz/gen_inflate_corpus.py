#!/usr/bin/env python3
"""gen_inflate_corpus.py - writes the seed corpora of fuzz_inflate
(tests/fuzz/corpus/inflate: 3 selector bytes + a raw deflate stream) and
fuzz_inflate_rt (tests/fuzz/corpus/inflate_rt: 3 selector bytes + data to
compress). Deterministic; run from the repository root."""
import os
import random
import zlib

rng = random.Random(7)


def shapes():
    words = [b"alloc ", b"free ", b"region ", b"step ", b"\n", b"f32[1024,512] "]
    text = b"".join(rng.choice(words) for _ in range(300))[:1500]
    varint = bytearray()
    while len(varint) < 1500:
        v = rng.randrange(24) if rng.random() < 0.9 else rng.randrange(5000)
        while True:
            varint.append((v & 127) | (128 if v > 127 else 0))
            v >>= 7
            if not v:
                break
    runs = bytearray()
    while len(runs) < 1500:
        pat = bytes(rng.randrange(256) for _ in range(1 + rng.randrange(3)))
        runs += (pat * 300)[: 3 + rng.randrange(400)]
    rand = bytes(rng.randrange(256) for _ in range(600))
    return {"text": text, "varint": bytes(varint[:1500]), "runs": bytes(runs[:1500]), "random": rand, "empty": b""}


def raw_deflate(data, level, strategy):
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
    return c.compress(data) + c.flush()


def main():
    d1 = "tests/fuzz/corpus/inflate"
    d2 = "tests/fuzz/corpus/inflate_rt"
    os.makedirs(d1, exist_ok=True)
    os.makedirs(d2, exist_ok=True)
    strategies = {"default": zlib.Z_DEFAULT_STRATEGY, "huffman": zlib.Z_HUFFMAN_ONLY, "rle": zlib.Z_RLE,
                  "fixed": zlib.Z_FIXED}
    for name, data in shapes().items():
        for level in (0, 1, 6, 9):
            for sname, strategy in strategies.items():
                if level != 6 and sname != "default":
                    continue
                with open(f"{d1}/{name}-l{level}-{sname}", "wb") as f:
                    f.write(b"\0\0\0" + raw_deflate(data, level, strategy))
        for sel in (0, 6, 10):  # zlib level 0, 6, deflate_huff
            with open(f"{d2}/{name}-{sel}", "wb") as f:
                f.write(bytes([sel, 2, 5]) + data)
    # Hand-made: a stored block, and one with a wrong complement.
    with open(f"{d1}/stored", "wb") as f:
        f.write(b"\0\0\0\x01\x05\x00\xfa\xffhello")
    with open(f"{d1}/stored-bad-nlen", "wb") as f:
        f.write(b"\0\0\0\x01\x05\x00\xfa\xfehello")


main()
