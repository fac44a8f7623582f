#!/usr/bin/env bash
# Calibration of the ranking (docs/calibration.md): RUNS runs of
# profiles/calibration.yaml (five gorilla columns alike, one burning 5 µs a
# message, GOGC 25 and 400), one after the other, then what the ranking
# called in them, counted by scripts/calibrate. Not part of `go test ./...`:
# 20 runs take about 45 minutes.
#
#   scripts/calibrate.sh [RUNS] [DIR]    # default 20 runs into out/calibration-<time>
#   scripts/calibrate.sh -count DIR      # count the runs already in DIR again
#
# Any profile with A/A columns can be checked the same way:
#   PROFILE=my.yaml scripts/calibrate.sh 20 && go run ./scripts/calibrate -aa a,b,c -cost x -gc y,z DIR
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "-count" ]]; then
	exec go run ./scripts/calibrate -v "${2:?usage: scripts/calibrate.sh -count DIR}"
fi
runs="${1:-20}"
dir="${2:-out/calibration-$(date -u +%Y%m%d-%H%M%S)}"
profile="${PROFILE:-profiles/calibration.yaml}"
mkdir -p "$dir"
bin="$dir/soak"
go build -o "$bin" ./cmd/soak
{
	echo "host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), profile $profile, $runs runs"
} | tee "$dir/host.txt"
for i in $(seq 1 "$runs"); do
	echo "run $i of $runs"
	# The machine's load before and after each run: the paired statistics
	# cancel what every column shares, but the figures say what they ran beside.
	echo "run $i start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/load.txt"
	# A run that fails (or breaks a threshold) is counted as it stands.
	"$bin" run -profile "$profile" -out "$dir" >"$dir/run-$i.txt" 2>&1 || echo "run $i: exit $? (see $dir/run-$i.txt)"
	echo "run $i end   $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/load.txt"
done
go run ./scripts/calibrate -v -csv "$dir/runs.csv" "$dir" | tee "$dir/calibration.txt"
