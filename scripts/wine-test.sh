#!/usr/bin/env bash
# Runs the Windows tests of the file tools (the resolve-once walker, internal/safefs,
# and the tools driven end to end with C:\ paths, filesystem's TestWindows*) under Wine, on
# Linux amd64. Without wine it says so and exits 0: the tests are then not run.
#
# Wine before 9 lacks bcryptprimitives.dll, which Go programs need (ProcessPrng); a shim
# (scripts/wine/bcryptprimitives.c) is built with mingw-w64 into the private Wine prefix.
# Wine 8 cannot create symbolic links or junctions, so the walker's link tests skip there,
# saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
wine=$(command -v wine64 || command -v wine || true)
if [ -z "$wine" ]; then
  echo "wine-test: wine is not installed: the Windows tests were NOT run (apt-get install wine64)"
  exit 0
fi
cache=$PWD/.cache/wine
mkdir -p "$cache"
export WINEPREFIX=${WINEPREFIX:-$cache/prefix} WINEDEBUG=-all
[ -d "$WINEPREFIX/drive_c/windows/system32" ] || "$wine" wineboot -i >/dev/null 2>&1 || true
sys32=$WINEPREFIX/drive_c/windows/system32
if [ ! -e "$sys32/bcryptprimitives.dll" ]; then
  cc=$(command -v x86_64-w64-mingw32-gcc || true)
  if [ -z "$cc" ]; then
    echo "wine-test: this Wine lacks bcryptprimitives.dll and mingw-w64 is not installed to build the shim: the Windows tests were NOT run (apt-get install gcc-mingw-w64-x86-64-win32)"
    exit 0
  fi
  "$cc" -shared -O2 -o "$sys32/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c -ladvapi32
fi
"$wine" --version
run() { # package, test binary, -test.run pattern
  GOOS=windows GOARCH=amd64 "$GO" test -c -o "$cache/$2" "$1"
  echo "wine-test: $1 (-test.run '$3')"
  "$wine" "$cache/$2" -test.run "$3" ${WINETEST_FLAGS:-}
}
run ./internal/safefs safefs.exe .
run ./filesystem filesystem.exe '^TestWindows'
