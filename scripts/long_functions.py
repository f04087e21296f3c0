#!/usr/bin/env python3
"""long_functions.py DIR... - C functions longer than LIMIT lines (env,
default 120) under the given folders, longest first, src/cli left out (its
commands are wired by their own rules): "lines  name  file".

A definition is found as house style writes it: a line '{' at column 0,
its signature the lines above it back to one at column 0, its end the
next '}' at column 0. Issue 42: split a function where it does several
jobs, keep a hot loop whole where a measurement says so; this lists what
to look at, it is not a rule."""
import sys, os, re
lim = int(os.environ.get("LIMIT", "120"))
rows = []
for root in sys.argv[1:]:
    for dp, dn, fn in os.walk(root):
        for f in fn:
            if not f.endswith(".c"): continue
            p = os.path.join(dp, f)
            if p.startswith("src/cli/"): continue
            L = open(p, errors="replace").read().split("\n")
            i = 0
            while i < len(L):
                if L[i] == "{" and i > 0:
                    # signature: walk back to the line that starts at column 0 with an identifier
                    j = i - 1
                    while j > 0 and (L[j].startswith((" ", "\t")) ):
                        j -= 1
                    sig = " ".join(x.strip() for x in L[j:i])
                    sig = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", sig)
                    m = re.search(r"(\w+)\s*\(", sig)
                    k = i + 1
                    while k < len(L) and L[k] != "}": k += 1
                    n = k - j + 1
                    if m and n > lim: rows.append((n, p, m.group(1)))
                    i = k
                i += 1
for n, p, name in sorted(rows, reverse=True):
    print(f"{n:4d}  {name}  {p}")
