#!/usr/bin/env bash
# Trains a model for every preset (or the ones named) with `tafl-lab train --variant`, one
# after another, smallest boards first, and keeps what each run needs to go on elsewhere:
#
#   scripts/atlas.sh                      # every preset in the order below
#   scripts/atlas.sh ard-ri magpie        # only these
#   ATLAS_MINUTES=30 scripts/atlas.sh     # a budget for every run instead of the board's
#   scripts/atlas.sh --keep [VARIANT...]  # only copy the runs' resume state (while they run)
#   ATLAS_INIT=models/atlas/tablut scripts/atlas.sh foteviken-tablut
#                                         # new runs start from that model (same board size:
#                                         # the nearest trained network) instead of scratch
#
# Each run lives in $ATLAS_RUNS/<variant> (default runs/atlas, outside git: shards are big and
# self-play remakes them). When a run stops (its budget spent, or killed), its resume state
# (config.toml, run.json, state.json, metrics.jsonl, the latest model and its optimizer state)
# is copied to models/atlas/<variant>/run/ and the latest model to
# models/atlas/<variant>/model.safetensors, which is what to commit. Run the script again, on
# this machine or on a fresh clone of another, and each run resumes: from $ATLAS_RUNS if it is
# there, else from the committed state. A run whose budget is spent is skipped.
#
# Budgets are the --variant recipe's (7x7: 60 minutes, 9x9: 120, 11x11: 240, larger: 480)
# measured as run time on the machine that trains; ATLAS_MINUTES overrides them. brandubh is
# last: its shipped network (models/brandubh) already exists. TAFL_LAB_BIN names a built
# binary to use instead of building this checkout (so that rebuilding the checkout while the
# runs go on changes nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TAFL_LAB_BIN:-}
if [[ -z $bin ]]; then
  source scripts/env.sh
  cargo build --release --quiet
  bin=target/release/tafl-lab
fi
runs=${ATLAS_RUNS:-runs/atlas}
keep_only=false
if [[ ${1:-} == --keep ]]; then
  keep_only=true
  shift
fi
order=(ard-ri magpie ard-ri-historical tablut hnefatafl-9 tablut-linnaeus foteviken-tablut
       fetlar hnefatafl-11 tawlbwrdd copenhagen copenhagen-13 alea-evangelii brandubh)
if (($# > 0)); then
  order=("$@")
fi

# Copies a run's resume state (not its shards) into models/atlas/<variant>.
keep() {
  local v=$1 src=$runs/$1 dst=models/atlas/$1
  [[ -f $src/state.json ]] || return 0
  local latest
  latest=$(tr -d '[:space:]' <"$src/models/latest")
  local g=${latest%.safetensors}
  local tmp=$dst/.run.tmp
  rm -rf "$tmp"
  mkdir -p "$tmp/models"
  cp "$src/config.toml" "$src/run.json" "$src/state.json" "$tmp/"
  [[ -f $src/metrics.jsonl ]] && cp "$src/metrics.jsonl" "$tmp/"
  cp "$src/models/$latest" "$tmp/models/"
  [[ -f $src/models/$g.optim.safetensors ]] && cp "$src/models/$g.optim.safetensors" "$tmp/models/"
  printf '%s\n' "$latest" >"$tmp/models/latest"
  rm -rf "$dst/run"
  mv "$tmp" "$dst/run"
  cp "$src/models/$latest" "$dst/.model.tmp" && mv "$dst/.model.tmp" "$dst/model.safetensors"
  echo "atlas: $v: kept generation $((10#$g)) in $dst"
}

if $keep_only; then
  for v in "${order[@]}"; do keep "$v"; done
  exit 0
fi

for v in "${order[@]}"; do
  dir=$runs/$v
  if [[ ! -f $dir/state.json && -f models/atlas/$v/run/state.json ]]; then
    echo "atlas: $v: resuming from the committed state in models/atlas/$v/run"
    mkdir -p "$dir"
    cp -r "models/atlas/$v/run/." "$dir/"
  fi
  args=(--run-dir "$dir" --quiet)
  [[ -n ${ATLAS_MINUTES:-} ]] && args+=(--minutes "$ATLAS_MINUTES")
  if [[ -f $dir/state.json ]]; then
    if grep -q '"finished": true' "$dir/state.json" && [[ -z ${ATLAS_MINUTES:-} ]]; then
      echo "atlas: $v: budget spent, skipped"
      keep "$v"
      continue
    fi
    "$bin" train --resume "${args[@]}" || { keep "$v"; exit 1; }
  else
    mkdir -p "$runs"
    init=()
    [[ -n ${ATLAS_INIT:-} ]] && init=(--init "$ATLAS_INIT")
    "$bin" train --variant "$v" "${args[@]}" "${init[@]}" || { keep "$v"; exit 1; }
  fi
  keep "$v"
done
