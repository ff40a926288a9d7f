#!/usr/bin/env python3
"""Converts a tafl-lab export (model.pt) to ONNX and checks it.

Usage: scripts/export-onnx.py EXPORT_DIR [--out model.onnx]

Run it with the project's Python (the virtualenv of scripts/env.sh, which holds PyTorch):
    source scripts/env.sh && python scripts/export-onnx.py exports/brandubh

It needs `numpy`, `onnx` and `onnxruntime` (scripts/env.sh installs them, pinned, beside
torch; the script never installs packages itself), loads the traced
TorchScript model, exports ONNX with input `planes` [batch, C, N, N] and two named outputs,
`policy` [batch, P] (logits) and `wdl` [batch, 3] (logits), split inside the graph, with a
dynamic batch axis. Then it checks both the TorchScript and the ONNX outputs against the
fixture outputs tafl-lab saved (fixtures.safetensors): the largest absolute difference must
be at most 1e-4. Exit status 0 when every check passes, 1 otherwise.
"""
import argparse
import importlib
import json
import os
import sys
import warnings

from safetensors_read import read_raw  # scripts/, beside this file

TOLERANCE = 1e-4


def require(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SystemExit(f"error: Python package `{module}` is missing; run `source scripts/env.sh` to install the pinned set")


def read_safetensors(path, torch):
    """F32 tensors only: name -> tensor."""
    out = {}
    for name, (dtype, shape, raw) in read_raw(path).items():
        if dtype != "F32":
            raise SystemExit(f"{path}: tensor {name} is {dtype}, expected F32")
        out[name] = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("export_dir")
    ap.add_argument("--out", default=None, help="ONNX file (default: EXPORT_DIR/model.onnx)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # the legacy exporter's deprecation notices
    # numpy first: torch enables its numpy bridge only if numpy imports when torch does.
    require("numpy")
    import torch

    onnx = require("onnx")
    ort = require("onnxruntime")
    d = args.export_dir
    meta = json.load(open(os.path.join(d, "model.json")))
    p = meta["output"]["policy"]["length"]
    fixtures = read_safetensors(os.path.join(d, "fixtures.safetensors"), torch)
    x, expected = fixtures["input"], fixtures["output"]

    scripted = torch.jit.load(os.path.join(d, "model.pt"), map_location="cpu").eval()
    with torch.no_grad():
        got = scripted(x)
    ts_diff = (got - expected).abs().max().item()
    print(f"TorchScript vs tafl-lab: max |diff| = {ts_diff:.3g}")

    out = args.out or os.path.join(d, "model.onnx")
    tmp = out + ".tmp"
    # Export the traced module as it is (one output), then split that output into the two
    # named outputs with Slice nodes inside the graph.
    torch.onnx.export(
        scripted,
        (x,),
        tmp,
        dynamo=False,
        input_names=["planes"],
        output_names=["output"],
        dynamic_axes={"planes": {0: "batch"}, "output": {0: "batch"}},
        opset_version=17,
    )
    model = onnx.load(tmp)
    graph = model.graph
    from onnx import TensorProto, helper

    def const(name, values):
        graph.initializer.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))

    const("split_policy_start", [0])
    const("split_policy_end", [p])
    const("split_wdl_start", [p])
    const("split_wdl_end", [p + 3])
    const("split_axis", [1])
    graph.node.append(helper.make_node("Slice", ["output", "split_policy_start", "split_policy_end", "split_axis"], ["policy"]))
    graph.node.append(helper.make_node("Slice", ["output", "split_wdl_start", "split_wdl_end", "split_axis"], ["wdl"]))
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("policy", TensorProto.FLOAT, ["batch", p]))
    graph.output.append(helper.make_tensor_value_info("wdl", TensorProto.FLOAT, ["batch", 3]))
    onnx.save(model, tmp)
    onnx.checker.check_model(onnx.load(tmp))
    os.replace(tmp, out)

    sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    if names != ["policy", "wdl"]:
        print(f"error: ONNX outputs are {names}, expected ['policy', 'wdl']")
        return 1
    policy, wdl = sess.run(None, {"planes": x.numpy()})
    onnx_out = torch.cat([torch.from_numpy(policy), torch.from_numpy(wdl)], dim=1)
    onnx_diff = (onnx_out - expected).abs().max().item()
    print(f"ONNX ({os.path.basename(out)}) vs tafl-lab: max |diff| = {onnx_diff:.3g}; policy {list(policy.shape)}, wdl {list(wdl.shape)}")
    # The batch axis is dynamic: one position alone gives the same numbers.
    single = sess.run(None, {"planes": x[:1].numpy()})
    single_diff = max(abs(single[0] - policy[:1]).max(), abs(single[1] - wdl[:1]).max())
    print(f"ONNX batch of 1 vs batch of {x.shape[0]}: max |diff| = {single_diff:.3g}")
    ok = ts_diff <= TOLERANCE and onnx_diff <= TOLERANCE and single_diff <= TOLERANCE
    print("all checks passed" if ok else f"FAILED: a difference exceeds {TOLERANCE}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
