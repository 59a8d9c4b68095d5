#!/usr/bin/env bash
# Installs what the tests need beyond Go. npm packages go to .cache/npm (tests look there).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache/npm
if [ -f scripts/npm-packages.txt ]; then
  pkgs=$(grep -vE '^\s*(#|$)' scripts/npm-packages.txt | tr '\n' ' ')
  if [ -n "$pkgs" ]; then
    # shellcheck disable=SC2086
    npm install --no-audit --no-fund --prefix .cache/npm $pkgs
  fi
fi
