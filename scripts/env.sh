# Sourced by the other scripts: makes sure LibTorch (torch==2.13.0 from PyPI, the version tch
# 0.26 needs) and the Python packages the scripts and tests use (numpy, onnx, onnxruntime, all
# pinned) are installed in a virtualenv outside the clone, then exports what the build needs.
# Nothing installs packages at run time: a script that imports torch before numpy is installed
# runs with torch's numpy bridge off ("Numpy is not available").
# The virtualenv is reused when healthy (every pinned version imports) and repaired when not:
# missing or wrong packages are reinstalled; a venv whose torch is broken is rebuilt.
# Override its place with TAFL_LAB_VENV.
set -euo pipefail
TORCH_VERSION=2.13.0
# Versions checked together with torch 2.13.0 on CPython 3.11 (export-onnx.py's checks pass).
PY_EXTRAS=(numpy==2.3.5 onnx==1.19.1 onnxruntime==1.23.2)
TAFL_LAB_VENV="${TAFL_LAB_VENV:-$HOME/.cache/tafl-lab/torch-$TORCH_VERSION}"

torch_healthy() {
  [ -x "$TAFL_LAB_VENV/bin/python" ] &&
    "$TAFL_LAB_VENV/bin/python" - "$TORCH_VERSION" >/dev/null 2>&1 <<'PY'
import sys, os, torch
assert torch.__version__.split("+")[0] == sys.argv[1], torch.__version__
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
assert os.path.exists(os.path.join(lib, "libtorch_cpu.so")) or os.path.exists(os.path.join(lib, "libtorch_cpu.dylib"))
PY
}

# Every pinned extra is installed at its version, and torch's numpy bridge works.
extras_healthy() {
  "$TAFL_LAB_VENV/bin/python" - "${PY_EXTRAS[@]}" >/dev/null 2>&1 <<'PY'
import sys
from importlib.metadata import version
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    assert version(name) == want, (name, version(name), want)
import numpy, onnx, onnxruntime, torch
assert torch.zeros(2).numpy().shape == (2,)
PY
}

pip_install() {
  "$TAFL_LAB_VENV/bin/pip" install --quiet --disable-pip-version-check "$@"
}

if ! torch_healthy; then
  echo "tafl-lab setup: installing torch==$TORCH_VERSION and ${PY_EXTRAS[*]} into $TAFL_LAB_VENV (about 5 GB, a few minutes)" >&2
  rm -rf "$TAFL_LAB_VENV"
  mkdir -p "$(dirname "$TAFL_LAB_VENV")"
  python3 -m venv "$TAFL_LAB_VENV"
  pip_install "torch==$TORCH_VERSION" "${PY_EXTRAS[@]}"
  torch_healthy || { echo "tafl-lab setup: torch==$TORCH_VERSION does not import from $TAFL_LAB_VENV" >&2; exit 1; }
fi
if ! extras_healthy; then
  echo "tafl-lab setup: installing ${PY_EXTRAS[*]} into $TAFL_LAB_VENV" >&2
  pip_install "${PY_EXTRAS[@]}"
  extras_healthy || { echo "tafl-lab setup: ${PY_EXTRAS[*]} do not import from $TAFL_LAB_VENV" >&2; exit 1; }
fi

export PATH="$TAFL_LAB_VENV/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
