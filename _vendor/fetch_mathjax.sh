#!/bin/sh
# Refresh the vendored MathJax (see README.md): the npm package, unpacked, only the files we use.
set -eu
VERSION=3.2.2
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "mathjax@$VERSION" >/dev/null && tar xzf "mathjax-$VERSION.tgz")
SRC="$TMP/package/es5"
DST="$HERE/html/mathjax"
rm -rf "$DST"
mkdir -p "$DST/output/chtml/fonts" "$DST/input/tex"
cp "$SRC/tex-chtml.js" "$DST/"
cp -r "$SRC/output/chtml/fonts/woff-v2" "$DST/output/chtml/fonts/"
cp -r "$SRC/input/tex/extensions" "$DST/input/tex/"
cp "$TMP/package/LICENSE" "$DST/LICENSE"
echo "MathJax $VERSION vendored into $DST"
