#!/usr/bin/env bash
# Builds a real Kubernetes control plane into the git-ignored .tools/kube/ for the cluster
# tests and `foghorn dev --kube` (docs/kubernetes.md):
#   etcd                          Debian package etcd-server
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#                                 v$KUBE_VERSION from the Go module proxy (wrapper module here)
#   kwok                          v$KWOK_VERSION (simulated nodes and pod lifecycles), with its
#                                 stock stage files copied from the module source
# Idempotent: a stamp names the versions and this folder's checksum, so a second run costs a
# few milliseconds. A fresh machine pays the build once (~20 min on 2 cores, ~3 GB Go cache).
set -euo pipefail

KUBE_VERSION=1.33.13
KWOK_VERSION=0.8.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tools/kube"
out="$root/.tools/kube"
say() { printf '[kube-build] %s\n' "$*" >&2; }
die() { printf '[kube-build] ERROR: %s\n' "$*" >&2; exit 1; }

sum="$(cat "$here/build.sh" "$here/go.mod" "$here/go.sum" | cksum | cut -d' ' -f1)"
stamp="$out/.stamp-$KUBE_VERSION-$KWOK_VERSION-$sum"
[ -f "$stamp" ] && exit 0
mkdir -p "$out/bin" "$out/stages"

# --- etcd from Debian -----------------------------------------------------------------------
if ! command -v etcd >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "etcd is missing and apt-get is not available (install etcd-server 3.4+)"
  if [ "$(id -u)" -eq 0 ]; then as_root() { "$@"; }
  elif sudo -n true 2>/dev/null; then as_root() { sudo -n "$@"; }
  else die "etcd is missing; run: sudo apt-get install etcd-server"; fi
  say "installing etcd-server with apt-get"
  apt_wait=(-o DPkg::Lock::Timeout=600)
  as_root apt-get "${apt_wait[@]}" update -qq || die "apt-get update failed"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends etcd-server \
    >"$out/apt.log" 2>&1 || { cat "$out/apt.log" >&2; die "apt-get could not install etcd-server"; }
  # The package starts a system etcd on 2379; the harness runs its own on free ports.
  (as_root systemctl disable --now etcd >/dev/null 2>&1 || true)
fi
etcd --version >/dev/null 2>&1 || die "etcd does not run"
ln -sf "$(command -v etcd)" "$out/bin/etcd"

# --- openssl (keys and certificates of the local control plane) ----------------------------
command -v openssl >/dev/null 2>&1 || die "openssl is required (apt-get install openssl)"

# --- the control plane from the Go module proxy ----------------------------------------------
command -v go >/dev/null 2>&1 || die "Go 1.24+ is required to build the Kubernetes control plane"
# Without these the server reports v0.0.0-master+$Format:%H$, which clients cannot parse.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION \
  -X k8s.io/component-base/version.gitMajor=${KUBE_VERSION%%.*} \
  -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) \
  -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION \
  -X k8s.io/component-base/version.gitTreeState=clean"
started=$(date +%s)
say "building kube-apiserver, kube-controller-manager, kube-scheduler and kubectl v$KUBE_VERSION (first time 5-20 min, then seconds)"
(cd "$here" && go mod download) || die "go could not download the Kubernetes modules (tools/kube/go.mod)"
(cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$out/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl) \
  || die "go build of the Kubernetes control plane failed"
"$out/bin/kube-apiserver" --version | grep -q "v$KUBE_VERSION" || die "kube-apiserver does not report v$KUBE_VERSION"

say "building kwok v$KWOK_VERSION"
GOBIN="$out/bin" GOFLAGS=-buildvcs=false go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" \
  || die "go install of kwok v$KWOK_VERSION failed"
stock="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$KWOK_VERSION/kustomize/stage"
[ -d "$stock" ] || die "kwok's stage files are missing from the module cache ($stock)"
rm -rf "$out/stages/stock" && mkdir -p "$out/stages/stock"
for f in node/fast/node-initialize node/heartbeat/node-heartbeat node/chaos/node-not-ready \
  pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
  [ -f "$stock/$f.yaml" ] || die "kwok stage $f not found under $stock"
  cp "$stock/$f.yaml" "$out/stages/stock/$(echo "$f" | tr / -).yaml"
  chmod u+w "$out/stages/stock/$(echo "$f" | tr / -).yaml"
done

rm -f "$out"/.stamp-*
touch "$stamp"
say "control plane ready in .tools/kube/bin ($(($(date +%s) - started)) s)"
