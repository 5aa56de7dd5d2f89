#!/bin/sh
# B47: files libc opens by its internal calls in public functions: the utmp and wtmp files
# (utmpname, updwtmp and the utmp calls), /etc/shells, /etc/fstab, /etc/ttys, /dev/tty,
# /dev/ptmx, /proc/loadavg, /sys's cpu list, the default utmp; trace mode, then fenced with
# <W>/hid and the fixed files denied: libc answers as when they are not there.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B47}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
fresh() {	# empty visible files, one entry in each hidden one
	rm -rf hid && mkdir hid && : > vis.utmp && : > vis.wtmp && : > hid/h.utmp && : > hid/h.wtmp
	./repro prepare
	printf '%%Y-%%m-%%d\n' > datemsk && cp datemsk hid/datemsk
}
fresh
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro files || rc=$?
echo "exit=$rc"
echo "vis.wtmp: $(stat -c %s vis.wtmp)"
# no controlling terminal (setsid): getpass reads stdin, as it would in a build
rc=0; echo secret | timeout -k 5 30 setsid -w ${SHIM_RUN:-} ./repro fixed 2>/dev/null || rc=$?
echo "exit=$rc"
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro resolver || rc=$?
echo "exit=$rc"
# logwtmp, login and logout write the system's wtmp and utmp: in a mount namespace, where
# a tmpfs stands for /run (/var/run/utmp) and /var/log
sysrun() {	# sysrun MODE PREFIX...: MODE made: files there, or gone (the tmpfs empty)
	mode=$1; shift
	unshare -m sh -c '
		mount -t tmpfs b47 /run && mount -t tmpfs b47 /var/log || exit 9
		[ "$0" = gone ] || { : > /run/utmp; : > /var/log/wtmp; }
		"$@" ./repro system
		echo "utmp=$(stat -c %s /run/utmp 2>/dev/null || echo 0)" \
			"wtmp=$(stat -c %s /var/log/wtmp 2>/dev/null || echo 0)"' "$mode" "$@"
}
if unshare -m true 2>/dev/null; then
	rc=0; sysrun there timeout -k 5 30 setsid -w ${SHIM_RUN:-} || rc=$?
	echo "exit=$rc"
	if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
		printf 'deny any /run/utmp\ndeny any /var/log/wtmp\nallow any /\n' > policy
		sysrun there timeout -k 5 30 setsid -w "$SANDTRACE_BIN" run --fence --policy "$W/policy" -- |
			sed 's/^/fenced: /'
	else
		sysrun gone | sed 's/^/fenced: /'
	fi
else	# no mount namespace here: what the case prints where there is one
	printf '%s\n' 'logout: 0' 'utmp=384 wtmp=768' 'exit=0' 'fenced: logout: 0' 'fenced: utmp=0 wtmp=0'
fi
fresh
cp hid/h.utmp h.utmp.0 && cp hid/h.wtmp h.wtmp.0
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/hid\nallow any /\n' "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy policy --report kinds.jsonl -- \
		./repro files | sed 's/^/fenced: /'
	# the kinds: utmp reads and writes, wtmp writes (the hidden ones refused)
	"$SANDTRACE_BIN" report --list kinds.jsonl | grep -F "$W/" | grep -E "utmp|wtmp" | sed "s|$W/||" | LC_ALL=C sort -u |
		sed 's/^/kind: /'
	# the user database looked up inside other functions, one process each
	for kf in glob:nsswitch.conf wordexp:nsswitch.conf cuserid:nsswitch.conf getpw:nsswitch.conf \
		getpwent_r:passwd getspent:shadow getsgnam:gshadow getaliasbyname:aliases \
		gethostent_r:hosts getrpcbyname_r:rpc; do
		k=${kf%%:*}
		"$SANDTRACE_BIN" run --report "users-$k.jsonl" -- ./repro users $k > /dev/null
		"$SANDTRACE_BIN" report --list "users-$k.jsonl" | grep -q "	/etc/${kf#*:}\$" &&
			echo "users $k: recorded" || echo "users $k: not recorded"
	done
	printf 'deny any /etc/shells\ndeny any /etc/fstab\ndeny any /etc/ttys\ndeny any /proc/loadavg\n' > policy
	printf 'deny any /dev/ptmx\ndeny any /dev/tty\nallow any /\n' >> policy
	echo secret | timeout -k 5 30 setsid -w "$SANDTRACE_BIN" run --fence --policy policy -- \
		./repro fixed 2>/dev/null | sed 's/^/fenced: /'
else	# what the program prints when hid/ is not there; glibc 2.36's answers without the
	# fixed files (misc/getusershell.c's two shells, setfsent 0, getloadavg -1, ...)
	mv hid gone && ./repro files | sed 's/^/fenced: /' && mv gone hid
	printf 'kind: %s\n' 'R	hid/h.utmp' 'R	vis.utmp' 'W	hid/h.utmp' 'W	hid/h.wtmp' 'W	vis.utmp' 'W	vis.wtmp'
	printf 'users %s: recorded\n' glob wordexp cuserid getpw getpwent_r getspent getsgnam \
		getaliasbyname gethostent_r getrpcbyname_r
	printf 'fenced: %s\n' 'shell 0: /bin/sh' 'shell 1: /bin/csh' \
		'setfsent: 0 No such file or directory' 'getfsent: none' 'getfsspec: none' \
		'getttyent: none' 'getloadavg: -1 No such file or directory' \
		'posix_openpt: No such file or directory' 'getpt: No such file or directory' \
		'openpty: No such file or directory' 'forkpty: No such file or directory' 'getpass: secret' 'getpass null: ' \
		'get_nprocs: ok'
fi
cmp -s hid/h.utmp h.utmp.0 && cmp -s hid/h.wtmp h.wtmp.0 && echo "hidden files unchanged" ||
	echo "hidden files CHANGED"
