#!/usr/bin/env bash
# shellcheck disable=SC2016 # single-quoted $ are for the sandboxed shell to expand
# For maintainers on a Mac: builds massgen, runs the descriptor walk's tests, runs the built-in
# demo in a temporary directory, then runs commands through the Seatbelt sandbox (`massgen tools
# call ... execute_command`) that must succeed (writing in the workspace and in a writable
# project) and must fail (writing a protected path, in any case, renaming the directory above it,
# creating a .git, hard-linking a protected file, reading another agent's workspace or the home
# directory, starting an application with `open -a`), and file tools (write, read, create and
# list in the project; a write through a link to .git refused). Prints PASS or FAIL per check and
# exits non-zero if any failed.
#
# Paths in the commands are computed at run time (g=.gi; "${g}t") so the permission layer, which
# would refuse the plain text first, lets them through to the sandbox: what is checked here is
# the sandbox itself. KEEP=1 keeps the temporary directory.
set -uo pipefail

if [ "$(uname -s)" != Darwin ]; then
  echo "smoke-macos.sh: this is for macOS (uname says $(uname -s))" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
tmp=$(cd "$tmp" && pwd -P) # /var/folders/... is /private/var/folders/...
if [ "${KEEP:-}" = 1 ]; then
  echo "temporary directory: $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
failed=0
pass() { echo "PASS  $1"; }
fail() {
  echo "FAIL  $1"
  [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/      /'
  failed=1
}

# 1. The binary.
if (cd "$repo" && go build -o "$tmp/massgen" .) >"$tmp/build.log" 2>&1; then
  pass "build massgen"
else
  fail "build massgen" "$(cat "$tmp/build.log")"
  exit 1
fi
mg=$tmp/massgen

# The descriptor walk's own tests (internal/safefs), run natively: the macOS system calls
# (O_NOFOLLOW_ANY, renameatx_np, readdir) and the directory-for-link swap race.
if (cd "$repo" && go test -count=1 ./internal/safefs) >"$tmp/safefs.log" 2>&1; then
  pass "safefs tests"
else
  fail "safefs tests" "$(tail -20 "$tmp/safefs.log")"
fi

# 2. The demo: two scripted agents, the winner delivers hello.html into the context path.
run=$tmp/run
mkdir -p "$run"
if (cd "$run" && "$mg" --config @examples/demo/two_agents_deliver --yes --context . "Make a hello page") >"$tmp/demo.log" 2>&1 &&
  [ -f "$run/hello.html" ]; then
  pass "demo delivers hello.html"
else
  fail "demo delivers hello.html" "$(tail -20 "$tmp/demo.log")"
fi

# 3. Commands under the sandbox, as the demo's final agent with a writable project.
proj=$tmp/proj
mkdir -p "$proj/.git" "$proj/src"
printf '[core]\n' >"$proj/.git/config"
printf 'package main\n' >"$proj/src/main.go"

# call COMMAND: runs it as builder's final-presentation command; sets $out to the JSON result.
call() {
  out=$(cd "$run" && "$mg" tools call --config @examples/demo/two_agents_deliver --agent builder --final \
    --context "$proj:write" execute_command "$(printf '{"command": %s}' "$(json "$1")")" 2>&1)
}
json() { # a JSON string for $1
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
sandboxed() { printf '%s' "$out" | grep -Eq '"sandbox": *"seatbelt"'; }
succeeded() { printf '%s' "$out" | grep -Eq '"exit_code": *0[,}[:space:]]'; }

must_succeed() { # name, command
  call "$2"
  if sandboxed && succeeded; then pass "$1"; else fail "$1" "$out"; fi
}
must_fail() { # name, command: must run under Seatbelt and fail there
  call "$2"
  if ! sandboxed; then
    fail "$1 (did not reach the sandbox)" "$out"
  elif succeeded; then
    fail "$1 (it succeeded)" "$out"
  else
    pass "$1"
  fi
}

must_succeed "write in the workspace" 'echo hi > smoke.txt && cat smoke.txt'
must_succeed "write in the project, next to .git" "echo hi > '$proj/new.txt' && cat '$proj/new.txt'"
must_fail "write a protected path" "g=.gi; echo evil >> '$proj'/\${g}t/config"
must_fail "write it in capitals" "g=.GI; echo evil >> '$proj'/\${g}T/config"
must_fail "rename the project into the workspace" "p='$proj'; mv \"\$p\" stolen"
must_fail "create a .git in the project" "n=git; mkdir '$proj'/src/.\$n"
must_fail "hard-link a protected file" "g=.gi; ln '$proj'/\${g}t/config '$proj'/src/c"
if [ -f "$run/.massgen/workspaces/workspace2/notes.md" ]; then
  must_fail "read another agent's workspace" 'd=workspace; cat ../${d}2/notes.md'
else
  echo "SKIP  read another agent's workspace (the demo left no workspace2/notes.md)"
fi
must_fail "read the home directory" "u=\$(id -un); ls /Users/\$u"
must_fail "setuid bit" 'touch s && chmod u+s s'
# 4. File tools (the descriptor walk), as the same final agent.
tool() { # name, JSON arguments: sets $out to the result
  out=$(cd "$run" && "$mg" tools call --config @examples/demo/two_agents_deliver --agent builder --final \
    --context "$proj:write" "$1" "$2" 2>&1)
}
tool write_file "$(printf '{"path": %s, "content": "hi"}' "$(json "$proj/src/ft.txt")")"
if [ "$(cat "$proj/src/ft.txt" 2>/dev/null)" = hi ]; then pass "write_file in the project"; else fail "write_file in the project" "$out"; fi
tool read_file "$(printf '{"path": %s}' "$(json "$proj/src/ft.txt")")"
if printf '%s' "$out" | grep -q '"content": *"hi"'; then pass "read_file"; else fail "read_file" "$out"; fi
tool create_directory "$(printf '{"path": %s}' "$(json "$proj/src/a/b")")"
if [ -d "$proj/src/a/b" ]; then pass "create_directory"; else fail "create_directory" "$out"; fi
tool list_directory "$(printf '{"path": %s}' "$(json "$proj/src")")"
if printf '%s' "$out" | grep -q 'ft.txt'; then pass "list_directory"; else fail "list_directory" "$out"; fi
ln -s "$proj/.git" "$proj/src/lnk"
tool write_file "$(printf '{"path": %s, "content": "evil"}' "$(json "$proj/src/lnk/config")")"
if printf '%s' "$out" | grep -q '"denied": *true'; then pass "write_file through a link to .git refused"; else fail "write_file through a link to .git refused" "$out"; fi

if [ "$(cat "$proj/.git/config")" = "[core]" ]; then
  pass "protected file unchanged"
else
  fail "protected file unchanged" "$(cat "$proj/.git/config")"
fi

# open -a must neither succeed nor start the application outside the sandbox.
if pgrep -x Calculator >/dev/null; then
  echo "SKIP  open -a Calculator (Calculator is already running: quit it to run this check)"
else
  must_fail "open -a Calculator" 'o=open; $o -a Calculator'
  sleep 2 # give a wrongly started application time to appear
  if pgrep -x Calculator >/dev/null; then
    fail "Calculator not started"
    pkill -x Calculator
  else
    pass "Calculator not started"
  fi
fi

[ "$failed" = 0 ] && echo "all checks passed"
exit "$failed"
