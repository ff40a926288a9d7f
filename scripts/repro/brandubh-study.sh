#!/usr/bin/env bash
# Which settings matter for brandubh: A/B runs of equal wall-clock time, judged by Elo.
# Each arm is the default config (configs/runs/brandubh.toml) with one setting changed,
# trained from scratch for MINUTES minutes of run time. Then every arm's final model plays a
# round robin with a fixed pool (the model shipped when the first study ran, kept in
# docs/results/brandubh-settings-study-1/previous-shipped, and random-rollout MCTS with 400 simulations), all
# at 64 simulations, and `tafl-lab tournament` fits joint Elo ratings with 95% intervals
# (OUT_DIR/tournament/tournament.md). More agents join the round robin from the environment:
# STUDY_EXTRA_AGENTS="az:model=DIR,sims=64 ..." (e.g. an earlier study's final models).
#
# Usage: scripts/repro/brandubh-study.sh OUT_DIR [MINUTES (default 12)] [ARM ...]
#   ARM: base (the default config), no-advantage (attackers search as much as defenders:
#   48 simulations, not 192), no-discount (value_discount = 1.0, not 0.97), sims96 (full
#   searches of 96 simulations, not 48), window20k (a replay window of 20,000 positions, not
#   60,000), net6x48 (6 blocks of 48 channels, not 4x32). Default: base no-advantage
#   no-discount.
# Resumable: an arm's run continues with --resume up to MINUTES in total (a finished arm
# stops at once), and the tournament resumes where it stopped. Run nothing else beside it:
# equal wall-clock is only fair on an equally loaded machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
cargo build --release --quiet
out=${1:?usage: scripts/repro/brandubh-study.sh OUT_DIR [MINUTES] [ARM ...]}
minutes=${2:-12}
shift $(( $# < 2 ? $# : 2 ))
arms=("$@")
[[ ${#arms[@]} -gt 0 ]] || arms=(base no-advantage no-discount)
bin=$PWD/target/release/tafl-lab
base=configs/runs/brandubh.toml
mkdir -p "$out"

# Writes ARM's config to $out/ARM.toml: the default config with one line replaced.
arm_config() {
    local arm=$1 dest=$out/$1.toml edit
    case $arm in
        base) edit='' ;;
        no-advantage) edit='s/^attacker_sims = 192 /attacker_sims = 0   /' ;;
        no-discount) edit='s/^value_discount = 0.97 /value_discount = 1.0  /' ;;
        sims96) edit='s/^sims = 48$/sims = 96/' ;;
        window20k) edit='s/^window_positions = 60000$/window_positions = 20000/' ;;
        net6x48) edit='s/^blocks = 4$/blocks = 6/; s/^channels = 32$/channels = 48/' ;;
        *) echo "error: unknown arm $arm (base, no-advantage, no-discount, sims96, window20k, net6x48)" >&2; exit 1 ;;
    esac
    sed -e "s/^name = \"brandubh\"/name = \"study-$arm\"/" -e "$edit" "$base" > "$dest.tmp"
    # Every arm but the base must differ from the default in more than its name.
    if [[ $arm != base ]] && cmp -s <(grep -v '^name = ' "$base") <(grep -v '^name = ' "$dest.tmp"); then
        echo "error: arm $arm changed nothing in $base (has the default config changed?)" >&2
        exit 1
    fi
    mv "$dest.tmp" "$dest"
}

agents=()
for arm in "${arms[@]}"; do
    arm_config "$arm"
    run=$out/$arm
    echo "arm $arm: $minutes minutes ($(date +%T))"
    if [[ -f $run/state.json ]]; then
        "$bin" train --run-dir "$run" --resume --minutes "$minutes" --quiet >> "$out/$arm.log" 2>&1
    else
        "$bin" train --config "$out/$arm.toml" --run-dir "$run" --minutes "$minutes" --quiet > "$out/$arm.log" 2>&1
    fi
    agents+=("az:model=$run,sims=64")
done
read -r -a extra <<< "${STUDY_EXTRA_AGENTS:-}"
agents+=("${extra[@]}" "az:model=docs/results/brandubh-settings-study-1/previous-shipped,sims=64" "mcts:sims=400")
echo "tournament ($(date +%T))"
args=()
for a in "${agents[@]}"; do args+=(--agent "$a"); done
"$bin" tournament --variant brandubh "${args[@]}" --games 20 --seed 1 --out "$out/tournament" --quiet
cat "$out/tournament/tournament.md"
