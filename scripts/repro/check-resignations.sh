#!/usr/bin/env bash
# Checks every resignation in match records (`tafl-lab match --record`): the final position of
# each game that ended "forfeit: resigned" is searched exhaustively (`analyze --exhaustive`)
# and the resigning side must lose by force within PLIES plies by tafl-lab's rules; or, with
# `prove=N` for PLIES, by a proof-number search of at most N expansions whose proof is checked
# move by move (`analyze --prove N`: wins of any length, where repetition can only help the
# winner). Prints one line per resigned game; exits 1 if any resignation is not shown lost.
# Usage: scripts/repro/check-resignations.sh PLIES|prove=N RECORD...   (TAFL_LAB_BIN: the binary to use)
set -euo pipefail
cd "$(dirname "$0")/../.."
plies=${1:?usage: scripts/repro/check-resignations.sh PLIES|prove=N RECORD...}
shift
if [[ $plies =~ ^prove=([0-9]+)$ ]]; then
    search=(--prove "${BASH_REMATCH[1]}")
    horizon="a proof of at most ${BASH_REMATCH[1]} expansions"
elif [[ $plies =~ ^[0-9]+$ ]]; then
    search=(--exhaustive "$plies")
    horizon="$plies plies"
else
    echo "error: the first argument must be a number of plies or prove=N, not '$plies'" >&2
    exit 1
fi
[[ $# -gt 0 ]] || { echo "usage: scripts/repro/check-resignations.sh PLIES|prove=N RECORD..." >&2; exit 1; }
bin=${TAFL_LAB_BIN:-target/release/tafl-lab}
[[ -x $bin ]] || { echo "error: $bin is missing: build with cargo build --release, or set TAFL_LAB_BIN" >&2; exit 1; }
unproven=0
resigned=0
for record in "$@"; do
    [[ -r $record ]] || { echo "error: $record: cannot read it" >&2; exit 1; }
    variant=$(sed -n 's/^# variant: //p' "$record" | head -1)
    [[ -n $variant ]] || { echo "error: $record, line 1: no '# variant:' line (not a match record?)" >&2; exit 1; }
    header=""
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        if [[ $line == "# game "* ]]; then header=$line; continue; fi
        [[ $line == "#"* || -z $header ]] && continue
        # "defenders forfeit (resigned): ..." since fef5b4c; "defenders forfeit: resigned" before.
        if [[ $header == *"forfeit (resigned)"* || $header == *"forfeit: resigned"* ]]; then
            game=${header#\# game }; game=${game%%:*}
            # The side that resigned: the word before " forfeit" in the header.
            side=${header%% forfeit*}; side=${side##* }
            verdict=$("$bin" analyze --variant "$variant" --moves "$line" "${search[@]}" 2>&1) \
                || { echo "error: $record, line $n: $verdict" >&2; exit 1; }
            echo "$record, game $game: $verdict"
            resigned=$((resigned + 1))
            [[ $verdict == *"the $side to move lose by force "* ]] || unproven=$((unproven + 1))
        fi
        header=""
    done < "$record"
done
echo "$((resigned - unproven)) of $resigned resignations shown lost within $horizon"
[[ $unproven -eq 0 ]] || exit 1
