#!/usr/bin/env bash
# Builds local-kms (github.com/nsmithuk/local-kms, a KMS stand-in with real AES-GCM and encryption
# contexts) from Go modules into $1. Its own main listens on every interface; this one, made in a
# throwaway module outside the repo, listens on the address it is given (127.0.0.1:<port>) and
# seeds the AES, ECC and RSA keys of KMS_SEED_PATH with fixed key material, so ciphertexts and
# signatures made once (committed test fixtures) decrypt and verify on any machine.
set -euo pipefail
out=${1:?usage: build-local-kms.sh OUT_DIR VERSION}
version=${2:?local-kms module version}
command -v go >/dev/null || { echo "go is not installed: Go is needed to build local-kms" >&2; exit 3; }
mkdir -p "$out"
# Two first runs at once (the demo beside the tests) take turns: the second waits here, then finds
# the binaries built; each build writes its own temporary file.
exec 9>"$out/.build.lock"
flock 9
[ -x "$out/local-kms" ] && { echo "$out"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
cd "$work"
printf 'module sluice.local/kmsbuild\ngo 1.24.0\nrequire github.com/nsmithuk/local-kms %s\n' "$version" > go.mod
cat > main.go <<'GO'
package main

import (
	"net/http"
	"os"

	"github.com/nsmithuk/local-kms/src"
	"github.com/nsmithuk/local-kms/src/cmk"
	"github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
	"gopkg.in/yaml.v2"
)

// local-kms <address>: KMS_ACCOUNT_ID, KMS_REGION, KMS_DATA_PATH and KMS_SEED_PATH as for local-kms.
func main() {
	config.AWSAccountId = os.Getenv("KMS_ACCOUNT_ID")
	config.AWSRegion = os.Getenv("KMS_REGION")
	config.DatabasePath = os.Getenv("KMS_DATA_PATH")
	database := data.NewDatabase(config.DatabasePath)
	var seed struct {
		Keys struct {
			Symmetric struct {
				Aes []cmk.AesKey `yaml:"Aes"`
			} `yaml:"Symmetric"`
			Asymmetric struct {
				Ecc []cmk.EccKey `yaml:"Ecc"`
				Rsa []cmk.RsaKey `yaml:"Rsa"`
			} `yaml:"Asymmetric"`
		} `yaml:"Keys"`
	}
	content, err := os.ReadFile(os.Getenv("KMS_SEED_PATH"))
	if err != nil {
		panic(err)
	}
	if err := yaml.Unmarshal(content, &seed); err != nil {
		panic(err)
	}
	var keys []cmk.Key
	for i := range seed.Keys.Symmetric.Aes {
		keys = append(keys, &seed.Keys.Symmetric.Aes[i])
	}
	for i := range seed.Keys.Asymmetric.Ecc {
		keys = append(keys, &seed.Keys.Asymmetric.Ecc[i])
	}
	for i := range seed.Keys.Asymmetric.Rsa {
		keys = append(keys, &seed.Keys.Asymmetric.Rsa[i])
	}
	for _, key := range keys {
		if err := database.SaveKey(key); err != nil {
			panic(err)
		}
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { src.HandleRequest(w, r, database) })
	println("local-kms listening on " + os.Args[1])
	panic(http.ListenAndServe(os.Args[1], nil))
}
GO
go mod tidy >/dev/null
go build -trimpath -ldflags "-s -w" -o "$out/local-kms.tmp.$$" .
mv "$out/local-kms.tmp.$$" "$out/local-kms"
echo "$out"
