#!/usr/bin/env bash
# Every test on a fresh machine. First the rules crates and tafl-search (search, protocols,
# statistics), before LibTorch is even installed (they must build and pass without it); then installs LibTorch once (see scripts/env.sh) and builds
# and runs the rest of the suite in release mode (one build shared with the main job), with
# hnefatafl-copenhagen's HTP engine installed once from crates.io (scripts/peers.sh) for the
# tests that play against it, headless Chromium once with apt-get (scripts/browser.sh) for the
# viewer's browser tests, and Debian's Slurm once (scripts/slurm-local.sh install) for the job
# scripts' test on a real one-node Slurm (tests/it/slurm.rs). The Kubernetes manifests' schema check (scripts/k8s-check.sh),
# `cargo fmt --check` and the rules crate's layer check run first,
# `cargo clippy --workspace --all-targets -- -D warnings` once LibTorch is there.
#
# Two things overlap, because most of their time is waiting, not computing:
# - the downloads (LibTorch from PyPI, Chromium and Slurm from Debian) run in the background while the
#   rules crate and hnefatafl-copenhagen's engine compile;
# - the OpenTafl games (tests/it/opentafl.rs: five games one after another, each mostly waiting
#   on OpenTafl's clock and JVM start-up) run beside the rest of the suite.
# Their output is printed whole when they end, and any failure fails the script.
#
# A test that needs something from outside the repository that is missing here (the peers or
# data folder beside it, Java, Chromium, hnefatafl-copenhagen's engine when its install
# failed; likewise the manifest check when its validator cannot be installed) is skipped with one line saying why (tests/it/common/needs.rs); the script ends by
# listing those lines and their count. Under CI=true nothing is skipped: a missing peer, or an
# install that fails, fails the run.
# Extra arguments go to one `cargo test --release --workspace` instead (e.g. `--test it cli::`).
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d "${TMPDIR:-/tmp}/tafl-lab-test.XXXXXX")
# The tests append their skip lines here.
export TAFL_LAB_SKIP_LOG="$logs/skipped.txt"
: > "$TAFL_LAB_SKIP_LOG"
# On any exit: stops the background jobs, then lists the skipped tests.
finish() {
    local status=$?
    kill $(jobs -p) 2>/dev/null || true
    local n
    n=$(wc -l < "$TAFL_LAB_SKIP_LOG")
    if [[ $n -eq 0 ]]; then
        [[ $status -ne 0 ]] || echo "scripts/test.sh: no test skipped"
    else
        echo "scripts/test.sh: $n test$([[ $n -eq 1 ]] || echo s) skipped (what they need is missing here; under CI=true they fail):"
        cat "$TAFL_LAB_SKIP_LOG"
    fi
    rm -rf "$logs"
    exit "$status"
}
trap finish EXIT
if [[ $# -gt 0 ]]; then
    source scripts/env.sh
    source scripts/peers.sh
    source scripts/browser.sh
    scripts/slurm-local.sh install || echo "scripts/test.sh: no Slurm here; tests/it/slurm.rs says what is missing" >&2
    cargo test --release --workspace "$@"
    exit
fi
# Waits for background job $1 (named $2, output in $3) and fails with its output if it failed.
wait_for() {
    if ! wait "$1"; then
        cat "$3" >&2
        echo "scripts/test.sh: $2 failed (output above)" >&2
        exit 1
    fi
}

( source scripts/env.sh ) > "$logs/venv.log" 2>&1 & venv=$!
# The browser's path, or nothing when it could not be installed (its tests are then skipped).
( source scripts/browser.sh; echo "${TAFL_LAB_CHROMIUM:-}" > "$logs/chromium" ) > "$logs/browser.log" 2>&1 & browser=$!
# Debian's Slurm and munge for tests/it/slurm.rs, once Chromium's apt-get is done (one apt-get at
# a time). Where it cannot install (not root, no network) the test says so in one line.
( while kill -0 $browser 2> /dev/null; do sleep 1; done; scripts/slurm-local.sh install ) > "$logs/slurm.log" 2>&1 & slurm=$!
# The Kubernetes manifests against the schemas (seconds; scripts/k8s-check.sh, which installs
# its validator once and skips with one line where it cannot, failing under CI=true).
scripts/k8s-check.sh || { echo "scripts/test.sh: a Kubernetes manifest is invalid (scripts/k8s-check.sh, above)" >&2; exit 1; }
# Habits first, as they take seconds: the formatting (rustfmt.toml) and the rules crate's
# one-way layers. Clippy (warnings are errors) runs once LibTorch is set up, below.
cargo fmt --all -- --check || { echo "scripts/test.sh: cargo fmt --check failed: run cargo fmt --all" >&2; exit 1; }
layers=$(scripts/rules-layers.sh) || { echo "$layers" >&2; exit 1; }
env -u LIBTORCH_USE_PYTORCH -u LIBTORCH cargo test --release -p tafl-rules -p tafl-rules-cli -p tafl-search
source scripts/peers.sh
wait_for $venv "the LibTorch setup (scripts/env.sh)" "$logs/venv.log"
wait_for $browser "the Chromium setup (scripts/browser.sh)" "$logs/browser.log"
wait $slurm || echo "scripts/test.sh: scripts/slurm-local.sh install failed; tests/it/slurm.rs says what is missing" >&2
cat "$logs/venv.log" "$logs/browser.log" "$logs/slurm.log" >&2
source scripts/env.sh
TAFL_LAB_CHROMIUM=$(cat "$logs/chromium")
if [[ -n $TAFL_LAB_CHROMIUM ]]; then export TAFL_LAB_CHROMIUM; else unset TAFL_LAB_CHROMIUM; fi

cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --release -p tafl-lab --no-run
cargo test --release -p tafl-lab --test it opentafl:: > "$logs/opentafl.log" 2>&1 & opentafl=$!
# Every other target of the crate: its library, binaries and the integration tests' one
# program (tests/it), without the OpenTafl games running beside them.
cargo test --release -p tafl-lab --lib --bins --test it -- --skip opentafl::
wait_for $opentafl "tests/it/opentafl.rs" "$logs/opentafl.log"
cat "$logs/opentafl.log"
