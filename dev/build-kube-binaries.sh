#!/usr/bin/env bash
# Builds kube-apiserver (k8s.io/kubernetes) and etcd (go.etcd.io/etcd/server/v3) from Go modules
# into $1, the way controller-runtime's envtest lays out KUBEBUILDER_ASSETS. Each is built in a
# throwaway module outside the repo; kube-apiserver's staging modules are replaced by the
# matching v0.x.y releases, read from k8s.io/kubernetes's own go.mod.
set -euo pipefail
out=${1:?usage: build-kube-binaries.sh OUT_DIR KUBE_VERSION ETCD_VERSION}
kube=${2:?kubernetes version, e.g. v1.33.13}
etcd=${3:?etcd version, e.g. v3.5.21}
command -v go >/dev/null || { echo "go is not installed: install Go, or set KUBEBUILDER_ASSETS to a folder holding kube-apiserver and etcd" >&2; exit 3; }
mkdir -p "$out"
# Two first runs at once (the demo beside the tests) take turns: the second waits here, then finds
# the binaries built; each build writes its own temporary file.
exec 9>"$out/.build.lock"
flock 9
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

if [ ! -x "$out/kube-apiserver" ]; then
  mkdir -p "$work/kube" && cd "$work/kube"
  staging_version="v0.${kube#v1.}"
  modfile=$(go mod download -json "k8s.io/kubernetes@$kube" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    echo "module sluice.local/kubebuild"
    echo "go 1.24.0"
    echo "require k8s.io/kubernetes $kube"
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$modfile" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
  } > go.mod
  printf 'package kubebuild\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n' > tools.go
  go mod tidy >/dev/null
  minor=${kube#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$kube -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  go build -trimpath -ldflags "$ldflags" -o "$out/kube-apiserver.tmp.$$" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$out/kube-apiserver.tmp.$$" "$out/kube-apiserver"
fi

if [ ! -x "$out/etcd" ]; then
  mkdir -p "$work/etcd" && cd "$work/etcd"
  printf 'module sluice.local/etcdbuild\ngo 1.24.0\nrequire go.etcd.io/etcd/server/v3 %s\n' "$etcd" > go.mod
  printf 'package main\nimport (\n"os"\n"go.etcd.io/etcd/server/v3/etcdmain"\n)\nfunc main() { etcdmain.Main(os.Args) }\n' > main.go
  go mod tidy >/dev/null
  go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp.$$" .
  mv "$out/etcd.tmp.$$" "$out/etcd"
fi
echo "$out"
