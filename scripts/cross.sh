#!/usr/bin/env bash
# Cross-checks the module for every platform massgen ships on: for each GOOS/GOARCH, builds the
# binary, vets every package (which type-checks the tests too) and compiles and links every test
# binary (`go test -exec /bin/true`: built, never run). Prints one line per platform and check,
# the compiler's errors under a failing one, and exits non-zero if any failed.
# PLATFORMS overrides the list ("linux/amd64 darwin/arm64 ...").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
go=${GO:-go}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0
check() { # platform, name, command...
  local platform=$1 name=$2
  shift 2
  if GOOS=${platform%/*} GOARCH=${platform#*/} "$@" >"$out" 2>&1; then
    echo "ok    $platform $name"
  else
    echo "FAIL  $platform $name"
    grep -v -e '^ok ' -e 'no test files' "$out" | sed 's/^/      /'
    failed=1
  fi
}
for p in $platforms; do
  check "$p" build "$go" build -o /dev/null .
  check "$p" vet "$go" vet ./...
  check "$p" test-binaries "$go" test -exec /bin/true -run '^$' ./...
done
exit "$failed"
