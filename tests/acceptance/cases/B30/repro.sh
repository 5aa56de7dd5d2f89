#!/bin/sh
# B30: execvp/execlp/execvpe as glibc runs them (ENOEXEC fallback, empty PATH entries).
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B30}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
printf 'echo "plain $0 $#"\n' > plain; chmod +x plain
printf '#!/bin/sh\necho "hashbang $0"\n' > hashbang; chmod +x hashbang
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
