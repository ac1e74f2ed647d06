#!/usr/bin/env bash
# Builds aws-lambda-rie (the AWS Lambda Runtime Interface Emulator) from its Go module into $1:
# the module is downloaded through the Go module proxy and its own cmd/aws-lambda-rie built in the
# downloaded (read-only) module folder, with the module's own go.sum.
set -euo pipefail
out=${1:?usage: build-lambda-rie.sh OUT_DIR VERSION}
version=${2:?aws-lambda-runtime-interface-emulator module version}
command -v go >/dev/null || { echo "go is not installed: Go is needed to build aws-lambda-rie" >&2; exit 3; }
mkdir -p "$out"
# Two first runs at once (the demo beside the tests) take turns: the second waits here, then finds
# the binaries built; each build writes its own temporary file.
exec 9>"$out/.build.lock"
flock 9
[ -x "$out/aws-lambda-rie" ] && { echo "$out"; exit 0; }
export GOFLAGS=-mod=readonly CGO_ENABLED=0
module=github.com/aws/aws-lambda-runtime-interface-emulator
dir=$(cd "$(mktemp -d)" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir/cmd/aws-lambda-rie" ] || { echo "go mod download gave no module folder for $module@$version" >&2; exit 4; }
cd "$dir"
go build -trimpath -ldflags "-s -w" -o "$out/aws-lambda-rie.tmp.$$" ./cmd/aws-lambda-rie
mv "$out/aws-lambda-rie.tmp.$$" "$out/aws-lambda-rie"
echo "$out"
