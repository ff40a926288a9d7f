#!/usr/bin/env bash
# OpenTafl's own AI (OpenTafl 0.4.8, commit 6895051) as an OpenTafl Engine Protocol engine on
# stdin and stdout, thinking THINK_S seconds a move (default 1): an opponent nobody here wrote,
# for `match`, `tournament` and `eval.baselines`, e.g.
#   tafl-lab match --variant brandubh --a az:model=models/brandubh,sims=64 \
#       --b 'otep:cmd=scripts/opentafl-ai.sh,args=1,time=30' --games 20
# It builds OpenTafl once (plain javac, as ../shared/peers/opentafl-host.sh does) from the
# source tree in TAFL_LAB_OPENTAFL_SRC (default: ../shared/peers/opentafl beside the clone)
# into OPENTAFL_WORK (default ~/.cache/tafl-lab/opentafl-6895051, the host script's build,
# shared with it), then runs `OpenTafl --engine` in a scratch folder of its own whose
# settings.ini sets the think time (OpenTafl reads it from its working directory). Needs Java
# 17+ and, once, Debian's libini4j-java libjline2-java libjsonp-java (installed when missing).
# Its search stops about 0.5 s before the think time; keep `time=` well above THINK_S.
# What tafl-lab's client does about OpenTafl's engine mode (a `position` before every `play`,
# a quiet moment after each of its moves) is in docs/engines.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
think=${1:-1}
if ! [[ $think =~ ^[0-9]+$ ]] || [[ $think -lt 1 ]]; then
  echo "error -1 scripts/opentafl-ai.sh: THINK_S must be a whole number of seconds >= 1, not '$think'"
  exit 2
fi
src=${TAFL_LAB_OPENTAFL_SRC:-$here/../shared/peers/opentafl}
work=${OPENTAFL_WORK:-$HOME/.cache/tafl-lab/opentafl-6895051}
cp_of="$work/out:$work/lib/lanterna.jar:/usr/share/java/ini4j.jar:/usr/share/java/jline2.jar:/usr/share/java/javax.json.jar:/usr/share/java/javax.json-api.jar"
X=(--add-exports java.xml/com.sun.org.apache.xerces.internal.impl.dv.util=ALL-UNNAMED --add-exports java.base/sun.net=ALL-UNNAMED)
# Everything the build prints goes to stderr: stdout is the protocol.
fail() { echo "scripts/opentafl-ai.sh: $*" >&2; echo "error -1 scripts/opentafl-ai.sh: $*"; exit 1; }
command -v java >/dev/null && command -v javac >/dev/null || fail "needs Java 17+ (java and javac)"
if [ ! -f "$work/out/com/manywords/softworks/tafl/OpenTafl.class" ]; then
  [ -d "$src/src" ] || fail "no OpenTafl source at $src (set TAFL_LAB_OPENTAFL_SRC)"
  if [ ! -f /usr/share/java/ini4j.jar ] || [ ! -f /usr/share/java/jline2.jar ] || [ ! -f /usr/share/java/javax.json.jar ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libini4j-java libjline2-java libjsonp-java) >&2 \
      || fail "cannot install the Java libraries OpenTafl needs (libini4j-java libjline2-java libjsonp-java)"
  fi
  # Built in a temporary folder and renamed, so that a build stopped half-way is never used.
  tmp=$(mktemp -d "$(dirname "$work")/opentafl-build.XXXXXX")
  cp -r "$src/." "$tmp/"; chmod -R u+w "$tmp"
  (cd "$tmp" && find src -name '*.java' > sources.txt && mkdir -p out \
    && javac -nowarn -encoding UTF-8 -d out -cp "${cp_of//$work/$tmp}" "${X[@]}" @sources.txt) >&2 2>&1 \
    || { rm -rf "$tmp"; fail "OpenTafl build failed"; }
  cp "$tmp/unbuilt/external-rules.conf" "$tmp/"
  rm -rf "$work"; mv "$tmp" "$work"
fi
run=$(mktemp -d "${TMPDIR:-/tmp}/opentafl-ai.XXXXXX")
trap 'rm -rf "$run"' EXIT
printf '[config]\nthinktime = %s\n' "$think" > "$run/settings.ini"
cd "$run"
# Not exec: the trap removes the scratch folder when OpenTafl exits.
java -Xmx512m "${X[@]}" -cp "$cp_of" com.manywords.softworks.tafl.OpenTafl --engine
