#!/usr/bin/env bash
# A long balance run (or `balance --ladder`) divided into N shards on a Slurm cluster (see
# docs/cluster.md):
#
#   scripts/slurm/balance.sh N OUT BALANCE_ARGS...
#   scripts/slurm/balance.sh 8 /shared/bal --variants brandubh,copenhagen --agent mcts:sims=400 --games 800
#   scripts/slurm/balance.sh 8 /shared/lad --ladder /shared/runs/cph --every 5 --games 200 --device cpu
#
# Task I of a job array runs `tafl-lab balance BALANCE_ARGS --shard I/N --out OUT/shards/I`;
# a merge job that waits for every task (afterok) writes the whole run's files into OUT
# (balance.json, balance.csv, report.md, plots, pages; or ladder.json, ladder.md, plots).
# BALANCE_ARGS hold no --out, --shard or --quiet (the script adds them).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/slurm/balance.sh N OUT BALANCE_ARGS..." >&2; exit 1; }
source "$(dirname "$0")/common.sh"
setup "$1" "$2"
shift 2
args=$(printf '%q ' "$@")
submit balance \
  "$tafl_lab balance $args--shard \$SLURM_ARRAY_TASK_ID/$n --out $q/shards/\$SLURM_ARRAY_TASK_ID --quiet" \
  "$tafl_lab balance --merge $q/shards/* --out $q"
