"""python_dir.py PREFIX - where `cmake --install` puts the memprof Python
module under PREFIX (cmake/install.cmake): prints "DIR;SEEN", DIR relative
to PREFIX, SEEN 1 when this python3 reads DIR (it is on sys.path) else 0."""
import os
import sys
import sysconfig

prefix = os.path.realpath(sys.argv[1])
for entry in sys.path:
    path = os.path.realpath(entry) if entry else ""
    if path.startswith(prefix + os.sep) and path.endswith("-packages"):
        print(os.path.relpath(path, prefix) + ";1")
        break
else:
    purelib = sysconfig.get_path("purelib", "posix_prefix", {"base": prefix, "platbase": prefix})
    print(os.path.relpath(purelib, prefix) + ";0")
