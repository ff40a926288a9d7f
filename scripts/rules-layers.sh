#!/usr/bin/env bash
# Checks that the rules crate is layered one way: every module of crates/tafl-rules/src (a
# module is its file and the files of its submodules, `m.rs` and `m/*.rs`) uses only modules
# declared before it in lib.rs (which declares them in layer order, lowest first; its module
# docs list the layers). Two ways to depend on a module are checked:
#
# - imports: the modules a module names through `crate::` (or a top-level `super::`); one of
#   the same or a higher layer fails, as does an import through the crate root (`crate::{...}`,
#   `crate::Name`), which hides the module it comes from;
# - calls: a method is called on a value, with no import at all. A module may add methods to
#   a type of a lower layer (`impl Move` in notation); a lower layer that calls one of those
#   methods depends upward unseen by its imports. So for each inherent `impl T` block of a type
#   defined in another module, every method it defines is looked for in the layers below it
#   (`.name(` for a method that takes self, `T::name(` for one that does not); a match fails.
#   (By name: a method of the same name on another type is a false alarm, which the message
#   makes easy to see.)
#
# Comment lines are skipped: a doc link may point anywhere.
#
# Usage: scripts/rules-layers.sh   (RULES_SRC=DIR checks another copy of the sources)
set -euo pipefail
cd "${RULES_SRC:-$(dirname "$0")/../crates/tafl-rules/src}"

mapfile -t order < <(sed -nE 's/^(pub )?mod ([a-z_0-9]+);.*/\2/p' lib.rs)
declare -A layer
for i in "${!order[@]}"; do layer[${order[$i]}]=$i; done
names=$(IFS='|'; echo "${order[*]}")

# The files of module $1: its file and its submodules' files.
files() {
    echo "$1.rs"
    if [[ -d $1 ]]; then find "$1" -name '*.rs' | sort; fi
}
# The code of module $1, comment lines left out.
code_of() {
    local f
    for f in $(files "$1"); do grep -vE '^\s*//' "$f" || true; done
}

bad=0
for i in "${!order[@]}"; do
    m=${order[$i]}
    code=$(code_of "$m")
    used=$(grep -oE "\b(crate|super)::($names)\b" <<<"$code" | sed -E 's/^(crate|super):://' | sort -u || true)
    list=""
    for u in $used; do
        [[ $u == "$m" ]] && continue
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

# Calls: methods that a module adds to a type defined in another module, called from below.
# The module that defines a type (struct, enum or type alias) $1.
defined_in() {
    local m
    for m in "${order[@]}"; do
        if code_of "$m" | grep -qE "^\s*(pub(\([a-z]+\))? )?(struct|enum|type) $1\b"; then
            echo "$m"
            return
        fi
    done
}
foreign=0
for i in "${!order[@]}"; do
    m=${order[$i]}
    # "Type method takes-self" for each method of each inherent impl block (impl T { ... } at
    # column 0); takes-self is 1 when the signature's first line has `self`.
    pairs=$(code_of "$m" | awk '
        /^impl(<[^>]*>)? [A-Z][A-Za-z0-9_]*(<[^>]*>)? *\{/ { t = $0; sub(/^impl(<[^>]*>)? /, "", t); sub(/[<{ ].*/, "", t); inside = 1; next }
        /^\}/ { inside = 0 }
        inside && /^    (pub(\([a-z]+\))? )?(const )?fn [a-z_0-9]+/ { f = $0; sub(/^ *(pub(\([a-z]+\))? )?(const )?fn /, "", f); sub(/[<(].*/, "", f); print t, f, ($0 ~ /self/ ? 1 : 0) }')
    [[ -z $pairs ]] && continue
    while read -r t f takes_self; do
        d=$(defined_in "$t")
        [[ -z $d || $d == "$m" ]] && continue
        foreign=$((foreign + 1))
        for ((j = 0; j < i; j++)); do
            below=${order[$j]}
            if ((takes_self)); then call="\\.$f\\("; else call="\\b$t::$f\\("; fi
            hits=$(code_of "$below" | grep -nE "$call" || true)
            if [[ -n $hits ]]; then
                echo "UPWARD CALL: $below (layer $j) calls $t::$f, which $m (layer $i) defines:"
                echo "$hits" | head -3
                bad=1
            fi
        done
    done <<<"$pairs"
done

if (( bad )); then
    echo "rules-layers: FAILED" >&2
    exit 1
fi
echo "rules-layers: ok, ${#order[@]} modules, every crate:: import points to a lower layer, and no lower layer calls one of the $foreign methods a module adds to another module's type"
