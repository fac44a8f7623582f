#!/usr/bin/env bash
# The acceptance of resume at full length: a 2-minute run with faults whose
# controller is SIGKILLed twice and resumed each time, against the same run
# not killed, run side by side: dials (and failures by status), wire bytes,
# reconnects and lost ids must equal the unkilled run's less what each
# outage cost (TestResumeKilledTwiceMatchesUnkilled in cmd/soak/resume_test.go,
# which `go test ./...` runs with a 24 s window). SOAK_RESUME_WINDOW sets the
# window (default 2m).
set -euo pipefail
cd "$(dirname "$0")/.."
export SOAK_RESUME_WINDOW="${SOAK_RESUME_WINDOW:-2m}"
exec go test -run 'TestResumeKilledTwiceMatchesUnkilled$' -timeout 15m -count=1 -v ./cmd/soak/ "$@"
