#!/usr/bin/env bash
# The test suite on a busy machine: a CPU hog spins on one core beside it.
#
#   scripts/stress-tests.sh [RUNS] [COUNT]
#
# 1. RUNS times (default 3) the README's test command, `go test ./...`, each
#    with a fresh test cache, timed.
# 2. The tests that wait on timing -- every test of the packages whose tests
#    drive real connections against the clock (replay, transport, worker,
#    controller, live, metrics), TestResetUnderTLS first -- COUNT times each (default 20),
#    one package after another.
# Exits non-zero on the first failure. Takes about 40 minutes on 2 cores with
# the defaults; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
count="${2:-20}"

timeout 7200 sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
echo "== a CPU hog (pid $hog) on one core; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

go build ./... # the build is not what is timed
go vet ./... >/dev/null

for i in $(seq 1 "$runs"); do
  echo "== go test ./... run $i of $runs"
  start=$(date +%s)
  go test -count=1 ./...
  echo "== run $i passed in $(( $(date +%s) - start )) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
done

echo "== TestResetUnderTLS -count=$((count * 10))"
go test -count=$((count * 10)) -run 'TestResetUnderTLS$' ./internal/replay/
for pkg in replay transport live sampler runner/worker runner/controller runner/serverside; do
  echo "== internal/$pkg -count=$count"
  start=$(date +%s)
  go test -count="$count" -timeout 60m "./internal/$pkg/"
  echo "== internal/$pkg passed $count times in $(( $(date +%s) - start )) s"
done
echo "== all passed"
