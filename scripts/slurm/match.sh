#!/usr/bin/env bash
# A long match divided into N shards on a Slurm cluster (see docs/cluster.md):
#
#   scripts/slurm/match.sh N OUT MATCH_ARGS...
#   SBATCH_ARGS="--time=4:00:00 --cpus-per-task=8" scripts/slurm/match.sh 16 /shared/m1 \
#     --variant copenhagen --a az:model=models/copenhagen,sims=64 --b mcts:sims=400 --games 400
#
# Task I of a job array plays `tafl-lab match MATCH_ARGS --shard I/N --json` into
# OUT/shards/I.json; a merge job that waits for every task (afterok) writes OUT/match.json,
# the JSON of one whole match. MATCH_ARGS hold no --sprt (an SPRT cannot be sharded),
# --shard or --json.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/slurm/match.sh N OUT MATCH_ARGS..." >&2; exit 1; }
source "$(dirname "$0")/common.sh"
setup "$1" "$2"
shift 2
args=$(printf '%q ' "$@")
submit match \
  "$tafl_lab match $args--shard \$SLURM_ARRAY_TASK_ID/$n --json --quiet > $q/shards/\$SLURM_ARRAY_TASK_ID.json" \
  "$tafl_lab match --merge $q/shards/*.json --json > $q/match.json"
