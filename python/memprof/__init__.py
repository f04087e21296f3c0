"""memprof: mark the ops and steps of a Python program for the memprof
memory profiler (docs/install.md).

    import memprof

    for i, batch in enumerate(loader):
        memprof.step(i)
        with memprof.op("attention", region="temp", dtype="float32", shape=(8, 2048)):
            scores = q @ k.T
        memprof.mark("checkpoint saved")

    @memprof.op("optimizer")          # the same scope, as a decorator
    def update(params): ...

Under `memprof record -- python3 train.py` every host allocation the
program's thread makes inside a scope carries its op, region, dtype and
shape, and steps split the capture, so `memprof report` groups what was
live at the peak by these ops (with PYTHONMALLOC=malloc, every Python object;
with CPython's default allocator, blocks above 512 bytes: tensors' and
arrays' buffers). With MEMPROF_OUTPUT=FILE and no `memprof record`, they go
through libmemprof.so to FILE, where a C extension that reports its own
allocator through <memprof/annotate.h> records too.

Otherwise -- memprof not installed, not recording -- the module loads
nothing (not even ctypes: importing it costs what importing os does, the
environment says there is nothing to find) and every call does nothing:
`op()` returns one shared object whose `with` does nothing, and as a
decorator it returns the function itself, so an instrumented program runs
as it would without it.

Pure Python over ctypes; the C API it calls is <memprof/annotate.h>.
Scopes are per thread (the calling OS thread), as in C: push and pop on
the same thread; a coroutine that awaits inside a scope leaves it open for
whatever else runs on that thread meanwhile.
"""

import os

__all__ = ["enabled", "flush", "mark", "op", "step", "REGIONS"]

# The region types of <memprof/annotate.h> (memprof_region_t). None keeps
# the enclosing scope's region.
REGIONS = {None: -1, "unknown": 0, "persist": 1, "dynamic": 2, "output": 3, "temp": 4, "stack": 5}

_SONAME = "libmemprof.so.0"


def _library_beside():
    """libmemprof.so.0 where this copy of the module was put with it: the
    build tree's copy and an install write _location.py (a path relative
    to this directory, or absolute). The source tree has none."""
    try:
        from . import _location  # noqa: written by CMake, not in the source tree
    except ImportError:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _location.LIBRARY))


def _may_record():
    """False when nothing can be recording this process, told from the
    environment alone: `memprof record` sets MEMPROF_OUTPUT (and keeps it
    when the preload takes itself out of LD_PRELOAD), a preload loaded by
    hand is named in LD_PRELOAD, libmemprof.so records only to
    MEMPROF_OUTPUT."""
    return bool(os.environ.get("MEMPROF_OUTPUT")) or "memprof" in os.environ.get("LD_PRELOAD", "")


def _find():
    """The C functions to call, or None when nothing records this process.

    1. `memprof record`'s preload library is in the process: its memprof_*
       are in the global scope (the preload alone exports
       memprof_api_table_v1), and they record into its capture.
    2. MEMPROF_OUTPUT is set (by hand, not by `memprof record`):
       libmemprof.so records there: $MEMPROF_LIBRARY, else the one
       installed with this module, else the loader's libmemprof.so.0. (A
       copy an extension module already loaded is the same file: the
       loader hands back that instance, whose capture is then shared.)
    3. Neither: nothing to load."""
    import ctypes

    try:
        process = ctypes.CDLL(None)
        if hasattr(process, "memprof_api_table_v1"):
            return process
    except OSError:
        pass
    if not os.environ.get("MEMPROF_OUTPUT") or os.environ.get("MEMPROF_OUTPUT_PID"):
        # MEMPROF_OUTPUT_PID: `memprof record` set these variables, and
        # this process runs without its preload (--no-children): untraced
        return None
    for name in (os.environ.get("MEMPROF_LIBRARY"), _library_beside(), _SONAME):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.memprof_enabled.restype = ctypes.c_int
        lib.memprof_enabled.argtypes = []
        if lib.memprof_enabled():
            return lib
        return None  # it could not open MEMPROF_OUTPUT, and said why on stderr
    return None


def _bind(lib):
    """ctypes signatures of the calls used (<memprof/annotate.h>)."""
    import ctypes

    sig = {
        "memprof_enabled": (ctypes.c_int, []),
        "memprof_step": (None, [ctypes.c_int64]),
        "memprof_mark": (None, [ctypes.c_char_p]),
        "memprof_push": (None, [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]),
        "memprof_pop": (None, []),
        "memprof_flush": (None, []),
    }
    out = {}
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
        out[name] = fn
    return out


def _text(value):
    """A C string (UTF-8) for a name, a dtype (anything whose str() names
    it: numpy's and torch's dtypes), or None."""
    if value is None:
        return None
    return str(value).encode("utf-8")


def _shape_text(shape):
    """(8, 2048) -> b"[8,2048]", as the C examples write shapes; a string
    is kept as given."""
    if shape is None:
        return None
    if isinstance(shape, (str, bytes)):
        return shape.encode("utf-8") if isinstance(shape, str) else shape
    return ("[" + ",".join(str(int(d)) for d in shape) + "]").encode("utf-8")


def _region_code(region):
    try:
        return REGIONS[region]
    except (KeyError, TypeError):
        raise ValueError("memprof: region must be one of %s, not %r"
                         % (", ".join(repr(r) for r in REGIONS if r), region)) from None


class _NoOp:
    """What op() returns when nothing records: one shared object."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        return func


_NOOP = _NoOp()
_lib = _find() if _may_record() else None
_calls = _bind(_lib) if _lib is not None else None

if _calls is None:

    def enabled():
        """True when a capture is being written (then scopes and steps
        are recorded)."""
        return False

    def step(n):
        """A step (iteration) begins: n, an int; steps are program-wide."""

    def mark(label):
        """A labelled instant ("checkpoint saved")."""

    def flush():
        """Write what was recorded so far to disk now."""

    def op(name, region=None, dtype=None, shape=None):
        """A scope for `with` or a decorator: the thread's allocations made
        inside carry this op name, region type (one of REGIONS), dtype and
        shape; None keeps the enclosing scope's value."""
        _region_code(region)  # the same errors whether recording or not
        return _NOOP

else:
    import functools

    _enabled = _calls["memprof_enabled"]
    _step = _calls["memprof_step"]
    _mark = _calls["memprof_mark"]
    _push = _calls["memprof_push"]
    _pop = _calls["memprof_pop"]
    _flush = _calls["memprof_flush"]

    class _Op:
        """A scope: entered by `with` (re-entrant: the stack is in C) or
        around each call of a decorated function."""

        __slots__ = ("_args",)

        def __init__(self, name, region, dtype, shape):
            self._args = (_text(name), _region_code(region), _text(dtype), _shape_text(shape))

        def __enter__(self):
            _push(*self._args)
            return self

        def __exit__(self, *exc):
            _pop()
            return False

        def __call__(self, func):
            args = self._args

            @functools.wraps(func)
            def scoped(*a, **kw):
                _push(*args)
                try:
                    return func(*a, **kw)
                finally:
                    _pop()

            return scoped

    def enabled():
        """True when a capture is being written (then scopes and steps
        are recorded)."""
        return bool(_enabled())

    def step(n):
        """A step (iteration) begins: n, an int; steps are program-wide."""
        _step(int(n))

    def mark(label):
        """A labelled instant ("checkpoint saved")."""
        _mark(_text(label))

    def flush():
        """Write what was recorded so far to disk now."""
        _flush()

    def op(name, region=None, dtype=None, shape=None):
        """A scope for `with` or a decorator: the thread's allocations made
        inside carry this op name, region type (one of REGIONS), dtype and
        shape; None keeps the enclosing scope's value."""
        return _Op(name, region, dtype, shape)
