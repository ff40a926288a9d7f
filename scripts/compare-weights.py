#!/usr/bin/env python3
"""How far a training step moved each tensor of a model: compare two .safetensors files.

    scripts/compare-weights.py BEFORE.safetensors AFTER.safetensors [--all]

Prints, for each trained tensor present in both files, the relative change
||after - before|| / ||before||, largest first (the first 20 unless --all); then, for the
batch norms' running statistics, how far the means moved in units of the old standard
deviation and the ratio of the variances. Why: a match says that a checkpoint got weaker, not
which part of the network moved; Copenhagen run 6's first 25 SGD steps moved the value head's
batch-norm shift by 77% and the policy head by under 1% (docs/results/attack-copenhagen-selfplay.md).

Reads the files with scripts/safetensors_read.py, so it needs only numpy: the LibTorch venv
that scripts/env.sh makes has it.
"""
import signal
import sys

import numpy as np

from safetensors_read import read_raw  # scripts/, beside this file

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16}


def load(path):
    try:
        tensors = read_raw(path)
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    except ValueError as e:
        sys.exit(f"{path}: {e}")
    out = {}
    for name, (dtype, shape, raw) in tensors.items():
        if dtype == "BF16":
            # bfloat16 is the top half of a float32.
            a = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dtype in DTYPES:
            a = np.frombuffer(raw, dtype=DTYPES[dtype])
        else:
            continue  # integer counters (num_batches_tracked)
        out[name] = a.astype(np.float64).reshape(shape)
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or any(a not in ("--all",) for a in argv if a.startswith("--")):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    before, after = load(args[0]), load(args[1])
    common = sorted(set(before) & set(after))
    moved = []
    for name in common:
        b, a = before[name], after[name]
        if b.shape != a.shape:
            sys.exit(f"{name}: shape {list(b.shape)} in {args[0]}, {list(a.shape)} in {args[1]}: not the same network")
        if "running_" not in name:
            moved.append((np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12), name))
    moved.sort(reverse=True)
    shown = moved if "--all" in argv else moved[:20]
    print(f"relative change of trained tensors ({len(shown)} of {len(moved)}, largest first)")
    for r, name in shown:
        print(f"  {name:<40} {r:8.4f}")
    print("batch-norm running statistics: mean shift / old sd (median, max); variance ratio (min, max)")
    for name in common:
        if name.endswith("running_mean"):
            var = name[: -len("mean")] + "var"
            if var not in before:
                continue
            sd = np.sqrt(before[var])
            shift = np.abs(after[name] - before[name]) / np.maximum(sd, 1e-12)
            ratio = after[var] / np.maximum(before[var], 1e-12)
            print(f"  {name[: -len('.running_mean')]:<40} {np.median(shift):6.3f} {shift.max():6.3f}   {ratio.min():6.3f} {ratio.max():6.3f}")
    only = sorted(set(before) ^ set(after))
    if only:
        print(f"in one file only: {', '.join(only)}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    main(sys.argv[1:])
