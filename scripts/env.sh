# Sourced by the other scripts: makes sure LibTorch (torch==2.13.0 from PyPI, the version tch
# 0.26 needs) is installed in a virtualenv outside the clone, then exports what the build needs.
# The virtualenv is reused when healthy and rebuilt when broken. Override its place with
# TAFL_LAB_VENV.
set -euo pipefail
TORCH_VERSION=2.13.0
TAFL_LAB_VENV="${TAFL_LAB_VENV:-$HOME/.cache/tafl-lab/torch-$TORCH_VERSION}"

venv_healthy() {
  [ -x "$TAFL_LAB_VENV/bin/python" ] &&
    "$TAFL_LAB_VENV/bin/python" - "$TORCH_VERSION" >/dev/null 2>&1 <<'PY'
import sys, os, torch
assert torch.__version__.split("+")[0] == sys.argv[1], torch.__version__
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
assert os.path.exists(os.path.join(lib, "libtorch_cpu.so")) or os.path.exists(os.path.join(lib, "libtorch_cpu.dylib"))
PY
}

if ! venv_healthy; then
  echo "tafl-lab setup: installing torch==$TORCH_VERSION into $TAFL_LAB_VENV (about 5 GB, a few minutes)" >&2
  rm -rf "$TAFL_LAB_VENV"
  mkdir -p "$(dirname "$TAFL_LAB_VENV")"
  python3 -m venv "$TAFL_LAB_VENV"
  "$TAFL_LAB_VENV/bin/pip" install --quiet --disable-pip-version-check "torch==$TORCH_VERSION"
  venv_healthy || { echo "tafl-lab setup: torch==$TORCH_VERSION does not import from $TAFL_LAB_VENV" >&2; exit 1; }
fi

export PATH="$TAFL_LAB_VENV/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
