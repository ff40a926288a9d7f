# A headless browser for the viewer's tests (tests/it/view.rs): Debian's `chromium`, installed
# once with apt-get when missing. Source it: it exports TAFL_LAB_CHROMIUM, the browser's path.
# An existing browser wins: set TAFL_LAB_CHROMIUM beforehand to use another one.
# An install that fails (no network, no root) fails the calling script under CI=true;
# elsewhere it is only reported, TAFL_LAB_CHROMIUM is left unset, and the browser tests are
# skipped (tests/it/common/needs.rs).
if [ -z "${TAFL_LAB_CHROMIUM:-}" ] || [ ! -x "$TAFL_LAB_CHROMIUM" ]; then
  TAFL_LAB_CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
  if [ -z "$TAFL_LAB_CHROMIUM" ]; then
    echo "tafl-lab setup: installing chromium with apt-get (headless browser for tests/it/view.rs)" >&2
    if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
    if { DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >&2 \
        || { "${apt_get[@]}" update -q >&2 && DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >&2; }; }; then
      TAFL_LAB_CHROMIUM="$(command -v chromium || true)"
    fi
    if [ -z "$TAFL_LAB_CHROMIUM" ]; then
      echo "tafl-lab setup: cannot install chromium with apt-get" >&2
      if [[ ${CI:-} =~ ^([Tt][Rr][Uu][Ee]|1)$ ]]; then exit 1; fi
      echo "tafl-lab setup: going on without it (the browser tests are skipped; CI=true fails instead)" >&2
    fi
  fi
fi
if [ -n "$TAFL_LAB_CHROMIUM" ]; then export TAFL_LAB_CHROMIUM; else unset TAFL_LAB_CHROMIUM; fi
