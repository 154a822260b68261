#!/usr/bin/env bash
# Time from `npm start` to /readyz 200: cold (fresh clone, no .tools/, no data/) and warm
# (same clone, second start). Also times `npm test` in that clone. Prints the figures.
# Usage: bash bench/startup.sh   (takes a few minutes; uses ports 18180, 17333, 18333, 27333)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/foghorn"
cd "$work/foghorn"
npm install --no-audit --no-fund --prefer-offline >/dev/null 2>&1

export FOGHORN_API_ADDR=127.0.0.1:18180 FOGHORN_TEMPORAL_PORT=17333 FOGHORN_TEMPORAL_UI_PORT=18333 \
  FOGHORN_MONGO_PORT=27333 FOGHORN_LOG_LEVEL=warn

time_start() {
  local started=$(date +%s.%N)
  npm start >"$work/start.log" 2>&1 &
  local pid=$!
  until [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18180/readyz)" = 200 ]; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/start.log"; exit 1; }
    sleep 0.2
  done
  local ready=$(date +%s.%N)
  pkill -INT -f "bin/foghorn.js dev" || true
  wait "$pid" || true
  python3 -c "print($ready - $started)"
}

cold=$(time_start)
warm=$(time_start)
test_started=$(date +%s.%N)
npm test >"$work/test.log" 2>&1 || { tail -40 "$work/test.log"; exit 1; }
test_secs=$(python3 -c "print($(date +%s.%N) - $test_started)")

printf 'npm start → /readyz 200, cold (bootstrap + empty data dir): %.1f s\n' "$cold"
printf 'npm start → /readyz 200, warm:                             %.1f s\n' "$warm"
printf 'npm test (whole suite):                                    %.1f s\n' "$test_secs"
grep -E '^(Tests|Test Suites):' "$work/test.log"
