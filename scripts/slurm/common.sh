# Sourced by match.sh, balance.sh and tournament.sh beside it: what they share.
# shellcheck shell=bash

# The tafl-lab binary of this checkout, quoted for a command line.
tafl_lab=$(printf '%q' "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target/release/tafl-lab")

# setup N OUT: checks that N is a positive number of shards, makes OUT/logs and OUT/shards,
# and sets `n`, `out` (OUT, absolute) and `q` (OUT quoted for a command line).
setup() {
  [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive number of shards, not '$1'" >&2; exit 1; }
  n=$1
  mkdir -p "$2/logs" "$2/shards"
  out=$(cd "$2" && pwd)
  q=$(printf '%q' "$out")
}

# submit NAME TASK MERGE: a job array of n tasks, each running the command line TASK (in
# which $SLURM_ARRAY_TASK_ID is the shard index, 0 to n-1), and a merge job running MERGE
# once every task has succeeded (afterok). Logs go to OUT/logs; extra sbatch options (time,
# cores, partition) come from SBATCH_ARGS.
submit() {
  local name=$1 task=$2 merge=$3 array done_id
  # shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
  array=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name="$name-shards" --array="0-$((n - 1))" \
    --output="$out/logs/shard-%a.log" --wrap "$task")
  array=${array%%;*} # --parsable prints JOBID or JOBID;CLUSTER
  # shellcheck disable=SC2086
  done_id=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name="$name-merge" --dependency="afterok:$array" \
    --output="$out/logs/merge.log" --wrap "$merge")
  echo "$name: $n shards in job array $array, merged by job ${done_id%%;*} once all succeed; output in $out"
}
