#!/usr/bin/env bash
# Checks that the rules crate is layered one way: every module of crates/tafl-rules/src imports
# only from modules declared before it in lib.rs (which declares them in layer order, lowest
# first; its module docs list the layers). Prints each module's layer index and the modules it
# names through `crate::` (or a top-level `super::`), with their layer indices, and fails on an
# import from the same or a higher layer, or one through the crate root (`crate::{...}`,
# `crate::Name`), which hides the module it comes from. Comment lines are skipped: a doc link
# may point anywhere.
#
# Usage: scripts/rules-layers.sh
set -euo pipefail
cd "$(dirname "$0")/../crates/tafl-rules/src"

mapfile -t order < <(sed -nE 's/^(pub )?mod ([a-z_0-9]+);.*/\2/p' lib.rs)
declare -A layer
for i in "${!order[@]}"; do layer[${order[$i]}]=$i; done
names=$(IFS='|'; echo "${order[*]}")

bad=0
for i in "${!order[@]}"; do
    m=${order[$i]}
    code=$(grep -vE '^\s*//' "$m.rs")
    used=$(grep -oE "\b(crate|super)::($names)\b" <<<"$code" | sed -E 's/^(crate|super):://' | sort -u || true)
    list=""
    for u in $used; do
        j=${layer[$u]}
        list+=" $u($j)"
        if (( j >= i )); then
            echo "UPWARD: $m (layer $i) imports $u (layer $j)"
            bad=1
        fi
    done
    root=$(grep -nE '\bcrate::(\{|[A-Z])' <<<"$code" || true)
    if [[ -n $root ]]; then
        echo "THROUGH THE ROOT: $m imports through crate:: without naming a module:"
        echo "$root"
        bad=1
    fi
    printf '%2d %-12s ->%s\n' "$i" "$m" "${list:- (none)}"
done
if (( bad )); then
    echo "rules-layers: FAILED" >&2
    exit 1
fi
echo "rules-layers: ok, ${#order[@]} modules, every crate:: import points to a lower layer"
