#!/usr/bin/env bash
# Usage: scripts/gpu-check.sh [OUT_DIR]
#
# Checks tafl-lab on a machine with a CUDA GPU, in a few minutes: the search benchmark on
# cuda with the same benchmark on cpu beside it, two training generations of the smoke run
# config with device = "cuda", and a 10-game match of that model on cuda (az, 32 sims)
# against MCTS (100 sims). Exits at once with one line when there is no CUDA device.
# Needs a release build with LibTorch (source scripts/env.sh; cargo build --release);
# TAFL_LAB_BIN overrides the binary. The run and a log go to OUT_DIR (default: a new
# temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${TAFL_LAB_BIN:-target/release/tafl-lab}"
out="${1:-$(mktemp -d "${TMPDIR:-/tmp}/tafl-lab-gpu.XXXXXX")}"

[[ -x $bin ]] || { echo "gpu-check: no $bin (cargo build --release first, or set TAFL_LAB_BIN)" >&2; exit 1; }
command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1 ||
  { echo "gpu-check: no CUDA GPU here (nvidia-smi missing or sees none); nothing checked" >&2; exit 1; }
"$bin" doctor | grep -q '^devices:.*cuda' ||
  { echo "gpu-check: nvidia-smi sees a GPU but tafl-lab's LibTorch does not ('$bin doctor': $("$bin" doctor 2>&1 | grep '^devices:' || echo no devices line))" >&2; exit 1; }
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1
nvidia-smi -L
"$bin" doctor

echo "== bench search --device cuda"
"$bin" bench search --device cuda --seconds 3
echo "== bench search --device cpu (the same, for comparison)"
"$bin" bench search --device cpu --seconds 3

echo "== train: 2 generations of configs/runs/smoke.toml on cuda"
sed 's/^device = .*/device = "cuda"/' configs/runs/smoke.toml > "$out/smoke-cuda.toml"
grep -q '^device = "cuda"' "$out/smoke-cuda.toml"
"$bin" train --config "$out/smoke-cuda.toml" --run-dir "$out/run" --generations 2 --quiet

echo "== match: 10 games, the trained model on cuda against mcts"
"$bin" match --variant brandubh --a "az:model=$out/run,sims=32" --b mcts:sims=100 --games 10 --device cuda --quiet

echo "gpu-check: done; log and run in $out"
