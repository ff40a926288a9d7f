#!/usr/bin/env bash
# Reproduces the Copenhagen matches of docs/results/external-matches.md against
# hnefatafl-copenhagen 6.4.1 (its depth-4 alpha-beta AI on stdin, and its monte-carlo AI as an
# engine client over TCP, 2 s a move): the shipped model (az, 64 simulations) and
# random-rollout MCTS (400 simulations), in two-game pieces (one game with each side) with
# seeds 1, 2, ..., one JSON summary and one record per piece in OUT_DIR. Finished pieces are
# skipped, so it resumes where it stopped. The model runs in fp32 (precision=fp32), as it did
# for every piece measured before bf16 inference existed; bf16 against fp32 scored 50% over
# 100 Copenhagen games.
# Usage: scripts/repro/external-matches.sh OUT_DIR [PIECES (default 10)] [MATCHUP ...]
#   PIECES: N for seeds 1..N, or a list of seeds with at least one comma (2,6,7; one seed: 9,).
#   Several runners may share a folder: each piece is locked (PIECE.lock) while it runs.
#   MATCHUP: model-ab, mcts-ab, model-mc, mcts-mc (default: all four), or attack-ab: the
#   attack of issue 28, one game a piece with tafl-lab attacking (--a-side attackers): the
#   planes-v2 network with the fork probe at 400 simulations against the alpha-beta AI.
#   TAFL_LAB_ATTACK_MODEL names another network for attack-ab (default: the pretrained v2 one
#   that sitting 4 measured; models/copenhagen is the shipped self-play network).
# The alpha-beta AI takes from seconds to over ten minutes a move (one thread); a two-game
# piece against it takes 15-40 minutes on 2 cores. Run nothing else beside the monte-carlo
# matches: that AI thinks for a fixed time, so a loaded machine weakens it.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
source scripts/peers.sh
# TAFL_LAB_BIN: a tafl-lab binary to use instead of building this checkout's (a copy, so that
# builds while the matches run change nothing in them).
[[ -n ${TAFL_LAB_BIN:-} ]] || cargo build --release --quiet
out=${1:?usage: scripts/repro/external-matches.sh OUT_DIR [PIECES] [MATCHUP ...]}
pieces=${2:-10}
shift $(( $# < 2 ? $# : 2 ))
matchups=("$@")
[[ ${#matchups[@]} -gt 0 ]] || matchups=(model-ab mcts-ab model-mc mcts-mc)
mkdir -p "$out"
bin=${TAFL_LAB_BIN:-$PWD/target/release/tafl-lab}
htp=$TAFL_LAB_HTP_ENGINE
[[ -x $htp ]] || { echo "error: $htp is missing (scripts/peers.sh could not install it)" >&2; exit 1; }
# A day per move: only a hang guard (its slowest moves take many minutes).
ab="htp:cmd=$htp,time=86400"
mc="htp:cmd=$htp,args=\"--ai monte-carlo --seconds 2\",tcp=1,time=60"
for m in "${matchups[@]}"; do
    case $m in
        model-ab) a="az:model=models/copenhagen,sims=64,precision=fp32" b=$ab ;;
        mcts-ab) a="mcts:sims=400" b=$ab ;;
        model-mc) a="az:model=models/copenhagen,sims=64,precision=fp32" b=$mc ;;
        mcts-mc) a="mcts:sims=400" b=$mc ;;
        attack-ab) a="az:model=${TAFL_LAB_ATTACK_MODEL:-models/copenhagen/pretrained-v2.safetensors},sims=400,probe=2" b=$ab ;;
        *) echo "error: unknown matchup $m (model-ab, mcts-ab, model-mc, mcts-mc, attack-ab)" >&2; exit 1 ;;
    esac
    side=()
    [[ $m == attack-ab ]] && side=(--a-side attackers)
    if [[ $pieces =~ ^[0-9]+$ ]]; then seeds=$(seq 1 "$pieces")
    elif [[ $pieces =~ ^[0-9]+,([0-9]+(,[0-9]+)*)?$ ]]; then seeds=${pieces//,/ }
    else echo "error: PIECES must be a number N (seeds 1..N) or a list of seeds with a comma (2,6,7 or 9,), not '$pieces'" >&2; exit 1
    fi
    for s in $seeds; do
        name=$out/$m-s$s
        [[ -s $name.json ]] && continue
        # Another runner has this piece: leave it (mkdir is atomic; the lock goes when the
        # piece ends, or with this runner).
        mkdir "$name.lock" 2>/dev/null || { echo "$m, seed $s: another runner has it ($name.lock)"; continue; }
        trap 'rmdir "$name.lock" 2>/dev/null' EXIT
        echo "$m, seed $s ($(date +%T))"
        OMP_WAIT_POLICY=PASSIVE "$bin" match --variant copenhagen --a "$a" --b "$b" --games 2 "${side[@]}" --seed "$s" \
            --json --quiet --record "$name.txt" > "$name.json.tmp" 2> "$name.err"
        mv "$name.json.tmp" "$name.json"
        rmdir "$name.lock"
        trap - EXIT
    done
done
