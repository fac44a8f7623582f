#!/usr/bin/env bash
# The links' acceptance (build tag "soak", root): profiles/link.yaml and
# profiles/link-narrow.yaml, 2 minutes each, every library's blackhole
# detection measured and nothing left after either run. About 5 minutes.
# Not part of `go test ./...`, where shorter linked runs are.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -tags soak -run TestLinkProfiles -timeout 15m -count=1 -v ./cmd/soak/ "$@"
