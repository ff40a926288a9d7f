#!/usr/bin/env bash
# Checks every resignation in match records (`tafl-lab match --record`): the final position of
# each game that ended "forfeit: resigned" is searched exhaustively (`analyze --exhaustive`)
# and the resigning side must lose by force within PLIES plies by tafl-lab's rules. Prints one
# line per resigned game; exits 1 if any resignation is not shown lost within the horizon.
# Usage: scripts/repro/check-resignations.sh PLIES RECORD...   (TAFL_LAB_BIN: the binary to use)
set -euo pipefail
cd "$(dirname "$0")/../.."
plies=${1:?usage: scripts/repro/check-resignations.sh PLIES RECORD...}
shift
[[ $plies =~ ^[0-9]+$ ]] || { echo "error: PLIES must be a number, not '$plies'" >&2; exit 1; }
[[ $# -gt 0 ]] || { echo "usage: scripts/repro/check-resignations.sh PLIES RECORD..." >&2; exit 1; }
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
            verdict=$("$bin" analyze --variant "$variant" --moves "$line" --exhaustive "$plies") \
                || { echo "error: $record, line $n: the moves do not replay" >&2; exit 1; }
            echo "$record, game $game: $verdict"
            resigned=$((resigned + 1))
            [[ $verdict == *" lose by force "* ]] || unproven=$((unproven + 1))
        fi
        header=""
    done < "$record"
done
echo "$((resigned - unproven)) of $resigned resignations shown lost within $plies plies"
[[ $unproven -eq 0 ]] || exit 1
