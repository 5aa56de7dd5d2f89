#!/bin/sh
# B41: files read by nss and the resolver for the network databases.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B41}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
