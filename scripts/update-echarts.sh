#!/usr/bin/env bash
# Vendors Apache ECharts from the npm registry into internal/report/assets:
# echarts.min.js (inlined into every report), its LICENSE and NOTICE, the
# version, and the sha256 of each file (checked by TestEchartsAsset).
#
#   scripts/update-echarts.sh 5.6.0
#
# npm verifies the tarball against the registry's sha512 integrity; this
# script checks the tarball's sha1 against the registry's shasum as well and
# refuses anything but a 5.x release (the report's options are written for 5).
set -euo pipefail
version=${1:?usage: scripts/update-echarts.sh VERSION (e.g. 5.6.0)}
[[ $version =~ ^5\.[0-9]+\.[0-9]+$ ]] || { echo "update-echarts: want a 5.x.y release, got $version" >&2; exit 2; }
cd "$(dirname "$0")/.."
dest=internal/report/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tgz=$(cd "$tmp" && npm pack --silent "echarts@$version")
want=$(npm view "echarts@$version" dist.shasum)
got=$(sha1sum "$tmp/$tgz" | cut -d' ' -f1)
[[ $got == "$want" ]] || { echo "update-echarts: $tgz sha1 $got, registry says $want" >&2; exit 1; }
tar -xzf "$tmp/$tgz" -C "$tmp" package/dist/echarts.min.js package/LICENSE package/NOTICE
grep -q "version=\"$version\"" "$tmp/package/dist/echarts.min.js" ||
  { echo "update-echarts: echarts.min.js does not declare version $version" >&2; exit 1; }

cp "$tmp/package/dist/echarts.min.js" "$dest/echarts.min.js"
cp "$tmp/package/LICENSE" "$dest/LICENSE"
cp "$tmp/package/NOTICE" "$dest/NOTICE"
echo "$version" >"$dest/echarts.version"
(cd "$dest" && sha256sum echarts.min.js LICENSE NOTICE >echarts.sha256)
echo "echarts $version vendored into $dest:"
cat "$dest/echarts.sha256"
