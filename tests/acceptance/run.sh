#!/bin/bash
# tests/acceptance/run.sh - run the acceptance cases under sandtrace.
#
#   tests/acceptance/run.sh [--native] [BUILD_DIR] [Bxx ...]
#
# For each case Bxx (default: every cases/B*): WORK=$WORKROOT/Bxx, SHIM_RUN=shimrun (each call
# runs `sandtrace run --report <unique>.jsonl` with the CLI from BUILD_DIR, default build under
# the repository root), for B26 SHIM_KILL_DAEMON=killdaemon; repro.sh runs exactly as
# run_all.sh runs it (timeout 600 s, stdout compared line by line with stdout.expected as
# extended regexes, exit status 0). Then every report of the case is listed with
# `sandtrace report --list`, merged, converted by list2log.py and checked by check_trace.py
# against trace.expected. A case passes when both checks pass.
#
# expected-failures lists case ids with a reason ("B12 reason..."): such a case that fails
# is XFAIL (counted as passed); one that passes is an UNEXPECTED PASS (counted as failed, so
# the list gets trimmed).
#
# --native: SHIM_RUN empty, no trace check, expected-failures ignored (checks the cases and
# the machine, not sandtrace).
#
# Environment: RESULTS (default /tmp/sandtrace-acceptance/results/<label>), WORKROOT (default
# /tmp/sandtrace-acceptance/work), SHIMRUN_OPTS (extra `sandtrace run` options), CASE_TIMEOUT
# (default 600).
# Last line: "acceptance: N passed, N failed"; exit status 1 if anything failed.
set -uo pipefail

A=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$A/../.." && pwd)
native=0
if [ "${1:-}" = --native ]; then native=1; shift; fi
case ${1:-} in
  B[0-9]*|'') BD=${BUILD_DIR:-build} ;;
  *) BD=$1; shift ;;
esac
case $BD in /*) ;; *) BD=$ROOT/$BD ;; esac
ids=${*:-$(cd "$A/cases" && ls -d B*)}

label=traced; [ $native = 1 ] && label=native
R=${RESULTS:-/tmp/sandtrace-acceptance/results/$label}
WR=${WORKROOT:-/tmp/sandtrace-acceptance/work}
mkdir -p "$R" "$WR"
R=$(cd "$R" && pwd)

SANDTRACE_BIN=$BD/daemon/sandtrace
if [ $native = 0 ] && [ ! -x "$SANDTRACE_BIN" ]; then
  echo "acceptance: $SANDTRACE_BIN is not built: every case fails" >&2
fi
export SANDTRACE_BIN

# expected failures: "Bxx reason..." lines, # comments
declare -A xfail=()
if [ $native = 0 ] && [ -f "$A/expected-failures" ]; then
  while read -r id reason; do
    case $id in ''|'#'*) continue ;; esac
    xfail[$id]=${reason:-no reason given}
  done < "$A/expected-failures"
fi

# stdout check, exactly as run_all.sh does it
stdout_ok() {   # stdout_ok EXPECTED OUT
  local n i re
  n=$(grep -c '' "$1")
  [ "$(grep -c '' "$2")" = "$n" ] || return 1
  i=0
  while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    re=$(sed -n "${i}p" "$1")
    sed -n "${i}p" "$2" | grep -Eqx -- "$re" || return 1
  done
}

# end daemons a case left behind (pidfiles of our own shimrun invocations)
reap() {
  local pf pid comm
  for pf in "$1"/*.pid; do
    [ -s "$pf" ] || continue
    pid=$(cat "$pf" 2>/dev/null); case $pid in ''|*[!0-9]*) continue ;; esac
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
    case $comm in sandtrace*)
      echo "  (daemon $pid still running after the case: killed)"
      kill -9 "$pid" 2>/dev/null ;;
    esac
  done
}

pass=0; fail=0
for id in $ids; do
  C=$A/cases/$id
  [ -x "$C/repro.sh" ] || { echo "FAIL $id (no such case)"; fail=$((fail + 1)); continue; }
  WORK=$WR/$id; export WORK
  RD=$R/$id.reports; rm -rf "$RD"; mkdir -p "$RD"
  out=$R/$id.out err=$R/$id.err
  if [ $native = 1 ]; then
    unset SHIM_KILL_DAEMON; export SHIM_RUN=
  else
    export SHIM_RUN=$A/shimrun SHIMRUN_REPORT_DIR=$RD
    if [ "$id" = B26 ]; then export SHIM_KILL_DAEMON=$A/killdaemon; else unset SHIM_KILL_DAEMON; fi
  fi
  t0=$(date +%s)
  timeout -k 5 "${CASE_TIMEOUT:-600}" "$C/repro.sh" > "$out" 2> "$err"; rc=$?
  secs=$(( $(date +%s) - t0 ))
  [ $native = 1 ] || reap "$RD"

  why=()
  if stdout_ok "$C/stdout.expected" "$out"; then so=1; else so=0; why+=("stdout differs"); fi
  [ $rc = 0 ] || why+=("rc=$rc")

  tr=1
  if [ $native = 0 ]; then
    list=$R/$id.list; log=$R/$id.log; : > "$list"
    nrep=0
    for rep in "$RD"/*.jsonl; do
      [ -e "$rep" ] || continue
      nrep=$((nrep + 1))
      if ! "$SANDTRACE_BIN" report --list "$rep" >> "$list" 2>> "$R/$id.list.err"; then
        tr=0; why+=("report --list failed on $(basename "$rep")")
      fi
    done
    [ $nrep -gt 0 ] || { tr=0; why+=("no report written"); }
    python3 "$A/list2log.py" "$list" > "$log" 2>> "$R/$id.list.err" || why+=("malformed --list lines")
    if python3 "$A/check_trace.py" "$C/trace.expected" "$WORK" "$log" > "$R/$id.trace" 2>&1; then :; else
      tr=0; why+=("trace: $(tail -1 "$R/$id.trace")")
    fi
  fi

  ok=0; [ $so = 1 ] && [ $rc = 0 ] && [ $tr = 1 ] && ok=1
  detail="${secs}s"; [ ${#why[@]} -gt 0 ] && detail="$(IFS=';'; echo "${why[*]}"), ${secs}s"
  if [ -n "${xfail[$id]:-}" ]; then
    if [ $ok = 1 ]; then
      fail=$((fail + 1)); echo "UNEXPECTED PASS $id: remove it from expected-failures"
    else
      pass=$((pass + 1)); echo "XFAIL $id (${xfail[$id]}) [$detail]"
    fi
  elif [ $ok = 1 ]; then
    pass=$((pass + 1)); echo "PASS $id [$detail]"
  else
    fail=$((fail + 1)); echo "FAIL $id [$detail] see $R/$id.{out,err,trace}"
    if [ -n "${CI:-}" ] || [ -n "${ACCEPTANCE_VERBOSE:-}" ]; then
      sed 's/^/    out| /' "$out" | head -15
      sed 's/^/    err| /' "$err" | head -15
      [ -f "$R/$id.trace" ] && grep MISSING "$R/$id.trace" | head -15 | sed 's/^/    /'
    fi
  fi
done
echo "acceptance: $pass passed, $fail failed"
[ $fail = 0 ]
