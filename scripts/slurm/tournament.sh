#!/usr/bin/env bash
# A long tournament divided into N shards on a Slurm cluster (see docs/cluster.md):
#
#   scripts/slurm/tournament.sh N OUT TOURNAMENT_ARGS...
#   scripts/slurm/tournament.sh 12 /shared/t1 --variant brandubh --agents "mcts:sims=100;az:model=models/brandubh,sims=64" --games 240
#
# Task I of a job array plays `tafl-lab tournament TOURNAMENT_ARGS --shard I/N` into its own
# folder OUT/shards/I (a task that is killed or requeued resumes its folder, as does running
# this script again with the same arguments); a merge job that waits for every task
# (afterok) writes the whole tournament into OUT (settings.json, pairings/, tournament.json,
# tournament.md). TOURNAMENT_ARGS hold no --out, --shard or --quiet (the script adds them).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/slurm/tournament.sh N OUT TOURNAMENT_ARGS..." >&2; exit 1; }
source "$(dirname "$0")/common.sh"
setup "$1" "$2"
shift 2
args=$(printf '%q ' "$@")
submit tournament \
  "$tafl_lab tournament $args--shard \$SLURM_ARRAY_TASK_ID/$n --out $q/shards/\$SLURM_ARRAY_TASK_ID --quiet" \
  "$tafl_lab tournament --merge $q/shards/* --out $q"
