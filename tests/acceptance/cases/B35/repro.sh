#!/bin/sh
# B35: files read by nss for the user and group databases.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B35}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
rc=0; ${SHIM_RUN:-} ls -ln / > /dev/null || rc=$?; echo "ls=$rc"
