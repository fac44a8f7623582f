#!/usr/bin/env bash
# The long soak test (build tag "soak"): five minutes, every connection closed
# by the replay server every 20 s; exact accounting across ~15 reconnects per
# slot and no growth of goroutines, RSS or open files. Not part of `go test ./...`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -tags soak -run TestSoakLong -timeout 15m -count=1 -v ./cmd/soak/ "$@"
