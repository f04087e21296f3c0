"""A PyTorch program with known CUDA memory, for checking memprof on a real GPU.

Run on a machine with a GPU, plain and under `memprof record --gpu`
(scripts/gpu_check.sh does both). It prints, as one JSON line on stdout,
PyTorch's own figures (torch.cuda.memory_stats) so that memprof's figures
can be compared with what the framework itself counts, and writes its
allocator's snapshot (torch.cuda.memory._snapshot, with Python frames) to
argv[1] when given.

Sites (MiB, uint8 tensors, so the sizes are exact multiples of the
caching allocator's 2 MiB rounding for large blocks):
  weights   256          alive to the end
  acts      10 x 3       half of them freed
  temp      100          alive at the peak, then freed
  oom       a request far beyond the card: caught, recorded as a failure
"""
import json
import pickle
import sys

import torch

MiB = 1 << 20


def weights(dev):
    return torch.empty(256 * MiB, dtype=torch.uint8, device=dev)


def activations(dev):
    acts = [torch.empty(3 * MiB, dtype=torch.uint8, device=dev) for _ in range(10)]
    del acts[::2]
    return acts


def temporary(dev):
    temp = torch.empty(100 * MiB, dtype=torch.uint8, device=dev)
    torch.cuda.synchronize()
    return int(temp.numel())


def too_much(dev):
    try:
        torch.empty(1 << 50, dtype=torch.uint8, device=dev)  # 1 PiB
    except torch.OutOfMemoryError:
        return 1
    return 0


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    if out:
        torch.cuda.memory._record_memory_history(max_entries=100000)
    dev = torch.device("cuda")
    w = weights(dev)
    acts = activations(dev)
    temporary(dev)
    a = torch.ones(1024, 1024, device=dev)
    b = a @ a
    torch.cuda.synchronize()
    oom = too_much(dev)
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    figures = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "allocator": torch.cuda.get_allocator_backend(),
        "max_allocated": stats.get("allocated_bytes.all.peak"),
        "max_reserved": stats.get("reserved_bytes.all.peak"),
        "allocated": stats.get("allocated_bytes.all.current"),
        "reserved": stats.get("reserved_bytes.all.current"),
        "num_ooms": stats.get("num_ooms"),
        "num_alloc_retries": stats.get("num_alloc_retries"),
        "segments": stats.get("segment.all.current"),
        "oom_caught": oom,
        "live_tensors_bytes": w.numel() + sum(x.numel() for x in acts) + 4 * (a.numel() + b.numel()),
    }
    if out:
        with open(out, "wb") as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
        torch.cuda.memory._record_memory_history(enabled=None)
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
