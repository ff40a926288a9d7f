#!/usr/bin/env bash
# The trainer of a run whose self-play comes from worker jobs (scripts/slurm-selfplay.sh):
#
#   sbatch scripts/slurm-train.sh CONFIG RUN_DIR [TRAIN OPTIONS...]
#
# CONFIG must say `in_process = false` under [selfplay], so that the trainer only waits for
# the workers' shards, trains, saves and evaluates. RUN_DIR lies on a filesystem the workers
# share. A requeued or resubmitted trainer resumes the run where its state says (the CONFIG
# is then ignored: the run keeps its saved one). It ends when the budget is spent, and the
# workers stop after it. TAFL_LAB_BIN names the binary (default: this checkout's
# target/release/tafl-lab).
#SBATCH --job-name=tafl-train
#SBATCH --cpus-per-task=8
#SBATCH --gres=gpu:1
#SBATCH --time=7-00:00:00
#SBATCH --requeue
set -euo pipefail
config=${1:?usage: sbatch scripts/slurm-train.sh CONFIG RUN_DIR [TRAIN OPTIONS...]}
run_dir=${2:?usage: sbatch scripts/slurm-train.sh CONFIG RUN_DIR [TRAIN OPTIONS...]}
shift 2
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
bin=${TAFL_LAB_BIN:-target/release/tafl-lab}
if [[ -f $run_dir/state.json ]]; then
  exec "$bin" train --run-dir "$run_dir" --resume --quiet "$@"
fi
exec "$bin" train --config "$config" --run-dir "$run_dir" --quiet "$@"
