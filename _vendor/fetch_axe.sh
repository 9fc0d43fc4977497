#!/bin/sh
# Refresh the vendored axe-core (see README.md): the npm package's minified build and licence.
set -eu
VERSION=4.14.1
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "axe-core@$VERSION" >/dev/null && tar xzf "axe-core-$VERSION.tgz")
DST="$HERE/axe-core"
rm -rf "$DST"
mkdir -p "$DST"
cp "$TMP/package/axe.min.js" "$TMP/package/LICENSE" "$DST/"
echo "$VERSION" >"$DST/VERSION"
echo "axe-core $VERSION vendored into $DST"
