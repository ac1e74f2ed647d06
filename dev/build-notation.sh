#!/usr/bin/env bash
# Builds the notation CLI (github.com/notaryproject/notation, the Notary Project's signer) from its
# Go module into $1: the module is downloaded through the Go module proxy and its own cmd/notation
# built in the downloaded (read-only) module folder, with the module's own go.sum.
set -euo pipefail
out=${1:?usage: build-notation.sh OUT_DIR VERSION}
version=${2:?notation module version}
command -v go >/dev/null || { echo "go is not installed: Go is needed to build notation" >&2; exit 3; }
mkdir -p "$out"
# Two first runs at once take turns: the second waits here, then finds the binary built; each
# build writes its own temporary file.
exec 9>"$out/.build.lock"
flock 9
[ -x "$out/notation" ] && { echo "$out"; exit 0; }
export GOFLAGS=-mod=readonly CGO_ENABLED=0
module=github.com/notaryproject/notation
dir=$(cd "$(mktemp -d)" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir/cmd/notation" ] || { echo "go mod download gave no module folder for $module@$version" >&2; exit 4; }
cd "$dir"
go build -trimpath -ldflags "-s -w" -o "$out/notation.tmp.$$" ./cmd/notation
mv "$out/notation.tmp.$$" "$out/notation"
echo "$out"
