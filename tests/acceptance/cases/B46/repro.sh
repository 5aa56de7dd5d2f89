#!/bin/sh
# B46: gettext catalogs below directories bound by bindtextdomain; trace mode, then fenced
# with <W>/hid denied: its messages stay untranslated, as without <W>/hid.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B46}
rm -rf "$W" && mkdir -p "$W/tr/xx/LC_MESSAGES" "$W/hid/xx/LC_MESSAGES" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
printf 'msgid "hello"\nmsgstr "bonjour"\nmsgid "file"\nmsgid_plural "files"\nmsgstr[0] "fichier"\nmsgstr[1] "fichiers"\n' > tr.po
printf 'msgid "hello"\nmsgstr "salut"\nmsgid "bye"\nmsgstr "adieu"\n' > hid.po
msgfmt -o tr/xx/LC_MESSAGES/b46.mo tr.po && msgfmt -o hid/xx/LC_MESSAGES/b46x.mo hid.po
export LANG=C.UTF-8 LANGUAGE=xx
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/hid\nallow any /\n' "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy policy -- ./repro | sed 's/^/fenced: /'
else	# what the program prints when hid/ is not there
	mv hid gone && ./repro | sed 's/^/fenced: /' && mv gone hid
fi
