#!/usr/bin/env bash
# Re-makes the OpenTafl rows of docs/results/opentafl-ai.md: the shipped models (az, 64
# simulations) against OpenTafl's AI (scripts/opentafl-ai.sh THINK_S) at 1 s and 3 s a move,
# 40 brandubh and 20 Copenhagen games each, with a transcript of every game (--engine-log),
# the games (--record) and OpenTafl's capture reading checked against tafl-lab's
# (scripts/repro/opentafl-captures.py). Finished matches are skipped, so it resumes.
# usage: scripts/repro/opentafl-matches.sh OUT_DIR [THINK_S ...]   (default THINK_S: 1 3)
# OpenTafl's AI thinks for a fixed time: run nothing else beside it, or it plays weaker.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
cargo build --release --quiet
out=${1:?usage: scripts/repro/opentafl-matches.sh OUT_DIR [THINK_S ...]}
shift
thinks=("$@"); [[ ${#thinks[@]} -gt 0 ]] || thinks=(1 3)
mkdir -p "$out"
for think in "${thinks[@]}"; do
  for v in brandubh copenhagen; do
    if [[ $v == brandubh ]]; then games=40; seed=101; else games=20; seed=201; fi
    name=$out/$v-t$think
    if [[ ! -s $name.json ]]; then
      target/release/tafl-lab match --variant $v --a "az:model=models/$v,sims=64" \
        --b "otep:cmd=scripts/opentafl-ai.sh,args=$think,time=60" --games $games --seed $((seed + think)) \
        --engine-log "$name.logs" --record "$name.txt" --json --quiet > "$name.json.tmp"
      mv "$name.json.tmp" "$name.json"
    fi
    python3 - "$name.json" "$v" "$think" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = lambda x: "%d-%d-%d" % (x["win"], x["draw"], x["loss"])
print("%s, OpenTafl at %s s: as attackers %s, as defenders %s; %d disagreements, %d forfeits, %d void"
      % (sys.argv[2], sys.argv[3], w(d["a_as_attackers"]), w(d["a_as_defenders"]), d["disagreements"], d["forfeits"], d["voids"]))
PY
    python3 scripts/repro/opentafl-captures.py "$name.logs"
  done
done
