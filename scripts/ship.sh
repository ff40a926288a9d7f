#!/usr/bin/env bash
# The shipping gate: a network becomes the default of models/VARIANT (what
# `az:model=models/VARIANT` loads) only when it beats the current default by SPRT (0, +30) at
# equal search.
#
#   scripts/ship.sh VARIANT CANDIDATE [SIMS] [MAX_GAMES] [SEED]     # defaults: 64, 400, 97
#   scripts/ship.sh --readme                                        # only rewrite the table
#
# It plays `match --a az:model=CANDIDATE,sims=SIMS --b az:model=models/VARIANT,sims=SIMS
# --sprt 0,30 --games MAX_GAMES --opening-plies 2`, and writes the match's JSON and games as
# the gate's record, models/VARIANT/gate/DATE-NAME.json and .txt (NAME: the candidate's file
# name), whatever the verdict. When the SPRT accepts H1 (the candidate is at least 30 Elo
# stronger), the candidate is copied to models/VARIANT/DATE-NAME.safetensors (without the
# training-only ownership head, when its run trained one; the old default
# stays where it is) and models/VARIANT/latest
# names it (both written under a temporary name and renamed), so it is the default from then
# on. It ends by rewriting the table of what ships in models/README.md (between its "ships"
# markers) from what each models/*/ folder's default resolves to; tests/it/models_readme.rs
# checks that table against the files. Exit status: 0 shipped, 1 not shipped (H0 accepted or
# no decision within MAX_GAMES games), 2 bad arguments.
#
# MODELS_DIR (default models) and TAFL_LAB_BIN (default: build this checkout) may be set;
# SHIP_SPRT (default 0,30) sets the SPRT's Elo bounds, for a gate stricter than the default
# (e.g. SHIP_SPRT=0,50: the candidate must be shown 50 Elo stronger).
set -euo pipefail
cd "$(dirname "$0")/.."
models=${MODELS_DIR:-models}

# The file the default of folder $1 resolves to, as tafl-lab's loader resolves a folder:
# `latest` if there is one, else model.safetensors.
default_of() {
  if [[ -f $1/latest ]]; then echo "$1/$(tr -d '[:space:]' <"$1/latest")"
  elif [[ -f $1/model.safetensors ]]; then echo "$1/model.safetensors"
  fi
}

# Rewrites the table between "<!-- ships: begin -->" and "<!-- ships: end -->" in
# $models/README.md: per folder with a default, the file, its sha256 and the last gate record.
write_table() {
  local readme=$models/README.md tmp
  [[ -f $readme ]] || { echo "ship: $readme: no such file" >&2; exit 2; }
  grep -q '^<!-- ships: begin -->$' "$readme" && grep -q '^<!-- ships: end -->$' "$readme" \
    || { echo "ship: $readme: no '<!-- ships: begin -->' and '<!-- ships: end -->' lines" >&2; exit 2; }
  tmp=$readme.tmp
  {
    sed -n '1,/^<!-- ships: begin -->$/p' "$readme"
    echo "| folder | default (\`az:model=models/FOLDER\` loads) | sha256 (first 16) | last gate record |"
    echo "|---|---|---|---|"
    for d in "$models"/*/; do
      d=${d%/}
      local f gate record
      f=$(default_of "$d")
      [[ -n $f ]] || continue
      gate=$(ls "$d"/gate/*.json 2>/dev/null | sort | tail -1 || true)
      if [[ -n $gate ]]; then record="[\`${gate#"$models"/}\`](${gate#"$models"/})"; else record="shipped before the gate"; fi
      printf '| `%s/` | `%s` | `%s` | %s |\n' "${d#"$models"/}" "${f#"$d"/}" "$(sha256sum "$f" | cut -c1-16)" "$record"
    done
    sed -n '/^<!-- ships: end -->$/,$p' "$readme"
  } >"$tmp"
  mv "$tmp" "$readme"
}

if [[ ${1:-} == --readme ]]; then
  write_table
  exit 0
fi
if (($# < 2 || $# > 5)); then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
variant=$1 candidate=$2 sims=${3:-64} games=${4:-400} seed=${5:-97}
sprt=${SHIP_SPRT:-0,30}
[[ $sprt =~ ^-?[0-9]+(\.[0-9]+)?,-?[0-9]+(\.[0-9]+)?$ ]] || { echo "ship: SHIP_SPRT=$sprt: expected ELO0,ELO1 (e.g. 0,50)" >&2; exit 2; }
dir=$models/$variant
[[ -d $dir ]] || { echo "ship: $dir: no such folder (the variant's models live in models/VARIANT)" >&2; exit 2; }
[[ -f $candidate ]] || { echo "ship: $candidate: no such file (give the candidate's .safetensors)" >&2; exit 2; }
current=$(default_of "$dir")
[[ -n $current ]] || { echo "ship: $dir: no default (no latest, no model.safetensors) to beat" >&2; exit 2; }
bin=${TAFL_LAB_BIN:-}
if [[ -z $bin ]]; then
  source scripts/env.sh >/dev/null
  cargo build --release --quiet
  bin=target/release/tafl-lab
fi
name=$(date -u +%Y-%m-%d)-$(basename "$candidate" .safetensors)
mkdir -p "$dir/gate"
record=$dir/gate/$name
echo "ship: $candidate against $current (the default of $dir), ${sims} simulations each, SPRT ($sprt), at most $games games, seed $seed"
"$bin" match --variant "$variant" --a "az:model=$candidate,sims=$sims" --b "az:model=$current,sims=$sims" --sprt "$sprt" \
  --games "$games" --opening-plies 2 --seed "$seed" --json --quiet --record "$record.txt.tmp" >"$record.json.tmp"
mv "$record.txt.tmp" "$record.txt"
mv "$record.json.tmp" "$record.json"
decision=$(grep -o '"decision":"[a-z0-9_]*"' "$record.json" | cut -d'"' -f4)
echo "ship: SPRT decision: ${decision:-none}; record $record.json"
if [[ $decision == accept_h1 ]]; then
  if LC_ALL=C grep -aqF '"ownership_out.weight"' "$candidate"; then
    # A run's checkpoint with the training-only ownership head: ship the network agents
    # evaluate, as `export` writes it (no head, metadata without one).
    stripped=$(mktemp -d)
    "$bin" export --model "$candidate" --out "$stripped" >/dev/null
    cp "$stripped/weights.safetensors" "$dir/.$name.safetensors.tmp"
    rm -rf "$stripped"
  else
    cp "$candidate" "$dir/.$name.safetensors.tmp"
  fi
  mv "$dir/.$name.safetensors.tmp" "$dir/$name.safetensors"
  echo "$name.safetensors" >"$dir/.latest.tmp"
  mv "$dir/.latest.tmp" "$dir/latest"
  write_table
  echo "ship: shipped: models/$variant now loads $name.safetensors"
  exit 0
fi
write_table
echo "ship: not shipped: the default stays $current"
exit 1
