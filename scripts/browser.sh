# A headless browser for the viewer's tests (tests/view.rs): Debian's `chromium`, installed
# once with apt-get when missing. Source it: it exports TAFL_LAB_CHROMIUM, the browser's path.
# An existing browser wins: set TAFL_LAB_CHROMIUM beforehand to use another one.
if [ -z "${TAFL_LAB_CHROMIUM:-}" ] || [ ! -x "$TAFL_LAB_CHROMIUM" ]; then
  TAFL_LAB_CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
  if [ -z "$TAFL_LAB_CHROMIUM" ]; then
    echo "tafl-lab setup: installing chromium with apt-get (headless browser for tests/view.rs)" >&2
    if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
    { DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >&2 \
        || { "${apt_get[@]}" update -q >&2 && DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >&2; }; } \
      || { echo "tafl-lab setup: cannot install chromium with apt-get" >&2; exit 1; }
    TAFL_LAB_CHROMIUM="$(command -v chromium)"
  fi
fi
export TAFL_LAB_CHROMIUM
