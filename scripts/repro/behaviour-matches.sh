#!/usr/bin/env bash
# Three fixed-seed matches whose `match --json` (seconds aside) and `--record` must not change
# across a refactor (issue 27's check): the brandubh model against mcts:sims=400, the
# Copenhagen model against random, and tafl-lab's own OTEP engine against itself. Run it with
# the binaries from before and after (copied out of target/release), then compare:
#   scripts/repro/behaviour-matches.sh OLD_BIN_DIR old/ && scripts/repro/behaviour-matches.sh NEW_BIN_DIR new/
#   for f in old/*; do diff <(sed "s#OLD_BIN_DIR#B#g; /seconds/s/\"seconds\":[0-9.e+-]*//" $f) \
#       <(sed "s#NEW_BIN_DIR#B#g; /seconds/s/\"seconds\":[0-9.e+-]*//" new/${f#old/}); done
# usage: scripts/repro/behaviour-matches.sh BIN_DIR OUT_DIR   (BIN_DIR holds tafl-lab and tafl-lab-torch)
set -euo pipefail
bin=$(cd "${1:?usage: scripts/repro/behaviour-matches.sh BIN_DIR OUT_DIR}" && pwd)/tafl-lab
out=${2:?usage: scripts/repro/behaviour-matches.sh BIN_DIR OUT_DIR}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
source scripts/env.sh >/dev/null
"$bin" match --variant brandubh --a az:model=models/brandubh,sims=64 --b mcts:sims=400 --games 8 --seed 11 --json --quiet \
    --record "$out/brandubh-model-vs-mcts400.txt" > "$out/brandubh-model-vs-mcts400.json"
"$bin" match --variant copenhagen --a az:model=models/copenhagen,sims=16 --b random --games 4 --seed 12 --json --quiet \
    --record "$out/copenhagen-model-vs-random.txt" > "$out/copenhagen-model-vs-random.json"
"$bin" match --variant brandubh --a "otep:cmd=$bin,args=\"engine --sims 16\"" --b "otep:cmd=$bin,args=\"engine --sims 32\"" \
    --games 4 --seed 13 --json --quiet --record "$out/otep-self-match.txt" > "$out/otep-self-match.json"
