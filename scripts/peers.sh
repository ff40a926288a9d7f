#!/usr/bin/env bash
# Other tafl programs the tests play against, installed once and cached beside the venv
# (like torch): hnefatafl-copenhagen's HTP engine from crates.io. Source it: it exports
# TAFL_LAB_HTP_ENGINE, the path of `hnefatafl-text-protocol`. Override the cache folder with
# TAFL_LAB_PEERS. OpenTafl needs no install here: tests run it through
# ../shared/peers/opentafl-host.sh, which builds it on first use.
# An install that fails (no network) fails the calling script under CI=true; elsewhere it is
# only reported, and the tests that need the engine are skipped (tests/it/common/needs.rs).
HTP_VERSION=6.4.1
TAFL_LAB_PEERS="${TAFL_LAB_PEERS:-$HOME/.cache/tafl-lab}"
htp_root="$TAFL_LAB_PEERS/hnefatafl-copenhagen-$HTP_VERSION"
if [ ! -x "$htp_root/bin/hnefatafl-text-protocol" ]; then
  echo "tafl-lab setup: installing hnefatafl-text-protocol $HTP_VERSION from crates.io into $htp_root (about 3 minutes)" >&2
  if ! cargo install --quiet --locked hnefatafl-copenhagen --version "$HTP_VERSION" --no-default-features \
    --bin hnefatafl-text-protocol --root "$htp_root" >&2; then
    echo "tafl-lab setup: cannot install hnefatafl-copenhagen $HTP_VERSION from crates.io" >&2
    if [[ ${CI:-} =~ ^([Tt][Rr][Uu][Ee]|1)$ ]]; then exit 1; fi
    echo "tafl-lab setup: going on without it (the tests that play it are skipped; CI=true fails instead)" >&2
  fi
fi
export TAFL_LAB_HTP_ENGINE="$htp_root/bin/hnefatafl-text-protocol"
