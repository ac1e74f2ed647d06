#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller from Go modules into $1, with their CRDs
# (the modules' own config/crd/bases) beside them. `go install` refuses their replace directives,
# and each points its API module at ./api, which the module zip leaves out (a nested module): so
# each is built from a writable copy of the downloaded module whose ./api replace is dropped (the
# released api module of the same version is used instead).
set -euo pipefail
out=${1:?usage: build-flux.sh OUT_DIR VERSION (e.g. v1.9.6)}
version=${2:?controller version, e.g. v1.9.6}
command -v go >/dev/null || { echo "go is not installed: Go is needed to build Flux's controllers" >&2; exit 3; }
mkdir -p "$out/crds"
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

for controller in source-controller kustomize-controller; do
  [ -x "$out/$controller" ] && continue
  module="github.com/fluxcd/$controller"
  dir=$(go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  [ -n "$dir" ] || { echo "could not download $module@$version from the Go module proxy" >&2; exit 4; }
  cp -r "$dir" "$work/$controller" && chmod -R u+w "$work/$controller"
  cp "$dir"/config/crd/bases/*.yaml "$out/crds/"
  cd "$work/$controller"
  go mod edit -dropreplace "$module/api"
  go build -trimpath -ldflags "-s -w" -o "$out/$controller.tmp" .
  mv "$out/$controller.tmp" "$out/$controller"
done
echo "$out"
