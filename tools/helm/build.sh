#!/usr/bin/env bash
# Builds Helm v$HELM_VERSION from the Go module proxy into the git-ignored .tools/helm/bin, for
# the chart's tests (deploy/helm/foghorn, docs/helm.md). Idempotent: a stamp names the version
# and this script's checksum, so a second run costs a few milliseconds. Kept apart from
# tools/kube/build.sh: a change here must not force a rebuild of the control plane.
set -euo pipefail

HELM_VERSION=4.3.2

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/.tools/helm"
say() { printf '[helm-build] %s\n' "$*" >&2; }
die() { printf '[helm-build] ERROR: %s\n' "$*" >&2; exit 1; }

sum="$(cksum <"$root/tools/helm/build.sh" | cut -d' ' -f1)"
stamp="$out/.stamp-$HELM_VERSION-$sum"
[ -f "$stamp" ] && [ -x "$out/bin/helm" ] && exit 0
mkdir -p "$out/bin"

command -v go >/dev/null 2>&1 || die "Go 1.26+ is required to build helm (helm.sh/helm/v4 needs it)"
started=$(date +%s)
say "building helm v$HELM_VERSION (first time a few minutes, then milliseconds)"
# Without the version flag the binary reports v4.3, with no patch level.
GOBIN="$out/bin" GOFLAGS=-buildvcs=false CGO_ENABLED=0 go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
  "helm.sh/helm/v4/cmd/helm@v$HELM_VERSION" || die "go install of helm v$HELM_VERSION failed"
"$out/bin/helm" version --short | grep -q "v$HELM_VERSION" || die "helm does not report v$HELM_VERSION"

rm -f "$out"/.stamp-*
touch "$stamp"
say "helm ready in .tools/helm/bin ($(($(date +%s) - started)) s)"
