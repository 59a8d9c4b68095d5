#!/usr/bin/env bash
# Runs each `func FuzzX` in the module for $FUZZTIME (default 60s), one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-60s}
found=0
while IFS=: read -r file name; do
  pkg="./$(dirname "${file#./}")"
  echo "== $pkg $name ($fuzztime)"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
  found=1
done < <(grep -rHoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)' . | sed -E 's/func //' | sort)
[ "$found" = 1 ] || { echo "no fuzz targets found"; exit 1; }
