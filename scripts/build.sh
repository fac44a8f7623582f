#!/usr/bin/env bash
# Builds the soak binary as one static executable: cgo for SQLite
# (mattn/go-sqlite3), linked statically, with the pure-Go user and DNS
# lookups so nothing is loaded at run time. Used by the Dockerfile and by CI.
#
#   scripts/build.sh [OUTPUT]        default OUTPUT: bin/soak
#
# Needs Go and a C compiler with the static C library (Debian: gcc, libc6-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bin/soak}"
mkdir -p "$(dirname "$out")"
CGO_ENABLED=1 go build -trimpath \
  -tags 'sqlite_omit_load_extension,osusergo,netgo' \
  -ldflags '-s -w -linkmode external -extldflags -static' \
  -o "$out" ./cmd/soak
echo "built $out"
