#!/usr/bin/env bash
# Usage: scripts/k8s-check.sh [MANIFEST...]
#
# Validates the Kubernetes manifests (default: scripts/*.yaml and scripts/k8s/*.yaml) against
# the JSON schemas of Kubernetes $K8S_VERSION, offline, in strict mode (an unknown or
# misspelled field is an error, as is a wrong type or a missing required field). It does not
# check values the schemas leave free (say `restartPolicy: OnFailur`), nor talk to a cluster.
# The validator is kubernetes-validate from PyPI, which ships the schemas: it is installed once
# into a virtualenv under ~/.cache/tafl-lab (override with TAFL_LAB_K8S_VENV), reused when
# healthy and rebuilt when not, as scripts/env.sh does for torch. TAFL_LAB_K8S_VERSION
# overrides the Kubernetes version.
# Prints one line per file; exits 1 when one is invalid or of a kind without a schema (the
# validator's lines follow it).
# When the validator cannot be installed (no network): under CI=true that fails; elsewhere it
# prints one skip line (appended to TAFL_LAB_SKIP_LOG, which scripts/test.sh counts) and
# exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
VALIDATE_VERSION=1.37.0
K8S_VERSION="${TAFL_LAB_K8S_VERSION:-1.33.0}"
TAFL_LAB_K8S_VENV="${TAFL_LAB_K8S_VENV:-$HOME/.cache/tafl-lab/kubernetes-validate-$VALIDATE_VERSION}"
kv="$TAFL_LAB_K8S_VENV/bin/kubernetes-validate"

healthy() {
  [ -x "$kv" ] && [ "$("$kv" --version 2>/dev/null)" = "$VALIDATE_VERSION" ]
}

if ! healthy; then
  echo "k8s-check: installing kubernetes-validate==$VALIDATE_VERSION into $TAFL_LAB_K8S_VENV" >&2
  rm -rf "$TAFL_LAB_K8S_VENV"
  mkdir -p "$(dirname "$TAFL_LAB_K8S_VENV")"
  if ! { python3 -m venv "$TAFL_LAB_K8S_VENV" &&
    "$TAFL_LAB_K8S_VENV/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$VALIDATE_VERSION" >&2 &&
    healthy; }; then
    rm -rf "$TAFL_LAB_K8S_VENV"
    line="scripts/k8s-check.sh: skipped: cannot install kubernetes-validate==$VALIDATE_VERSION from PyPI (no network?)"
    if [[ ${CI:-} =~ ^([Tt][Rr][Uu][Ee]|1)$ ]]; then echo "$line; CI=true fails" >&2; exit 1; fi
    echo "$line" >&2
    if [[ -n ${TAFL_LAB_SKIP_LOG:-} ]]; then echo "$line" >> "$TAFL_LAB_SKIP_LOG"; fi
    exit 0
  fi
fi

if [[ $# -gt 0 ]]; then
  files=("$@")
else
  shopt -s nullglob
  files=(scripts/*.yaml scripts/*.yml scripts/k8s/*.yaml scripts/k8s/*.yml)
fi
[[ ${#files[@]} -gt 0 ]] || { echo "k8s-check: no manifest to check" >&2; exit 1; }
status=0
for f in "${files[@]}"; do
  # With --quiet the validator prints only warnings and errors; a warning (a kind it has no
  # schema for) means the file was not checked, so it fails too.
  if out=$("$kv" --strict --quiet -k "$K8S_VERSION" "$f" 2>&1) && [[ -z $out ]]; then
    echo "k8s-check: ok: $f (Kubernetes $K8S_VERSION, strict)"
  else
    echo "k8s-check: INVALID: $f (Kubernetes $K8S_VERSION, strict):"
    sed 's/^/    /' <<< "$out"
    status=1
  fi
done
exit "$status"
