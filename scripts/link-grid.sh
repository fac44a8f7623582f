#!/usr/bin/env bash
# Seed 003 on a narrow link: encodings × compression × link rates, each a
# 10 s soak of one library against the replay server behind a link of that
# rate (the default profile's streams: about 2.2 Mbit/s of JSON frames per
# column), printed as one row each: what arrived (msgs/s), how late (latency
# p50 / p99, event time to receive), what it cost the client (CPU % of one
# core), the frame bytes against the payload, and the reconnects. Needs root
# (network namespaces, ip, tc, nft); ~8 minutes for the default grid.
#
#   scripts/link-grid.sh                         # rates 0 (not shaped), 8mbit, 2mbit, 1mbit, 500kbit; gws
#   RATES="1mbit 500kbit" LIB=coder scripts/link-grid.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RATES="${RATES:-0 8mbit 2mbit 1mbit 500kbit}"
LIB="${LIB:-gws}"   # coder and gws keep deflate's window (context takeover); the others cannot
ENCODINGS="${ENCODINGS:-json msgpack packed}"
COMPRESSION="${COMPRESSION:-off on}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/soak" ./cmd/soak

# cell prints the value of the end table's row that begins with $2 (one
# library: one column) from the run's output $1.
cell() { awk -F '  +' -v t="$2" 'index($0, t) == 1 { print $2; exit }' "$1"; }

echo "$(date -u +%F) $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') $(nproc) CPUs; library $LIB"
printf '%-8s %-8s %-4s  %-14s %-22s %-7s %-20s %s\n' rate encoding zip "msgs/s avg" "latency p50 / p99 ms" "CPU %" "wire bytes / ratio" reconnects
for rate in $RATES; do
  for enc in $ENCODINGS; do
    for zip in $COMPRESSION; do
      cat > "$work/grid.yaml" <<EOF
name: grid
duration: 10s
warmup: 2s
libraries: [$LIB]
encoding: $enc
compression: $zip
keepalive: {interval: 2s, timeout: 6s}
link:
  rate: $rate
EOF
      log="$work/run.txt"
      "$work/soak" run -profile "$work/grid.yaml" -out "$work/out" > "$log" 2>&1 || true
      printf '%-8s %-8s %-4s  %-14s %-22s %-7s %-20s %s\n' "$rate" "$enc" "$zip" \
        "$(cell "$log" 'Avg / peak msgs/s' | cut -d/ -f1)" "$(cell "$log" 'Latency p50 / p99')" \
        "$(cell "$log" 'CPU avg' | tr -d ' %')" "$(cell "$log" 'Wire bytes / ratio')" "$(cell "$log" 'Reconnects')"
    done
  done
done
