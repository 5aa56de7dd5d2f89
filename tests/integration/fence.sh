#!/bin/sh
# tests/integration/fence.sh - a sandbox hides what it denies (ENOENT), refuses writes into visible places (EACCES), and reports violations.
. "$(dirname "$0")/lib.sh"
mkdir -p "$W/in" "$W/out"
echo secret > "$W/out/secret"
echo mine > "$W/in/mine"
cat > "$W/policy" <<P
# only the build tree and the system
allow any ${W}/in
allow read ${W}/ro
allow read,exec /usr
P
# a class list is not in the grammar: this policy must be refused with file and line
err=$("$ST" run --policy "$W/policy" -- true 2>&1); rc=$?
check "bad class refused" test $rc -ne 0
check "error names file:line" sh -c "echo \"$err\" | grep -q '$W/policy:4'"
cat > "$W/policy" <<P
# only the build tree and the system
allow any \${SANDBOX_IN}
allow read ${W}/ro
allow read ${B}/tests/drivers
allow exec ${B}/tests/drivers
$(system_rules)
P
mkdir -p "$W/ro"; echo r > "$W/ro/f"
export SANDBOX_IN="$W/in"
cd "$W/in"
R=$W/r.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- "$DRV" open-r "$W/out/secret")
check "denied read is ENOENT" test "$out" = ENOENT
check "violation reported" sh -c "grep -q '\"type\":\"violation\"' $R"
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" stat "$W/out/secret")
check "denied stat is ENOENT" test "$out" = ENOENT
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-creat "$W/out/new")
check "O_CREAT of hidden name is ENOENT" test "$out" = ENOENT
check "nothing created outside" test ! -e "$W/out/new"
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-creat "$W/ro/new")
check "write into visible read-only place is EACCES" test "$out" = EACCES
# access(W_OK) answers what a write would get: EACCES where the sandbox lets the
# program read but not write, ok where it may write (no violation for asking)
R7=$W/access-w.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R7" -- "$DRV" access-w "$W/ro/f")
check "access(W_OK) of a read-only file is EACCES (got: $out)" test "$out" = EACCES
check "access(W_OK): no violation" test "$(summary_field "$R7" violations)" = 0
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" access-w "$W/in/mine")
check "access(W_OK) of a writable file is ok (got: $out)" test "$out" = ok
# a descriptor held read-only (or O_PATH) opened again for writing through
# /proc/self/fd/N or /dev/fd/N is a new write of the file, judged where it is
# (a reopen with no more access than the descriptor has is never a violation)
for call in reopen-w reopen-w-opath; do
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $call "$W/ro/f")
	check "$call of a read-only file is EACCES (got: $out)" test "$out" = EACCES
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $call "$W/in/mine")
	check "$call of a writable file is ok (got: $out)" test "$out" = ok
done
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-w /dev/fd/3 3>>"$W/ro/f")
check "open-w of /dev/fd/N held for writing (opened before the run) is ok (got: $out)" test "$out" = ok
# an O_PATH open is a query whatever else its flags say (the kernel ignores the access
# mode, O_CREAT and O_TRUNC with O_PATH): allowed on a read-only file, recorded as a query,
# and a missing name is a failed lookup, not a write
R8=$W/open-path-w.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R8" -- "$DRV" open-path-w "$W/ro/f")
check "open(O_PATH|O_RDWR|O_CREAT|O_TRUNC) of a read-only file is ok (got: $out)" test "$out" = ok
check "... recorded as a query, not a write" eval "has Q '$W/ro/f' '$R8' && ! has W '$W/ro/f' '$R8'"
check "... and the file is not truncated" test -s "$W/ro/f"
R8=$W/open-path-w-missing.jsonl
out=$("$ST" run --report "$R8" -- "$DRV" open-path-w "$W/in/no-such")
check "open(O_PATH|O_CREAT) of a missing name: ENOENT, a failed lookup (got: $out)" \
	eval "[ '$out' = ENOENT ] && has N '$W/in/no-such' '$R8' && ! has W '$W/in/no-such' '$R8'"
# a metadata write through a descriptor opened for reading is a write too
chmod 644 "$W/ro/f"
for call in fd-fchmod fd-fchown fd-futimes fd-fsetxattr; do
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $call "$W/ro/f")
	check "$call on a read-only file is EACCES" test "$out" = EACCES
done
check "fd-fchmod: mode unchanged" test "$(stat -c %a "$W/ro/f")" = 644
# ... but a descriptor open O_PATH takes none of these writes (the kernel's EBADF, the
# file untouched): the fence gives the same, not a refusal's EACCES
for call in fchmod fchown futimes futimens fsetxattr fremovexattr sys-utimensat \
	ioctl-setflags sys-ioctl-setflags; do
	want=$("$DRV" fd-opath-$call "$W/ro/f")
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" fd-opath-$call "$W/ro/f")
	check "fd-opath-$call on a read-only file: $want as untraced (got: $out)" \
		test "$out" = "$want" -a "$want" != ok
done
check "fd-opath: mode unchanged" test "$(stat -c %a "$W/ro/f")" = 644
# fopen's mode as glibc reads it: a '+' in the six characters after the first opens for
# writing (refused on a read-only file), one further on is ignored (a read, allowed)
for mode in r+ rb+ rbe+ rbbbbb+ rbbbbbb+ "r,ccs=UTF-8+"; do
	want=$("$DRV" fopen-as "$W/ro/f" "$mode")
	[ "$want" = ok ] && want=$(case $mode in r,*|rbbbbbb+) echo ok;; *) echo EACCES;; esac)
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" fopen-as "$W/ro/f" "$mode")
	check "fopen mode $mode of a read-only file: $want (got: $out)" test "$out" = "$want"
done
# ... and the file attribute writes of ioctl (chattr opens the file O_RDONLY): refused,
# the flags unchanged, where the file system has them (the untraced call works on a file
# of the run's own)
: > "$W/in/flags"
if [ "$("$DRV" fd-ioctl-setflags "$W/in/flags")" = ok ]; then
	for call in fd-ioctl-setflags fd-sys-ioctl-setflags fd-ioctl-fssetxattr; do
		out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $call "$W/ro/f")
		check "$call on a read-only file is EACCES (got: $out)" test "$out" = EACCES
		check "$call: the flags unchanged" eval "! lsattr -d '$W/ro/f' | cut -d' ' -f1 | grep -q d"
		out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $call "$W/in/mine")
		check "$call on a writable file is ok (got: $out)" test "$out" = ok
	done
	R9=$W/ioctl-setflags.jsonl
	out=$("$ST" run --report "$R9" -- "$DRV" fd-ioctl-setflags "$W/ro/f")
	check "fd-ioctl-setflags traced: recorded as a write (got: $out)" has W "$W/ro/f" "$R9"
	chattr -d "$W/ro/f" "$W/in/mine" 2>/dev/null
fi
# the same through Linux 6.13's *xattrat with a null name and AT_EMPTY_PATH (the
# descriptor's file; unjudged, and not recorded, the xattr was set); where the kernel has them
setfattr_py() { python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.st", b"0")' "$1"; }
if out=$("$DRV" fd-setxattrat-null "$W/ro/f"); [ "$out" != ENOSYS ]; then
	for call in fd-setxattrat-null fd-removexattrat-null; do
		setfattr_py "$W/ro/f"
		out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $call "$W/ro/f")
		check "$call on a read-only file is EACCES (got: $out)" test "$out" = EACCES
		check "$call: the xattr unchanged" python3 -c 'import os,sys
sys.exit(os.getxattr(sys.argv[1], "user.st") != b"0")' "$W/ro/f"
	done
	R9=$W/setxattrat-null.jsonl
	out=$("$ST" run --report "$R9" -- "$DRV" fd-setxattrat-null "$W/ro/f")
	check "fd-setxattrat-null traced: recorded as a write (got: $out)" has W "$W/ro/f" "$R9"
	python3 -c 'import os,sys; os.removexattr(sys.argv[1], "user.st")' "$W/ro/f"
fi
# names libc picks by a stat of its own: $PWD (get_current_dir_name), TMPDIR and
# tempnam's directory, /tmp (tmpnam): a hidden one is passed over as a missing one
# (getcwd's name, the next directory, none), where unjudged it was given back, which
# told that it is there
ln -s "$W/in" "$W/out/here"
out=$(PWD=$W/out/here TMPDIR=$W/out "$DRV" tmpnames - "$W/out" | tr '\n' ' ')
check "tmpnames untraced: the hidden names taken (got: $out)" \
	test "$out" = "cwd=$W/out/here tempnam=$W/out tmpnam=ok tmpnam_r=ok "
out=$(PWD=$W/out/here TMPDIR=$W/out "$ST" run --fence --policy "$W/policy" -- \
	"$DRV" tmpnames - "$W/in" | tr '\n' ' ')
check "tmpnames fenced: a hidden PWD and TMPDIR passed over (got: $out)" \
	test "$out" = "cwd=$W/in tempnam=$W/in tmpnam=ok tmpnam_r=ok "
out=$(PWD=$W/out/here "$ST" run --fence --policy "$W/policy" -- \
	"$DRV" tmpnames - "$W/out" | tr '\n' ' ')
check "tmpnames fenced: a hidden tempnam directory passed over for /tmp (got: $out)" \
	test "$out" = "cwd=$W/in tempnam=/tmp tmpnam=ok tmpnam_r=ok "
# /tmp itself hidden (the run's own places below it allowed before)
{ cat "$W/policy"; echo "deny read /tmp"; } > "$W/policy-notmp"
out=$("$ST" run --fence --policy "$W/policy-notmp" -- "$DRV" tmpnames - "$W/in" | tr '\n' ' ')
check "tmpnames fenced, /tmp hidden: tmpnam finds none, ENOENT (got: $out)" \
	test "$out" = "cwd=$W/in tempnam=$W/in tmpnam=ENOENT tmpnam_r=ENOENT "
rm "$W/out/here"
R10=$W/tmpnames.jsonl
PWD=$W/out/here "$ST" run --report "$R10" -- "$DRV" tmpnames - "$W/ro" > /dev/null
check "tmpnames traced: tempnam's directory recorded as a query" has Q "$W/ro" "$R10"
check "tmpnames traced: a missing PWD recorded as a failed lookup" has N "$W/out/here" "$R10"
# shm_open and sem_open create files in /dev/shm, readable only here: refused as
# any other write there (EACCES), and nothing is made
shm=st-fence-$$
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" shm-open "/$shm")
check "shm_open of a new name under /dev/shm (read only) is EACCES" test "$out" = EACCES
check "shm_open: nothing made" test ! -e "/dev/shm/$shm"
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" sem-open "/$shm")
check "sem_open of a new name under /dev/shm (read only) is EACCES" test "$out" = EACCES
check "sem_open: nothing made" test ! -e "/dev/shm/sem.$shm"
rm -f "/dev/shm/$shm" "/dev/shm/sem.$shm"
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-r "$W/in/mine")
check "allowed read works" test "$out" = ok
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-creat "$W/in/made")
check "allowed write works" test "$out" = ok
# a symlink inside the sandbox must not reach a denied target
ln -s "$W/out/secret" "$W/in/esc"
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-r "$W/in/esc")
check "symlink escape denied" test "$out" = ENOENT
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" lstat "$W/in/esc")
check "lstat of the link itself allowed" test "$out" = ok
# AT_EMPTY_PATH on an O_PATH|O_NOFOLLOW descriptor of that link acts on the link, as
# lstat does: allowed (fstatat, statx, fchownat), not judged by the denied target
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" opath-link-empty "$W/in/esc")
check "AT_EMPTY_PATH calls on a descriptor of the link itself allowed (got: $out)" test "$out" = ok
# a file the process holds open (descriptor 3, opened before the run) queried by an empty
# name with AT_EMPTY_PATH is fstat of that descriptor: never a violation, with or without
# the arena; and that answer is not kept for the file's name, which stays hidden
for mode in "" --no-cache; do
	R6=$W/held-empty$mode.jsonl
	out=$("$ST" run $mode --fence --policy "$W/policy" --report "$R6" -- "$DRV" held-empty-queries "$W/out/secret" 3<"$W/out/secret" | tr '\n' ' ')
	check "AT_EMPTY_PATH queries of a held descriptor of a denied file ok, its name still hidden ${mode:+($mode) }(got: $out)" test "$out" = "ok ENOENT "
	check "... recorded as allowed queries of the file" \
		grep -q "\"kind\":\"Q\",\"path\":\"$W/out/secret\",.*\"verdict\":\"allow\"" "$R6"
done
# a #! script in the sandbox whose interpreter is outside it: the interpreter is an exec
# of its own, hidden as a missing one (ENOENT), whether run by execve or posix_spawn
mkdir -p "$W/out/bin" "$W/in/bin" "$W/in/bin2"
cp "$DRV" "$W/out/bin/interp"
printf '#!%s\n' "$W/out/bin/interp" > "$W/in/bin/viaout"
chmod +x "$W/in/bin/viaout"
for how in exec spawn; do
	R5=$W/interp-$how.jsonl
	out=$("$ST" run --fence --policy "$W/policy" --report "$R5" -- "$DRV" $how "$W/in/bin/viaout")
	check "$how of a script whose interpreter is denied: ENOENT (got: $out)" test "$out" = ENOENT
	check "$how: the interpreter's exec is a violation" \
		sh -c "grep '\"type\":\"violation\"' '$R5' | grep -qF '\"path\":\"$W/out/bin/interp\"'"
done
# a PATH search passes over a program the sandbox hides and takes the next one, in
# posix_spawnp as in execvp (glibc's own search would take the hidden one)
printf '#!/bin/sh\necho hidden-one\n' > "$W/out/bin/tool"
printf '#!/bin/sh\necho visible-one\n' > "$W/in/bin2/tool"
chmod +x "$W/out/bin/tool" "$W/in/bin2/tool"
for how in spawnp execvp; do
	out=$(PATH="$W/out/bin:$W/in/bin2:/usr/bin:/bin" "$ST" run --fence --policy "$W/policy" -- "$DRV" $how tool | tr '\n' ' ')
	check "$how: a hidden first PATH candidate is passed over (got: $out)" \
		test "$out" = "visible-one ok " -o "$out" = "visible-one "
done
out=$(PATH="$W/out/bin:/usr/bin:/bin" "$ST" run --fence --policy "$W/policy" -- "$DRV" spawnp tool)
check "spawnp: only a hidden candidate: ENOENT (got: $out)" test "$out" = ENOENT
# Records the shim makes without judging the name (a PATH candidate that is not there,
# an exec of a missing program, a library name searched along LD_LIBRARY_PATH) carry the
# policy's verdict on the path: a miss in a hidden directory is "deny", never "allow";
# nothing was refused, so it is no violation and --strict still exits 0
# (docs/INTERNALS.md, "Report")
mkdir -p "$W/out/nobin"
# verdict_of REPORT KIND PATH: the verdict of that access record; and whether a violation
# names PATH ("deny+violation")
verdict_of() {
	python3 -c 'import json,sys
v=""; viol=False
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("path")!=sys.argv[3]: continue
    if r["type"]=="access" and r["kind"]==sys.argv[2]: v=r["verdict"]
    if r["type"]=="violation": viol=True
print(v+("+violation" if viol else ""))' "$@"
}
for mode in "" --no-cache; do
	for how in execvp spawnp; do
		R5=$W/probe-$how$mode.jsonl
		out=$(PATH="$W/out/nobin:/usr/bin:/bin" "$ST" run $mode --strict --fence --policy "$W/policy" --report "$R5" -- "$DRV" $how no-such-prog)
		rc=$?
		check "$how ${mode:+($mode) }of a name not found: ENOENT, --strict exits 0 (got: $out, $rc)" \
			test "$out" = ENOENT -a $rc = 0
		v=$(verdict_of "$R5" N "$W/out/nobin/no-such-prog")
		check "... its candidate in a hidden directory: verdict deny, no violation (got: $v)" test "$v" = deny
		v=$(verdict_of "$R5" N /usr/bin/no-such-prog)
		check "... its candidate in an allowed directory: verdict allow (got: $v)" test "$v" = allow
	done
	R5=$W/probe-exec$mode.jsonl
	out=$("$ST" run $mode --fence --policy "$W/policy" --report "$R5" -- "$DRV" exec "$W/out/nobin/gone")
	v=$(verdict_of "$R5" N "$W/out/nobin/gone")
	check "exec ${mode:+($mode) }of a missing program in a hidden directory: ENOENT, verdict deny (got: $out, $v)" \
		test "$out" = ENOENT -a "$v" = deny
	R5=$W/probe-dlopen$mode.jsonl
	out=$(LD_LIBRARY_PATH="$W/out/nobin" "$ST" run $mode --fence --policy "$W/policy" --report "$R5" -- "$DRV" dlopen libno-such-st.so)
	v=$(verdict_of "$R5" N "$W/out/nobin/libno-such-st.so")
	check "dlopen ${mode:+($mode) }of a name not found along a hidden directory: verdict deny (got: $out, $v)" \
		test "$v" = deny
done
# a dlopen (dlmopen) of a library the fence hides is refused before the loader sees it,
# and dlerror() says why as glibc's own failure for a missing file does: it said NULL (the
# shim made no dl call), and a program's printf of it crashed or printed "(null)".  The
# library is not loaded (its constructor would print), and the message is given once
printf '#include <stdio.h>\n__attribute__((constructor)) static void c(void) { puts("LOADED"); }\nint hid_f(void) { return 1; }\n' > "$W/hid.c"
if cc -shared -fPIC -o "$W/out/libhid.so" "$W/hid.c"; then
	for how in "" ns; do
		for mode in "" --no-cache; do
			out=$(LC_ALL=C "$ST" run $mode --fence --policy "$W/policy" -- "$DRV" dlerror-text "$W/out/libhid.so" $how)
			check "dlopen${how:+ ($how)}${mode:+ ($mode)} of a hidden library: dlerror() as for a missing file (got: $out)" \
				test "$out" = "$W/out/libhid.so: cannot open shared object file: No such file or directory|(null)"
		done
		# a name that starts from the cwd keeps its spelling
		out=$(cd "$W" && LC_ALL=C "$ST" run --fence --policy "$W/policy" -- "$DRV" dlerror-text out/libhid.so $how)
		check "dlopen${how:+ ($how)} of a hidden relative name: its spelling in the message (got: $out)" \
			test "$out" = "out/libhid.so: cannot open shared object file: No such file or directory|(null)"
		# a missing library the fence shows: glibc's own message, as it was
		out=$(LC_ALL=C "$ST" run --fence --policy "$W/policy" -- "$DRV" dlerror-text "$W/in/nothere.so" $how)
		check "dlopen${how:+ ($how)} of a missing visible library: glibc's message, untouched (got: $out)" \
			test "$out" = "$W/in/nothere.so: cannot open shared object file: No such file or directory|(null)"
	done
else
	bad "cc: the hidden library could not be built"
fi
# what a dlopen (dlmopen) brings along, its DT_NEEDED, the loader finds and opens inside ld.so,
# where no wrapper sees the open: a library the fence hides was loaded all the same and
# only reported.  Every object the call adds is judged when it returns: a hidden one
# unloads the call again, which fails as if that library were missing (dlerror() names
# it, as the loader's own message does), and the violation is reported.  For each form the
# shim makes the call itself in: a path, a dependency found along LD_LIBRARY_PATH, one two
# levels down, dlmopen into a new namespace, a bare name (dlopen, dlmopen into the base
# namespace), a bare name whose first place is hidden, a name with $LIB.  An object there
# before the call (the same soname loaded from elsewhere, the program's own DT_NEEDED) is
# not added, so not refused; trace-only, both libraries load and are recorded
mkdir -p "$W/in/dn/alt" "$W/out/dnh"
cat > "$W/in/dn/dnt.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
/* dnt MODE NAME [FIRST]: FIRST dlopen'ed first; MODE open: dlopen(NAME), base: dlmopen
 * into LM_ID_BASE, new: into LM_ID_NEWLM.  "ok" and dna_f(), or dlerror() and whether
 * NAME is still loaded (RTLD_NOLOAD).  MODE threads: 4 threads each dlopen NAME and FIRST
 * (then dlclose them) 200 times; prints "loaded=L failed=F" (L: NAME's calls that
 * returned a handle, F: FIRST's that did not) */
static const char *tn, *tf;
static int tl, tfail;
static void *thr(void *arg)
{
	for (int i = 0; i < 200; i++) {
		void *h = dlopen(tn, RTLD_NOW);
		if (h) {
			__atomic_add_fetch(&tl, 1, __ATOMIC_RELAXED);
			dlclose(h);
		}
		if (!(h = dlopen(tf, RTLD_NOW)))
			__atomic_add_fetch(&tfail, 1, __ATOMIC_RELAXED);
		else
			dlclose(h);
	}
	return arg;
}
int main(int argc, char **argv)
{
	if (!strcmp(argv[1], "threads") && argc > 3) {
		pthread_t t[4];
		tn = argv[2];
		tf = argv[3];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, thr, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("loaded=%d failed=%d\n", tl, tfail);
		return 0;
	}
	if (argc > 3 && !dlopen(argv[3], RTLD_NOW)) {
		printf("first: %s\n", dlerror());
		return 1;
	}
	void *h = !strcmp(argv[1], "open") ? dlopen(argv[2], RTLD_NOW)
		  : dlmopen(strcmp(argv[1], "base") ? LM_ID_NEWLM : LM_ID_BASE, argv[2], RTLD_NOW);
	if (!h) {
		const char *m = dlerror();
		char *said = m ? strdup(m) : NULL; /* the next dl call frees it */
		void *still = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
		printf("%s|%s\n", said ? said : "(null)", still ? "loaded" : "unloaded");
		return 1;
	}
	int (*f)(void) = (int (*)(void))dlsym(h, "dna_f");
	printf("ok %d\n", f ? f() : -1);
	return 0;
}
EOF
printf 'int dnb_f(void) { return 7; }\n' > "$W/in/dn/b.c"
printf 'int dnb_f(void);\nint dna_f(void) { return dnb_f(); }\n' > "$W/in/dn/a.c"
printf 'int dna_f(void);\nint dnd_f(void) { return dna_f(); }\n' > "$W/in/dn/d.c"
printf 'int dne_f(void) { return 5; }\n' > "$W/in/dn/e.c"
dnlib=lib/$(cc -print-multiarch 2>/dev/null)
if cc -shared -fPIC -Wl,-soname,libdnb.so -o "$W/out/dnh/libdnb.so" "$W/in/dn/b.c" &&
	cp "$W/out/dnh/libdnb.so" "$W/in/dn/alt/libdnb.so" &&
	cc -shared -fPIC -o "$W/in/dn/libdna.so" "$W/in/dn/a.c" -L"$W/out/dnh" -ldnb -Wl,-rpath,"$W/out/dnh" &&
	cc -shared -fPIC -o "$W/in/dn/libdnc.so" "$W/in/dn/a.c" -L"$W/out/dnh" -ldnb &&
	cc -shared -fPIC -o "$W/in/dn/libdnd.so" "$W/in/dn/d.c" -L"$W/in/dn" -ldna -Wl,-rpath,"$W/in/dn" &&
	cc -shared -fPIC -o "$W/in/dn/libdne.so" "$W/in/dn/e.c" &&
	cc -pthread -o "$W/in/dn/dnt" "$W/in/dn/dnt.c" -ldl &&
	cc -pthread -o "$W/in/dn/dntpre" "$W/in/dn/dnt.c" -ldl -Wl,--no-as-needed -L"$W/out/dnh" -ldnb -Wl,-rpath,"$W/out/dnh"; then
	cp "$W/in/dn/libdna.so" "$W/out/dnh/libdna.so"
	for d in "$dnlib" lib64 lib; do
		mkdir -p "$W/in/dn/dst/$d" && cp "$W/in/dn/libdna.so" "$W/in/dn/dst/$d/libdna.so"
	done
	hidmsg="libdnb.so: cannot open shared object file: No such file or directory|unloaded"
	n=0
	for t in "open $W/in/dn/libdna.so" "open $W/in/dn/libdnc.so" "open $W/in/dn/libdnd.so" \
		"new $W/in/dn/libdna.so" "open libdna.so" "base libdna.so" "open hid:libdna.so" \
		"open $W/in/dn/dst/\$LIB/libdna.so" "base $W/in/dn/dst/\$LIB/libdna.so"; do
		n=$((n + 1))
		how=${t%% *} name=${t#* }
		llp=
		case $name in
			*/libdnc.so) llp=$W/out/dnh ;; # its libdnb.so: no RUNPATH
			hid:*) llp=$W/out/dnh:$W/in/dn ;; # the hidden copy comes first
			lib*) llp=$W/in/dn ;;
		esac
		for mode in "" --no-cache; do
			R7=$W/dn$n$mode.jsonl
			out=$(LC_ALL=C LD_LIBRARY_PATH=$llp "$ST" run $mode --fence --policy "$W/policy" --report "$R7" -- "$W/in/dn/dnt" $how "${name#hid:}")
			check "dlopen ($t${mode:+, $mode}) of a library needing a hidden one: fails as if it were missing, unloaded (got: $out)" \
				test "$out" = "$hidmsg"
			check "... the hidden library a violation" sh -c "grep '\"type\":\"violation\"' '$R7' | grep -qF '\"path\":\"$W/out/dnh/libdnb.so\"'"
		done
	done
	# ... from several threads at once, with a library that needs nothing: each call
	# judged what another thread's loaded meanwhile (one judged call at a time now): the
	# library needing a hidden one was loaded, not refused, when another thread's call
	# had loaded it and not yet unloaded it, and the other refused for that one's
	for mode in "" --no-cache; do
		out=$(LC_ALL=C "$ST" run $mode --fence --policy "$W/policy" -- "$W/in/dn/dnt" threads "$W/in/dn/libdna.so" "$W/in/dn/libdne.so")
		check "dlopen from 4 threads at once${mode:+ ($mode)}: the library needing a hidden one never loaded, the other always (got: $out)" \
			test "$out" = "loaded=0 failed=0"
	done
	out=$(LC_ALL=C "$ST" run --fence --policy "$W/policy" -- "$W/in/dn/dnt" open "$W/in/dn/libdna.so" "$W/in/dn/alt/libdnb.so")
	check "dlopen of a library whose DT_NEEDED is loaded already from a visible place: loaded (got: $out)" test "$out" = "ok 7"
	out=$(LC_ALL=C "$ST" run --fence --policy "$W/policy" -- "$W/in/dn/dntpre" open "$W/in/dn/libdna.so")
	check "dlopen of a library whose DT_NEEDED the program loaded at its start: loaded, not judged again (got: $out)" test "$out" = "ok 7"
	R7=$W/dn-trace.jsonl
	out=$(LC_ALL=C "$ST" run --report "$R7" -- "$W/in/dn/dnt" open "$W/in/dn/libdna.so")
	check "dlopen of a library needing another, trace only: loaded (got: $out)" test "$out" = "ok 7"
	check "... the library recorded" has R "$W/in/dn/libdna.so" "$R7"
	check "... the library it needs recorded" has R "$W/out/dnh/libdnb.so" "$R7"
else
	bad "cc: the DT_NEEDED libraries could not be built"
fi
# a spawn's file actions move its child (addchdir_np, addfchdir_np): the relative names
# of the actions after them and the relative program are the child's, looked up from
# there; each is judged and recorded there, not in the parent's cwd (where an open was
# recorded and allowed, writing into a place the sandbox keeps read-only, and a relative
# program was missing, so its exec went unjudged and unrecorded)
mkdir -p "$W/in/sp"
for d in "$W/in/sp" "$W/ro"; do
	printf '#!/bin/sh\necho ran\n' > "$d/prog"
	chmod +x "$d/prog"
done
for how in spawn-chdir spawn-fchdir spawnp-chdir; do
	prog=./prog
	[ $how = spawnp-chdir ] && prog=prog
	R6=$W/$how.jsonl
	out=$("$ST" run --report "$R6" -- "$DRV" $how "$W/in/sp" $prog o.txt)
	check "$how: the child ran from its directory (got: $out)" \
		test "$out" = ok -a "$(cat "$W/in/sp/o.txt" 2>/dev/null)" = ran
	check "$how: the program's exec recorded where it is" has X "$W/in/sp/prog" "$R6"
	check "$how: the open recorded where it is" has W "$W/in/sp/o.txt" "$R6"
	check "$how: nothing recorded in the parent's cwd" \
		sh -c "! '$ST' report --list '$R6' | grep -qF '	$W/in/o.txt' &&
			! '$ST' report --list '$R6' | grep -qE '	$W/in/(\\./)?prog\$'"
	out=$("$ST" run --fence --policy "$W/policy" --report "$R6" -- "$DRV" $how "$W/ro" $prog /dev/null)
	check "$how: a program in a read-only place is not run (got: $out)" test "$out" = ENOENT
	check "$how: its exec is a violation" \
		sh -c "grep '\"type\":\"violation\"' '$R6' | grep -qE '\"path\":\"$W/ro/(\\./)?prog\"'"
	rm -f "$W/ro/o.txt"
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" $how "$W/ro" /bin/true o.txt)
	check "$how: an open into a read-only place fails the spawn (got: $out)" \
		test "$out" = ENOENT -a ! -e "$W/ro/o.txt"
done
# the dynamic loader run as a program (`ld.so PROG`) opens PROG by its own calls: PROG is
# judged as an exec of its own, and one the sandbox hides is not run through the loader
ldso=$(readelf -l /bin/cat 2>/dev/null | sed -n 's/.*interpreter: \([^]]*\)]/\1/p')
if [ -n "$ldso" ]; then
	cp /bin/echo "$W/out/bin/hidden-echo"
	out=$("$ST" run --fence --policy "$W/policy" --report "$W/ldso.jsonl" -- \
		sh -c "$ldso $W/out/bin/hidden-echo ran" 2>/dev/null)
	check "a hidden program is not run through the loader (got: $out)" test -z "$out"
	check "... its exec is a violation" \
		sh -c "grep '\"type\":\"violation\"' '$W/ldso.jsonl' | grep -qF '\"path\":\"$W/out/bin/hidden-echo\"'"
	out=$("$ST" run --fence --policy "$W/policy" -- sh -c "$ldso /bin/echo ran")
	check "an allowed program runs through the loader (got: $out)" test "$out" = ran
	# ldd's way (LD_TRACE_LOADED_OBJECTS): the loader only maps the file, a read
	cp /bin/true "$W/ro/ro-true"
	out=$("$ST" run --fence --policy "$W/policy" -- \
		sh -c "LD_TRACE_LOADED_OBJECTS=1 $ldso $W/ro/ro-true >/dev/null && echo listed")
	check "the loader lists a program of a read-only place for ldd (got: $out)" test "$out" = listed
fi
# a spawn whose file actions move the child (addchdir_np) runs a script whose #! names a
# relative interpreter, or the loader given a relative program: the kernel (the loader)
# looks it up from the child's directory, where it is judged and recorded, not from the
# parent's cwd.  $W/ro/interp and $W/ro/ldprog may be read but not run; their twins in the
# sandbox may.  Judged in the parent's cwd, the hidden one ran (child in $W/ro, parent in
# $W/in/sp) and the allowed one was refused (child in $W/in/sp, parent in $W/ro)
printf '#!./interp\n' > "$W/in/sp/rel-interp"
chmod +x "$W/in/sp/rel-interp"
for d in "$W/in/sp" "$W/ro"; do
	printf '#!/bin/sh\necho "interp of %s"\n' "$d" > "$d/interp"
	cp /bin/echo "$d/ldprog"
	chmod +x "$d/interp" "$d/ldprog"
done
for what in interp ldso; do
	[ $what = ldso ] && [ -z "$ldso" ] && continue
	if [ $what = interp ]; then set -- "$W/in/sp/rel-interp"; else set -- "$ldso" ./ldprog; fi
	prog=$1; shift
	rm -f "$W/in/sp.out"
	out=$(cd "$W/in/sp" && "$ST" run --fence --policy "$W/policy" --report "$W/rel-$what.jsonl" -- \
		"$DRV" spawn-chdir "$W/ro" "$prog" "$W/in/sp.out" "$@" from-ro)
	check "spawn-chdir, relative $what in a read-only place: not run (got: $out, $(cat "$W/in/sp.out" 2>/dev/null))" \
		test "$out" = ENOENT -a ! -s "$W/in/sp.out"
	check "... its exec is a violation where the child looks it up" \
		sh -c "grep '\"type\":\"violation\"' '$W/rel-$what.jsonl' | grep -qE '\"path\":\"$W/ro/(\\./)?(interp|ldprog)\"'"
	rm -f "$W/in/sp.out"
	out=$(cd "$W/ro" && "$ST" run --fence --policy "$W/policy" -- \
		"$DRV" spawn-chdir "$W/in/sp" "$prog" "$W/in/sp.out" "$@" from-sp)
	check "spawn-chdir, relative $what in the sandbox: run (got: $out, $(cat "$W/in/sp.out" 2>/dev/null))" \
		test "$out" = ok -a -s "$W/in/sp.out"
	out=$(cd "$W/ro" && "$ST" run --report "$W/rel-$what-t.jsonl" -- \
		"$DRV" spawn-chdir "$W/in/sp" "$prog" "$W/in/sp.out" "$@" traced)
	check "spawn-chdir, relative $what traced: recorded where the child runs it" \
		sh -c "'$ST' report --list '$W/rel-$what-t.jsonl' | grep -qE '^X	$W/in/sp/(interp|ldprog)\$'"
	check "... not in the parent's cwd" \
		sh -c "! '$ST' report --list '$W/rel-$what-t.jsonl' | grep -qE '	$W/ro/(interp|ldprog)\$'"
done
# without a spawn the interpreter is the exec's process's own cwd's (after a chdir, and
# whatever directory an execveat's descriptor or fexecve's file is in)
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "cd '$W/ro' && exec '$W/in/sp/rel-interp'" 2>/dev/null)
check "execve after a chdir into a read-only place: its relative interpreter not run (got: $out)" test -z "$out"
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "cd '$W/in/sp' && exec '$W/in/sp/rel-interp'")
check "execve after a chdir into the sandbox: its relative interpreter run (got: $out)" \
	test "$out" = "interp of $W/in/sp"
out=$(cd "$W/ro" && "$ST" run --fence --policy "$W/policy" -- "$DRV" execveat "$W/in/sp" rel-interp)
check "execveat from a descriptor, cwd read-only: the cwd's interpreter not run (got: $out)" test "$out" = ENOENT
out=$(cd "$W/in/sp" && "$ST" run --fence --policy "$W/policy" -- "$DRV" execveat "$W/in/sp" rel-interp)
check "execveat from a descriptor, cwd in the sandbox: run (got: $out)" test "$out" = "interp of $W/in/sp"
out=$(cd "$W/ro" && "$ST" run --fence --policy "$W/policy" -- "$DRV" fexecve 5 5<"$W/in/sp/rel-interp")
check "fexecve, cwd read-only: the cwd's interpreter not run (got: $out)" test "$out" = ENOENT
out=$(cd "$W/in/sp" && "$ST" run --fence --policy "$W/policy" -- "$DRV" fexecve 5 5<"$W/in/sp/rel-interp")
check "fexecve, cwd in the sandbox: run (got: $out)" test "$out" = "interp of $W/in/sp"
# a library the loader maps from outside the sandbox (a RUNPATH into a denied place)
# is read before any wrapper runs: it cannot be refused, but it is a violation, not
# an allowed read
mkdir -p "$W/out/lib"
printf 'int st_hv(void) { return 7; }\n' > "$W/hv.c"
printf 'int st_hv(void);\nint main(void) { return st_hv() == 7 ? 0 : 1; }\n' > "$W/needs.c"
if cc -shared -fPIC -o "$W/out/lib/libsthv.so" "$W/hv.c" &&
   cc -o "$W/in/needs" "$W/needs.c" -L"$W/out/lib" -lsthv -Wl,-rpath,"$W/out/lib"; then
	R8=$W/needed.jsonl
	"$ST" run --fence --policy "$W/policy" --report "$R8" -- "$W/in/needs"
	check "a library mapped from a denied place: a violation" \
		sh -c "grep '\"type\":\"violation\"' '$R8' | grep -qF '\"path\":\"$W/out/lib/libsthv.so\"'"
	check "a library mapped from a denied place: no allowed read of it" \
		sh -c "! grep '\"type\":\"access\"' '$R8' | grep -F '\"path\":\"$W/out/lib/libsthv.so\"' | grep -qF '\"verdict\":\"allow\"'"
	# The library sets' memo (shim/init.c): a process whose libraries another process
	# recorded in the same arena epoch skips their look-ups.  A set with one library more
	# is another set (its library recorded), and a policy reload starts a new epoch: the
	# reload here denies the library's directory, and the next process that maps it is a
	# violation, though the same set was recorded before.
	# (the shell waits for the reload on another denied name: its own look-up of the
	# library would be a violation too)
	mkdir -p "$W/ls"; : > "$W/ls/gone"; printf 'allow any /\n' > "$W/ls/pol"; R9=$W/ls/r.jsonl
	"$ST" run --fence --policy "$W/ls/pol" --pidfile "$W/ls/pid" --report "$R9" -- sh -c '
		/bin/true; "$1/in/needs"; "$1/in/needs"
		printf "deny any %s\ndeny any %s\nallow any /\n" "$1/out/lib" "$1/ls/gone" > "$1/ls/pol"
		kill -HUP $(cat "$1/ls/pid")
		i=0; while [ -e "$1/ls/gone" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
		"$1/in/needs"' sh "$W"
	check "library sets' memo: one library more is another set, recorded" \
		sh -c "grep '\"type\":\"access\"' '$R9' | grep -F '\"path\":\"$W/out/lib/libsthv.so\"' | grep -qF '\"verdict\":\"allow\"'"
	check "library sets' memo: after a reload the same set is judged again (a violation)" \
		sh -c "grep '\"type\":\"violation\"' '$R9' | grep -qF '\"path\":\"$W/out/lib/libsthv.so\"'"
	# A name that goes through a /proc magic link (here LD_LIBRARY_PATH=/proc/self/cwd,
	# and a link to it) names another file in each process: the same set of names in
	# the same epoch is not the same set of files, and the memo must not stand for it
	mkdir -p "$W/lsa" "$W/lsb"; ln -s /proc/self/cwd "$W/lsl"
	cp "$W/out/lib/libsthv.so" "$W/lsa/"; cp "$W/out/lib/libsthv.so" "$W/lsb/"
	mkdir -p "$W/lsc" "$W/lsd"; cp "$W/out/lib/libsthv.so" "$W/lsc/"; cp "$W/out/lib/libsthv.so" "$W/lsd/"
	R10=$W/ls/magic.jsonl
	"$ST" run --report "$R10" -- sh -c '
		cd "$1/lsa" && LD_LIBRARY_PATH=/proc/self/cwd "$1/in/needs"
		cd "$1/lsb" && LD_LIBRARY_PATH=/proc/self/cwd "$1/in/needs"
		cd "$1/lsc" && LD_LIBRARY_PATH="$1/lsl" "$1/in/needs"
		cd "$1/lsd" && LD_LIBRARY_PATH="$1/lsl" "$1/in/needs"' sh "$W"
	for d in lsa lsb lsc lsd; do
		check "library sets' memo: a library named through /proc/self/cwd is recorded in each process ($d)" \
			has R "$W/$d/libsthv.so" "$R10"
	done
	# The memo's tag is made of one walk of the loaded objects, the records of another:
	# an object closed in between (by another thread; here by the program's own
	# dl_iterate_phdr, which the shim's walks reach, on the second walk) was hashed and
	# never recorded, and the next process with the same set skipped it.  libstq.so
	# comes only as a dependency of a library opened by path (whose open records that
	# library only), so the walk after the dlopen by name is what records it.
	mkdir -p "$W/lr"
	printf 'int st_q(void) { return 1; }\n' > "$W/lr/q.c"
	printf 'int st_q(void);\nint st_z(void) { return st_q(); }\n' > "$W/lr/z.c"
	printf 'int st_p(void) { return 2; }\n' > "$W/lr/p.c"
	cat > "$W/lr/drv.c" <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
typedef int (*cb_t)(struct dl_phdr_info *, size_t, void *);
static void *z;
static int armed;
int dl_iterate_phdr(cb_t cb, void *data)
{
	static int (*real)(cb_t, void *);
	if (!real)
		real = (int (*)(cb_t, void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
	if (armed && ++armed == 3 && z) { /* the second walk after the dlopen by name */
		dlclose(z);
		z = 0;
	}
	return real(cb, data);
}
int main(int argc, char **argv)
{
	z = dlopen(argv[1], RTLD_NOW);
	if (!z)
		return 2;
	armed = argc > 2;
	return dlopen("libstp.so", RTLD_NOW) ? 0 : 1;
}
EOF2
	if cc -shared -fPIC -o "$W/lr/libstq.so" "$W/lr/q.c" &&
	   cc -shared -fPIC -o "$W/lr/libstz.so" "$W/lr/z.c" -L"$W/lr" -lstq -Wl,-rpath,"$W/lr" &&
	   cc -shared -fPIC -o "$W/lr/libstp.so" "$W/lr/p.c" &&
	   cc -rdynamic -o "$W/lr/drv" "$W/lr/drv.c" -ldl; then
		R11=$W/lr/r.jsonl
		out=$(LD_LIBRARY_PATH="$W/lr" "$ST" run --report "$R11" -- sh -c '
			"$1/drv" "$1/libstz.so" close; echo $?; "$1/drv" "$1/libstz.so"; echo $?' sh "$W/lr" | tr '\n' ' ')
		check "library sets' memo: the drivers ran (got: $out)" test "$out" = "0 0 "
		check "library sets' memo: an object closed between the two walks is recorded by the next process" \
			has R "$W/lr/libstq.so" "$R11"
	else
		bad "cc: the library sets' walk test could not be built"
	fi
else
	bad "cc: the library test could not be built"
fi
# open_by_handle_at (root: CAP_DAC_READ_SEARCH) opens a file by a handle taken before
# the run: judged where the file is, a hidden one fails as a stale handle
if [ "$(id -u)" = 0 ] && "$DRV" handle-get "$W/out/secret" "$W/in/secret.handle" >/dev/null; then
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" handle-open "$W/in/secret.handle" "$W/in")
	check "open_by_handle_at of a denied file fails (got: $out)" test "$out" != ok
	"$DRV" handle-get "$W/in/mine" "$W/in/mine.handle" >/dev/null
	out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" handle-open "$W/in/mine.handle" "$W/in")
	check "open_by_handle_at of an allowed file is ok (got: $out)" test "$out" = ok
fi
# rename out of the sandbox: both names are judged
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" rename "$W/in/mine" "$W/out/mine")
check "rename to a denied place refused" test "$out" != ok
check "source still there" test -e "$W/in/mine"
# cat of a denied file reads as missing, as a shell sees it
msg=$("$ST" run --fence --policy "$W/policy" -- cat "$W/out/secret" 2>&1)
check "cat says No such file" sh -c "echo \"$msg\" | grep -q 'No such file or directory'"
# the embedded fenced default: cwd and /tmp allowed, home hidden
cd "$W/in"
out=$("$ST" run --fence -- "$DRV" open-r "$W/in/mine")
check "default fence: cwd readable" test "$out" = ok
out=$("$ST" run --fence -- "$DRV" stat /root)
check "default fence: /root hidden" test "$out" = ENOENT
out=$("$ST" run --fence -- "$DRV" open-r /etc/hostname)
check "default fence: /etc readable" test "$out" = ok
out=$("$ST" run --fence -- "$DRV" open-creat /etc/sandtrace-test)
check "default fence: /etc not writable (EACCES)" test "$out" = EACCES
# the same answers without the arena (every decision asks the daemon)
out=$("$ST" run --no-cache --fence --policy "$W/policy" -- "$DRV" open-r "$W/out/secret")
check "no-cache: denied read is ENOENT" test "$out" = ENOENT
out=$("$ST" run --no-cache --fence --policy "$W/policy" -- "$DRV" open-r "$W/in/mine")
check "no-cache: allowed read works" test "$out" = ok
# a link repointed during the run from an allowed to a denied target is judged anew
echo ok > "$W/in/okfile"
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "ln -sf $W/in/okfile $W/in/sw; $DRV open-r $W/in/sw; ln -sf $W/out/secret $W/in/sw; $DRV open-r $W/in/sw" | tr '\n' ' ')
check "repointed link re-judged (ok then ENOENT)" test "$out" = "ok ENOENT "
# listings: a hidden name is left out of readdir, scandir, nftw and fts (ls, find) alike
mkdir -p "$W/in/mixed"; : > "$W/in/mixed/visible"; : > "$W/in/mixed/secret.key"
cat > "$W/policy2" <<P
deny any $W/in/mixed/secret.key
allow any $W/in
$(system_rules)
P
out=$("$ST" run --fence --policy "$W/policy2" -- ls "$W/in/mixed" | tr '\n' ' ')
check "ls (readdir) hides the denied name" test "$out" = "visible "
out=$("$ST" run --fence --policy "$W/policy2" -- find "$W/in/mixed" -type f | sort | tr '\n' ' ')
check "find (fts) hides the denied name" test "$out" = "$W/in/mixed/visible "
out=$("$ST" run --fence --policy "$W/policy2" -- /usr/bin/python3 -c "import os; print(sorted(os.listdir('$W/in/mixed')))")
check "python listdir hides the denied name" test "$out" = "['visible']"
# a listing that leaves the name out records no violation, and does not keep the
# program's own access of the name afterwards from being reported as one
R6=$W/list-then-lstat.jsonl
# (coreutils stat does not follow the name: the key the listing's filter judged)
out=$("$ST" run --fence --policy "$W/policy2" --report "$R6" -- sh -c "ls '$W/in/mixed' >/dev/null; stat '$W/in/mixed/secret.key' >/dev/null 2>&1 || echo hidden")
check "stat of the hidden name after a listing fails (got: $out)" test "$out" = hidden
check "stat of the hidden name after a listing: a violation" \
	sh -c "grep '\"type\":\"violation\"' '$R6' | grep -qF '\"path\":\"$W/in/mixed/secret.key\"'"
# the other ways of reading a directory: readdir_r, getdents64, getdirentries, syscall(),
# and what scandir's selector is shown
for how in readdir_r readdir64_r getdents64 getdirentries sys-getdents64 sys-getdents scandir-sel; do
	out=$("$ST" run --fence --policy "$W/policy2" -- "$DRV" list-$how "$W/in/mixed" | tr '\n' ' ')
	check "list-$how hides the denied name (got: $out)" test "$out" = "visible ok "
	out=$("$ST" run -- "$DRV" list-$how "$W/in/mixed" | tr '\n' ' ')
	check "list-$how without a policy lists both (got: $out)" \
		test "$out" = "secret.key visible ok " -o "$out" = "visible secret.key ok "
done
out=$("$ST" run --policy "$W/policy2" -- ls "$W/in/mixed" | tr '\n' ' ')
check "trace-only listing unchanged" test "$out" = "secret.key visible " -o "$out" = "visible "
out=$("$ST" run -- ls "$W/in/mixed" | tr '\n' ' ')
check "no policy: listing unchanged" test "$out" = "secret.key visible "
# a working directory deeper than PATH_MAX has no name the kernel gives: a fenced run
# cannot judge accesses relative to it and refuses them (fail closed), never lets them by
mkdir -p "$W/deep/prot"
python3 -c "
import os
os.chdir('$W/deep/prot')
for i in range(25):
    os.mkdir('x' * 200); os.chdir('x' * 200)"
printf 'deny write %s/deep/prot\nallow any /\n' "$W" > "$W/deep.pol"
"$ST" run --fence --policy "$W/deep.pol" -- /usr/bin/python3 -c "
import os
os.chdir('$W/deep/prot')
try:
    for i in range(25):
        os.chdir('x' * 200)
    open('sneaky.txt', 'w')
    print('WROTE')
except OSError as e:
    print('refused', e.errno)" > "$W/deep.out" 2>&1
check "deep cwd under a fence: refused, not written" sh -c "! grep -q WROTE $W/deep.out && [ -z \"\$(find $W/deep -name sneaky.txt)\" ]" && grep -q refused $W/deep.out
# a symlink deeper than PATH_MAX (a name the kernel will not readlink whole) was taken for a
# plain name: the access was judged as the link's own path (allowed) and the file it leads to,
# which the sandbox hides, was read.  The shim asks such a name relative to a directory it
# opens piecewise: the access is judged and recorded as the target, and the deep paths that
# lead nowhere hidden (B34) still work.  Links: lnk (absolute, to a file), dlnk (to a hidden
# directory, met mid-path), rlnk (relative, up and out with ".."), each read from the deep
# directory as the cwd (a chdir chain) and through a descriptor (an openat chain).
DL=$W/in/deeplink
mkdir -p "$DL" "$W/out2"; echo secret2 > "$W/out2/secret"
python3 -c "
import os
os.chdir('$DL')
for i in range(25):
    os.mkdir('y' * 200); os.chdir('y' * 200)
os.symlink('$W/out/secret', 'lnk')
os.symlink('$W/out', 'dlnk')
os.symlink('../' * 27 + 'out/secret', 'rlnk')
os.symlink('$W/out2/secret', 'lnk2')
os.symlink('$W/in/mine', 'okl')
open('plain', 'w').write('plain\n')"
cat > "$W/in/deepread.py" <<'PY'
import os, sys
top, how = sys.argv[1], sys.argv[2]
d = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
for i in range(25):
    n = os.open('y' * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=d); os.close(d); d = n
if how == 'cwd':
    os.fchdir(d)
for name in sys.argv[3:]:
    try:
        if how == 'cwd':
            fd = os.open(name, os.O_RDONLY)
        else:
            fd = os.open(name, os.O_RDONLY, dir_fd=d)
        print(name, os.read(fd, 100).decode().strip()); os.close(fd)
    except OSError as e:
        print(name, 'refused', e.errno)
PY
DEEPD=$(cd "$DL" && python3 -c "import os; print(os.path.abspath('.'))")/$(python3 -c "print('/'.join(['y'*200]*25))")
for how in cwd fd; do
	R=$W/deeplink-$how.jsonl
	out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- /usr/bin/python3 "$W/in/deepread.py" "$DL" $how lnk dlnk/secret rlnk okl plain 2>&1 | tr '\n' ' ')
	check "fenced, deep links ($how): the hidden file is not read, the allowed ones are (got: $out)" \
		test "$out" = "lnk refused 2 dlnk/secret refused 2 rlnk refused 2 okl mine plain plain "
	check "fenced, deep links ($how): a violation of the target" \
		sh -c "grep '\"type\":\"violation\"' '$R' | grep -qF '\"path\":\"$W/out/secret\"'"
	check "fenced, deep links ($how): the link's own name is not what was judged" \
		sh -c "! grep '\"type\":\"violation\"' '$R' | grep -qF 'lnk\"'"
	check "fenced, deep links ($how): the allowed target recorded" has R "$W/in/mine" "$R"
	check "fenced, deep links ($how): the deep plain file recorded by its deep path" has R "$DEEPD/plain" "$R"
	# a deny rule hides without a fence: a trace-only run with a policy
	R=$W/deeplink-deny-$how.jsonl
	printf 'deny read %s/out2\n' "$W" > "$W/deny2.pol"
	out=$("$ST" run --policy "$W/deny2.pol" --report "$R" -- /usr/bin/python3 "$W/in/deepread.py" "$DL" $how lnk2 plain 2>&1 | tr '\n' ' ')
	check "deny rule, deep link ($how): the denied file is not read (got: $out)" \
		test "$out" = "lnk2 refused 2 plain plain "
	check "deny rule, deep link ($how): a violation of the target" \
		sh -c "grep '\"type\":\"violation\"' '$R' | grep -qF '\"path\":\"$W/out2/secret\"'"
	# trace only: the read is recorded as the file the link leads to
	R=$W/deeplink-trace-$how.jsonl
	out=$("$ST" run --report "$R" -- /usr/bin/python3 "$W/in/deepread.py" "$DL" $how lnk dlnk/secret rlnk 2>&1 | tr '\n' ' ')
	check "trace only, deep links ($how): read (got: $out)" \
		test "$out" = "lnk secret dlnk/secret secret rlnk secret "
	check "trace only, deep links ($how): recorded as the target" has R "$W/out/secret" "$R"
	check "trace only, deep links ($how): no read recorded at the links' names" \
		sh -c "! '$ST' report --list '$R' | grep -qE '^R	.*/(lnk|dlnk/secret|rlnk)$'"
done
# a name longer than the walk's buffers (2 x PATH_MAX) was judged by its spelling: a link
# met there led to a hidden or denied file, which was read.  Now such a name fails closed
# (EACCES, a violation of its spelling) under any policy that can refuse, and a trace
# records its spelling marked "unresolved".  Three ways past 8 KiB, each from a cwd in the
# allowed tree: a deep cwd (6.9 KiB) joined to a relative name of 1.6 KiB (the spelling
# overflows); a short link there, jump, whose relative target is 1.6 KiB deeper (the
# resolution overflows); a cwd deeper than 8 KiB (no name the shim can build; refused
# before only under a fence, now under a deny rule too).  The policy's allowed tree is
# $W/in: a plain deep file past 8 KiB is refused too (fail closed).
OV=$W/in/ov
mkdir -p "$OV"
python3 -c "
import os
os.chdir('$OV')
for i in range(42):
    if i == 34:
        os.symlink('/'.join(['z' * 200] * 8), 'jump')
    os.mkdir('z' * 200); os.chdir('z' * 200)
os.symlink('$W/out/secret', 'lnk')
os.symlink('$W/out2/secret', 'lnk2')
open('plain', 'w').write('plain\n')"
cat > "$W/in/ovread.py" <<'PY'
import os, sys
os.chdir(sys.argv[1])
for i in range(int(sys.argv[2])):
    os.chdir('z' * 200)
for name in sys.argv[3:]:
    try:
        fd = os.open(name, os.O_RDONLY)
        print(name.split('/')[-1], os.read(fd, 100).decode().strip()); os.close(fd)
    except OSError as e:
        print(name.split('/')[-1], 'refused', e.errno)
PY
LONG=$(python3 -c "print('/'.join(['z' * 200] * 8))")
R=$W/ov-fence.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- /usr/bin/python3 "$W/in/ovread.py" "$OV" 34 "$LONG/lnk" jump/lnk jump/plain 2>&1 | tr '\n' ' ')
check "fenced, a name past 2 x PATH_MAX: refused, the hidden file not read (got: $out)" \
	test "$out" = "lnk refused 13 lnk refused 13 plain refused 13 "
check "fenced, a name past 2 x PATH_MAX: a violation of its spelling" \
	sh -c "grep '\"type\":\"violation\"' '$R' | grep -qF 'zzz/jump/lnk\"'"
printf 'deny read %s/out2\n' "$W" > "$W/deny3.pol"
R=$W/ov-deny.jsonl
out=$("$ST" run --policy "$W/deny3.pol" --report "$R" -- /usr/bin/python3 "$W/in/ovread.py" "$OV" 34 "$LONG/lnk2" jump/lnk2 2>&1 | tr '\n' ' ')
check "deny rule, a name past 2 x PATH_MAX: refused, the denied file not read (got: $out)" \
	test "$out" = "lnk2 refused 13 lnk2 refused 13 "
# a cwd made deeper than 8 KiB by moving a directory above it (a chdir there is refused)
mkdir -p "$W/in/ovt" "$W/in/ovpad"
python3 -c "
import os
os.chdir('$W/in/ovt')
for i in range(30):
    os.mkdir('z' * 200); os.chdir('z' * 200)
os.symlink('$W/out2/secret', 'lnk2')
os.chdir('$W/in/ovpad')
for i in range(12):
    os.mkdir('z' * 200); os.chdir('z' * 200)"
out=$("$ST" run --policy "$W/deny3.pol" -- /usr/bin/python3 -c "
import os
os.chdir('$W/in/ovt')
for i in range(30):
    os.chdir('z' * 200)
os.rename('$W/in/ovt', '$W/in/ovpad/' + '/'.join(['z' * 200] * 12) + '/t')
try: print('lnk2', open('lnk2').read().strip())
except OSError as e: print('lnk2 refused', e.errno)" 2>&1 | tr '\n' ' ')
check "deny rule, a cwd deeper than 2 x PATH_MAX: refused, the denied file not read (got: $out)" \
	test "$out" = "lnk2 refused 13 "
R=$W/ov-trace.jsonl
out=$("$ST" run --report "$R" -- /usr/bin/python3 "$W/in/ovread.py" "$OV" 34 "$LONG/lnk" jump/lnk 2>&1 | tr '\n' ' ')
check "trace only, a name past 2 x PATH_MAX: read (got: $out)" test "$out" = "lnk secret lnk secret "
check "trace only, a name past 2 x PATH_MAX: recorded by its spelling, marked unresolved" \
	sh -c "grep '\"unresolved\":true' '$R' | grep -qF 'zzz/jump/lnk\"' && grep '\"unresolved\":true' '$R' | grep -qF 'zzz/lnk\"'"
# a listing of a directory deeper than PATH_MAX was not filtered (its name, from the
# kernel, failed): a name the sandbox hides there was listed while a lookup of it said
# ENOENT.  The shim names the directory itself (up to 2 x PATH_MAX) and filters it.
LS=$W/in/lst
mkdir -p "$LS"
python3 -c "
import os
os.chdir('$LS')
for i in range(25):
    os.mkdir('w' * 200); os.chdir('w' * 200)
open('vis', 'w'); open('hid', 'w')"
LSD=$LS/$(python3 -c "print('/'.join(['w' * 200] * 25))")
{ printf 'deny read %s/hid\n' "$LSD"; cat "$W/policy"; } > "$W/lst.pol"
cat > "$W/in/lsdeep.py" <<'PY'
import os, sys
os.chdir(sys.argv[1])
for i in range(25):
    os.chdir('w' * 200)
fd = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
print(sorted(os.listdir('.')), sorted(os.listdir(fd)))
PY
out=$("$ST" run --fence --policy "$W/lst.pol" -- /usr/bin/python3 "$W/in/lsdeep.py" "$LS" 2>&1)
check "fenced, a listing deeper than PATH_MAX hides the hidden name (got: $out)" \
	test "$out" = "['vis'] ['vis']"
# the shim's own questions of a deep name it built (an exec's probe of the program, the
# type of a name before and after a namespace write) failed with ENAMETOOLONG: a deep #!
# script's hidden interpreter was never seen (the probe could not open the script) and ran;
# a link made at a deep name left the verdict kept for the name while it was missing, so
# the hidden file it leads to was read
python3 -c "
import os, shutil
os.chdir('$DL')
for i in range(25):
    os.chdir('y' * 200)
shutil.copy('$W/in/bin/viaout', 'viaout')"
cat > "$W/in/deepns.py" <<'PY'
import os, sys
top, secret, mine = sys.argv[1:4]
d = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
for i in range(25):
    n = os.open('y' * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=d); os.close(d); d = n
os.fchdir(d)
def rd(name):
    try:
        with open(name) as f:
            return f.read().strip()
    except OSError as e:
        return 'refused %d' % e.errno
out = []
if sys.argv[4] == 'exec':
    pid = os.fork()
    if pid == 0:
        try:
            os.execv('./viaout', ['./viaout'])
        except OSError as e:
            os._exit(e.errno)
    print('exec', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    sys.exit(0)
if sys.argv[4] == 'spawn':
    try:
        pid = os.posix_spawn('./viaout', ['./viaout'], os.environ)
        print('spawn ran', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    except OSError as e:
        print('spawn', e.errno)
    sys.exit(0)
out.append(rd('new'))              # missing: its verdict is kept
os.symlink(secret, 'new')         # a link made there
out.append(rd('new'))
os.symlink(mine, 'old')
out.append(rd('old'))
os.symlink(secret, 'tmp')
os.rename('tmp', 'old')           # a link moved over a link
out.append(rd('old'))
print(' '.join(out))
PY
R=$W/deepns.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- /usr/bin/python3 "$W/in/deepns.py" "$DL" "$W/out/secret" "$W/in/mine" ns 2>&1)
check "fenced, a link made or moved at a deep name: judged anew (got: $out)" \
	test "$out" = "refused 2 refused 2 mine refused 2"
for how in exec spawn; do
	R=$W/deep$how.jsonl
	out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- /usr/bin/python3 "$W/in/deepns.py" "$DL" "$W/out/secret" "$W/in/mine" $how 2>&1)
	check "fenced, $how of a deep #! script whose interpreter is hidden: ENOENT (got: $out)" test "$out" = "$how 2"
	check "... the interpreter's exec is a violation" \
		sh -c "grep '\"type\":\"violation\"' '$R' | grep -qF '\"path\":\"$W/out/bin/interp\"'"
done
# a PATH candidate of posix_spawnp, under the child's directory (addchdir), longer than
# PATH_MAX: its stat failed with ENAMETOOLONG and it was passed over as missing, unjudged,
# and the child's own search ran it (here a link to a program the sandbox hides)
SP=$W/in/sp/$(python3 -c "print('/'.join(['s'*200]*19) + '/' + 's'*100)")
mkdir -p "$SP"
PP=$(python3 -c "print('p'*250)")
python3 -c "
import os
os.chdir('$SP')
os.symlink('$W/out/bin/interp', '$PP')"
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" spawnp-chdir "$SP" "$PP" spout 2>&1)
check "fenced, spawnp of a candidate deeper than PATH_MAX that leads to a hidden program: ENOENT (got: $out)" \
	test "$out" = ENOENT
# the directories on the way to what the policy allows stay visible (autoconf's shell search
# stats "/"), their listings hide the rest, and they are not writable
PW=$W/onlyw.policy
{ system_rules; echo "allow any $W/out"; } > "$PW"
out=$("$ST" run --fence --policy "$PW" -- /usr/bin/stat -c %n / "$W" 2>&1 | tr '\n' ' ')
check "fenced: / and the dirs on the way to an allowed prefix can be stat'ed (got: $out)" \
	test "$out" = "/ $W "
out=$("$ST" run --fence --policy "$PW" -- /usr/bin/ls -a / | tr '\n' ' ')
check "fenced: ls / lists the way (usr, tmp) and hides the rest (got: $out)" \
	sh -c "echo '$out' | grep -qw usr && echo '$out' | grep -qw tmp && ! echo '$out' | grep -qw root && ! echo '$out' | grep -qw home"
"$ST" run --fence --policy "$PW" -- /usr/bin/touch "$W/not-allowed" 2>/dev/null
check "fenced: a dir on the way is not writable" test ! -e "$W/not-allowed"
# strict mode turns violations into a failing exit status
"$ST" run --strict --fence --policy "$W/policy" -- "$DRV" open-r "$W/out/secret" >/dev/null; rc=$?
check "--strict exits 121 on violations" test $rc -eq 121
# a cached verdict is found again where per-directory generations are in play
# (a link to a file made in the directory by a traced process): ten lookups of
# one path resolve it once (a resolution writing its own key over the verdict's
# key prefix once made every warm lookup a miss)
cd "$W/in"; mkdir -p wv; echo x > wv/f
"$ST" run --fence --policy "$W/policy" --report "$W/wv.jsonl" -- strace -f -qq \
	-e trace=readlink,readlinkat -o "$W/in/wv.strace" \
	sh -c 'ln -sf f wv/lnk; for i in 1 2 3 4 5 6 7 8 9 10; do test -e wv/f; done'
n=$(grep -c 'wv/f"' "$W/in/wv.strace")
check "warm verdicts are hits: $n resolutions of wv/f for 10 lookups" test "$n" -le 1
# a verdict or a remembered directory must not outlive a name that became a
# link to a denied place: a directory replaced by a link that dangles where it
# is made, then made to lead to $W/out by a mkdir (no link changes then)
mkdir -p "$W/out/e" fl/w/d/e; echo SECRET > "$W/out/e/g"; echo ok > fl/w/d/e/f
out=$("$ST" run --fence --policy "$W/policy" -- sh -c 'cat fl/w/d/e/f >/dev/null; rm -rf fl/w/d;
  ln -s m/../../../../out fl/w/d; mkdir fl/w/m; cat fl/w/d/e/g 2>/dev/null')
check "dangling link made to lead to a denied directory: read refused (got: $out)" test -z "$out"
# a link renamed over an allowed file whose verdict was cached
mkdir -p fr/o; echo plain > fr/file
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "cat fr/file >/dev/null; ln -s $W/out/secret fr/o/l;
  mv -T fr/o/l fr/file; cat fr/file 2>/dev/null")
check "link to a denied file renamed over an allowed one: read refused (got: $out)" test -z "$out"
# the same while a process holds the allowed name warm (its thread's memo of
# warm accesses answers without the Ctrie): the change by another process is seen
mkdir -p mw/o; echo plain > mw/f
"$ST" run --fence --policy "$W/policy" -- sh -c "\"$DRV\" read-wait $W/in/mw/f mw/go > mw/out &
  i=0; while ! grep -q warm mw/out && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
  ln -s $W/out/secret mw/o/l; mv -T mw/o/l mw/f; touch mw/go; wait"
check "warm name replaced by a link to a denied file: refused ($(tr '\n' ' ' < mw/out))" \
	test "$(tail -1 mw/out)" = ENOENT
# a link elsewhere that points at a name which becomes a link: what it leads to
# changes with no change in its own directory (a second review found the secret
# read through A/L1 once B/file was replaced)
mkdir -p lk/x/y/A lk/B; echo plain > lk/B/file; ln -s "$W/in/lk/B/file" lk/x/y/A/L1
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "cat lk/x/y/A/L1; rm lk/B/file;
  ln -s $W/out/secret lk/B/file; cat lk/x/y/A/L1 2>/dev/null")
check "a link to a name that became a link to a denied file: refused (got: $(echo $out))" \
	test "$(echo $out)" = plain
# the hit path answers from cached verdicts (the thread's memo not in use yet):
# a denied name stays hidden on every call, an unclean spelling is judged as
# its clean one, and a name another process turns into a link to a denied file
# is refused at once
mkdir -p hp/o; echo plain > hp/f
out=$("$ST" run --fence --policy "$W/policy" -- /usr/bin/python3 -c "
import os, subprocess
def st(p):
    try:
        os.stat(p)
        return 'ok'
    except OSError as e:
        return os.strerror(e.errno).split()[0]
r = [st('$W/out/secret') for i in range(3)]
r += [st('$W/in/hp/f') for i in range(3)]
r += [st('$W/in/hp/../../out/secret'), st('$W/in//hp/./f'), st('$W//out/secret')]
subprocess.run(['sh', '-c', 'ln -s $W/out/secret hp/o/l; mv -T hp/o/l hp/f'])
r += [st('$W/in/hp/f') for i in range(2)]
print(' '.join(r))")
check "hit path under a fence: denied stays hidden, spellings judged clean (got: $out)" \
	test "$out" = "No No No ok ok ok No ok No No No"
# ... and records under a fence: the verdict's SNode remembers which records of
# its key exist, which must not answer for a name that went missing, nor for a
# link repointed by another process
mkdir -p hq/a hq/b; echo a > hq/a/f; echo 1 > hq/b/t1; echo 2 > hq/b/t2; ln -s "$W/in/hq/b/t1" hq/b/l
"$ST" run --fence --policy "$W/policy" --report "$W/hq.jsonl" -- /usr/bin/python3 -c "
import os, subprocess
def st(p):
    try: os.stat(p)
    except FileNotFoundError: pass
for i in range(3): st('$W/in/hq/a/f'); st('$W/in/hq/b/l')
subprocess.run(['rm', 'hq/a/f'])
for i in range(3): st('$W/in/hq/a/f')
subprocess.run(['sh', '-c', 'ln -s $W/in/hq/b/t2 hq/b/m; mv -T hq/b/m hq/b/l'])
for i in range(3): st('$W/in/hq/b/l')"
check "fenced hit path: a warm name removed by another process is recorded missing" \
	has N "$W/in/hq/a/f" "$W/hq.jsonl"
check "fenced hit path: a warm link repointed by another process: its new target recorded" \
	has Q "$W/in/hq/b/t2" "$W/hq.jsonl"
# a ".." spelling of an allowed file, warm, then the file replaced by a link to a
# denied one: the ".." spelling is refused too (its key was made with the slot of
# the directory before "..", which the replacement did not move)
mkdir -p dd/d; echo plain > dd/f
out=$("$ST" run --fence --policy "$W/policy" -- /usr/bin/python3 -c "
import os, subprocess
def rd(p):
    try:
        return open(p).read().strip()
    except OSError as e:
        return os.strerror(e.errno).split()[0]
r = [rd('$W/in/dd/d/../f') for i in range(3)]
subprocess.run(['sh', '-c', 'ln -s $W/out/secret dd/l; mv -T dd/l dd/f'])
r += [rd('$W/in/dd/d/../f') for i in range(2)] + [rd('$W/in/dd/f')]
print(' '.join(r))")
check "a '..' spelling of a file replaced by a link to a denied one: refused (got: $out)" \
	test "$out" = "plain plain plain No No No"
# a trailing "/", "/." or "//" after a symlink makes the kernel follow it even for
# lstat, readlink and O_NOFOLLOW: judged as followed, into the denied directory
ln -s "$W/out" tl
out=$(for c in lstat readlink; do for sfx in / /. //; do
	"$ST" run --fence --policy "$W/policy" -- "$DRV" $c "$W/in/tl$sfx"; done; done | tr '\n' ' ')
out2=$("$ST" run --fence --policy "$W/policy" -- /usr/bin/python3 -c "
import os
try:
    os.close(os.open('$W/in/tl/', os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)); print('ok')
except OSError as e:
    print(os.strerror(e.errno).split()[0])")
check "lstat, readlink of a link to a denied directory spelled with a trailing / or /. or //: hidden (got: $out)" \
	test "$out" = "ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT "
check "... and open(O_NOFOLLOW|O_DIRECTORY) of it (got: $out2)" test "$out2" = No
check "... while the link itself stays visible to lstat" \
	test "$("$ST" run --fence --policy "$W/policy" -- "$DRV" lstat "$W/in/tl")" = ok
# a name swapped for a link to a denied file while a thread of the process is
# checking it (its memo's trial running): whatever was being decided when the
# swap landed is never cached past it (16,000 attempts; 2 in 8,000 leaked once)
mkdir -p swr; echo plain > swr/f
out=$("$ST" run --fence --policy "$W/policy" -- "$SWAPRACE" "$W/in/swr/f" "$W/out/secret" 8000)
out=$out,$("$ST" run --fence --policy "$W/policy" -- "$SWAPRACE" "$W/in/swr/f" "$W/out/secret" 8000)
check "a name swapped for a denied link during a thread's checks: no stat after the swap sees it ($out)" \
	test "$out" = "0 of 8000 attempts leaked,0 of 8000 attempts leaked"
# a directory moved by a name spelled with a trailing "/" (coreutils mv's call) is a
# move like any other: what was cached under its old name is not kept for what
# takes its place (a review read the denied file through the link of the new one)
mkdir -p mvs/q mvs/q2; echo plain > mvs/plain
ln -s "$W/in/mvs/plain" mvs/q/l; ln -s "$W/out/secret" mvs/q2/l
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "cat $W/in/mvs/q/l; mv $W/in/mvs/q/ $W/in/mvs/qold;
  mv $W/in/mvs/q2/ $W/in/mvs/q; cat $W/in/mvs/q/l 2>/dev/null")
check "directories moved by names spelled 'd/': the link of the one moved in is judged anew (got: $(echo $out))" \
	test "$(echo $out)" = plain
# the calls on a name itself (unlink, rmdir, rename, mkdir, symlink) fail on a
# link spelled "link/" without following it: tracing keeps their errno (a review
# saw EACCES, and violations, where the kernel says ENOTDIR or EEXIST)
mkdir -p "$W/ro/sd"; ln -s "$W/ro/sd" nsl; ln -s "$W/ro/nothere" nsn
probe='import os
def t(f, *a):
    try:
        f(*a); return "ok"
    except OSError as e:
        return os.strerror(e.errno).split()[0]
print(" ".join([t(os.rmdir, "nsl/"), t(os.unlink, "nsl/"), t(os.rename, "nsl/", "nsx"),
    t(os.mkdir, "nsn/"), t(os.symlink, "x", "nsn/")]))'
want=$(python3 -c "$probe")
out=$("$ST" run --fence --policy "$W/policy" --report "$W/ns.jsonl" -- /usr/bin/python3 -c "$probe")
check "calls on 'link/' under a fence: the kernel's errno ($want), got ($out)" test "$out" = "$want"
check "... and no violation for them" sh -c "! grep '\"type\":\"violation\"' $W/ns.jsonl | grep -qF '$W/'"
# a link repointed by another process while an open through it waits on a FIFO:
# the second open (through the new target) is recorded too, not taken for the
# first one's (resolved before the call, keyed with the generations after it)
mkdir -p ff; mkfifo ff/fifo; echo t2 > ff/t2; ln -s "$W/in/ff/fifo" ff/l
"$ST" run --fence --policy "$W/policy" --report "$W/ff.jsonl" -- /usr/bin/python3 -c "
import os, time
l = '$W/in/ff/l'
if os.fork() == 0:
    time.sleep(0.3); os.unlink(l); os.symlink('$W/in/ff/t2', l)
    w = os.open('$W/in/ff/fifo', os.O_WRONLY); os.write(w, b'F'); os.close(w); os._exit(0)
os.read(os.open(l, os.O_RDONLY), 8)
os.wait()
os.read(os.open(l, os.O_RDONLY), 8)"
check "an open through a link repointed during an earlier open: its new target recorded" \
	has R "$W/in/ff/t2" "$W/ff.jsonl"
check "... beside the FIFO the first one read" has R "$W/in/ff/fifo" "$W/ff.jsonl"
# a link made through another spelling of its directory (a link to it, or "..")
# moves the keys of its real directory: the allowed name read before does not
# keep its verdict once it leads to a denied file (a review read the secret)
mkdir -p rs/sub rs/other; echo plain > rs/sub/f; echo plain > rs/sub/g; ln -s sub rs/la
out=$("$ST" run --fence --policy "$W/policy" -- sh -c "cat $W/in/rs/sub/f; rm $W/in/rs/la/f;
  ln -s $W/out/secret $W/in/rs/la/f; cat $W/in/rs/sub/f 2>/dev/null; cat $W/in/rs/sub/g; rm $W/in/rs/sub/g;
  ln -s $W/out/secret $W/in/rs/other/../sub/g; cat $W/in/rs/sub/g 2>/dev/null")
check "a link made through another spelling of its directory: judged anew (got: $(echo $out))" \
	test "$(echo $out)" = "plain plain"
# another process's open file or directory (/proc/P/fd/N, /proc/P/cwd) is not
# the caller's own: judged by what it leads to
(cd "$W/out" && exec sleep 30 < "$W/out/secret") & sp=$!
sleep 0.2
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" open-r "/proc/$sp/fd/0")
out2=$("$ST" run --fence --policy "$W/policy" -- "$DRV" stat "/proc/$sp/cwd/secret")
own=$(echo x | "$ST" run --fence --policy "$W/policy" -- "$DRV" open-r /proc/self/fd/0)
kill $sp 2>/dev/null; wait $sp 2>/dev/null
check "another process's descriptor of a denied file: hidden (got: $out)" test "$out" = ENOENT
check "... and its cwd in a denied directory (got: $out2)" test "$out2" = ENOENT
check "... while the caller's own descriptor stays open to it (got: $own)" test "$own" = ok
# the calls on a name itself spelled "link/." take the name "." there: the
# kernel follows the link, so a denied target stays hidden (a review saw EINVAL,
# EEXIST, EBUSY telling what the hidden name was)
ln -s "$W/out" lo; ln -s "$W/out/secret" lsf
out=$("$ST" run --fence --policy "$W/policy" -- /usr/bin/python3 -c 'import os
def t(f, *a):
    try:
        f(*a); return "ok"
    except OSError as e:
        return os.strerror(e.errno).split()[0]
print(" ".join(t(f, *a) for n in ("lo/.", "lsf/.", "lo/./") for f, a in
    ((os.rmdir, (n,)), (os.mkdir, (n,)), (os.rename, (n, "zz")), (os.unlink, (n,)))))')
check "rmdir, mkdir, rename, unlink of 'link/.' to a denied place: hidden (got: $out)" \
	test "$out" = "No No No No No No No No No No No No"
# openat2 with RESOLVE_IN_ROOT resolves absolute names, ".." and links below its
# directory, as a chroot: the shim resolves them so, judges and records what the kernel
# opens (here always oar/secret, in the build tree), and hides what the sandbox denies
mkdir -p oar/sub oar/hid; echo s > oar/secret; echo h > oar/hid/f
ln -s /secret oar/lnk; ln -s ../../../../secret oar/lnk2; ln -s /sub/../secret oar/sub/lnk3
ln -s /hid/f oar/lnk4
names="secret ../secret /secret lnk lnk2 sub/lnk3 /sub/../../lnk2"
out=$(for n in $names; do "$DRV" openat2-in-root "$W/in/oar" $n; done | tr '\n' ' ')
check "openat2 RESOLVE_IN_ROOT untraced: all open oar/secret (got: $out)" \
	test "$out" = "ok ok ok ok ok ok ok "
out=$(for n in $names; do
	"$ST" run --fence --policy "$W/policy" -- "$DRV" openat2-in-root "$W/in/oar" $n; done | tr '\n' ' ')
check "openat2 RESOLVE_IN_ROOT under a fence: judged below the root (got: $out)" \
	test "$out" = "ok ok ok ok ok ok ok "
R10=$W/inroot.jsonl
"$ST" run --report "$R10" -- sh -c 'for n in lnk lnk2 sub/lnk3; do "$1" openat2-in-root "$2" $n; done' \
	sh "$DRV" "$W/in/oar" > /dev/null
check "openat2 RESOLVE_IN_ROOT: the file opened is recorded" has R "$W/in/oar/secret" "$R10"
check "openat2 RESOLVE_IN_ROOT: not the name outside the root" not_has /secret "$R10"
printf 'deny any %s\nallow any /\n' "$W/in/oar/hid" > "$W/inroot.pol"
out=$(for n in hid/f /hid/f lnk4 sub/../../hid/f; do
	"$ST" run --policy "$W/inroot.pol" -- "$DRV" openat2-in-root "$W/in/oar" $n; done | tr '\n' ' ')
check "openat2 RESOLVE_IN_ROOT: a denied name below the root is hidden (got: $out)" \
	test "$out" = "ENOENT ENOENT ENOENT ENOENT "
# A policy's deny rule without --fence hides the name from listings too, with the arena and
# without it (--no-cache: the shim has no compiled policy, the run's flags say the policy
# can hide, and each name is asked of the daemon); a policy that only allows filters nothing.
mkdir -p "$W/nl/d"; : > "$W/nl/d/visible"; : > "$W/nl/d/hidden"
printf 'deny any %s\nallow any /\n' "$W/nl/d/hidden" > "$W/nl/pol"
printf 'allow any /\n' > "$W/nl/pol-allow"
for mode in "" --no-cache; do
	out=$("$ST" run $mode --policy "$W/nl/pol" -- ls "$W/nl/d" | tr '\n' ' ')
	check "deny rule, no fence ${mode:-(arena)}: ls leaves the hidden name out (got: $out)" \
		test "$out" = "visible "
	out=$("$ST" run $mode --policy "$W/nl/pol-allow" -- ls "$W/nl/d" | tr '\n' ' ')
	check "allow-only policy ${mode:-(arena)}: ls lists both (got: $out)" test "$out" = "hidden visible "
done
# An exec by a descriptor's name (/dev/fd/N, /proc/self/fd/N) runs the file the descriptor
# holds: judged where that file is, as fexecve(N) is (no descriptor grants an exec); a
# memfd has no place in the file system and runs by either way.
cp /bin/true "$W/out/prog"; cp /bin/true "$W/in/prog"
for f in out in; do
	out=$(for how in "exec /dev/fd/5" "exec /proc/self/fd/5" "fexecve 5"; do
		"$ST" run --fence --policy "$W/policy" -- "$DRV" $how 5<"$W/$f/prog"; echo "rc=$?"
	done | tr '\n' ' ')
	want="ENOENT rc=0 ENOENT rc=0 ENOENT rc=0 "; [ $f = in ] && want="rc=0 rc=0 rc=0 "
	check "exec by descriptor name of a file in $f: as fexecve (got: $out)" test "$out" = "$want"
done
out=$(for how in fexecve devfd; do
	"$ST" run --fence --policy "$W/policy" -- "$DRV" exec-memfd /bin/true $how; echo "rc=$?"
done | tr '\n' ' ')
check "a memfd runs under a fence, by fexecve and by /dev/fd/N (got: $out)" test "$out" = "rc=0 rc=0 "
# Without the arena, each answer of the daemon says whether its policy can hide a name
# now: a reload that brings the first deny rule filters the next listing (a new process,
# started with the run's flags from before it).
mkdir -p "$W/nr/d"; : > "$W/nr/d/visible"; : > "$W/nr/d/hidden"
printf 'allow any /\n' > "$W/nr/pol"
out=$("$ST" run --no-cache --policy "$W/nr/pol" --pidfile "$W/nr/pid" -- sh -c '
	ls "$1/d" | tr "\n" " "; echo
	printf "deny any %s\nallow any /\n" "$1/d/hidden" > "$1/pol"; kill -HUP $(cat "$1/pid")
	i=0; while ls "$1/d" | grep -q hidden && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	ls "$1/d" | tr "\n" " "' sh "$W/nr")
check "no-cache: a reload bringing a deny rule filters the next listing (got: $(echo $out))" \
	test "$(echo $out)" = "hidden visible visible"
# A path through a hidden directory and back up ("hidden/../pub/f"), or out of it by an
# absolute symlink there, fails as the kernel's walk would if the directory were not there,
# and is a violation of that directory; a ".." out of a visible directory still works.  With the arena, without it (--no-cache: each
# directory a ".." leaves is asked of the daemon) and through a symlink's target.
mkdir -p "$W/dd/hidden/sub" "$W/dd/pub"; echo p > "$W/dd/pub/f"
ln -s ../hidden/../pub/f "$W/dd/pub/via-link"; ln -s "$W/dd/pub/f" "$W/dd/hidden/abs-link"
printf 'deny any %s\nallow any /\n' "$W/dd/hidden" > "$W/dd/pol"
for mode in "" --no-cache; do
	R8=$W/dd/r$mode.jsonl
	out=$("$ST" run $mode --policy "$W/dd/pol" --report "$R8" -- sh -c '
		for p in "$1/hidden/../pub/f" "$1/hidden/sub/../../pub/f" "$1/pub/via-link" \
			"$1/hidden/abs-link" "$1/pub/../pub/f"; do
			"$2" stat "$p"; "$2" open-r "$p"
		done' sh "$W/dd" "$DRV" | tr '\n' ' ')
	check "through a hidden directory and back ${mode:-(arena)}: ENOENT (got: $out)" \
		test "$out" = "ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT ok ok "
	check "through a hidden directory ${mode:-(arena)}: a violation of it" \
		sh -c "grep '\"type\":\"violation\"' '$R8' | grep -qF '\"path\":\"$W/dd/hidden\"'"
	check "through a hidden directory ${mode:-(arena)}: pub/f not a violation" \
		sh -c "! grep '\"type\":\"violation\"' '$R8' | grep -qF '$W/dd/pub'"
	# a process whose working directory is hidden (it was there before the run) may
	# leave it by "..", as it may leave a removed one: it holds it, no name is looked up;
	# back down by name, or the same bytes spelled from "/", it is hidden again (the
	# first answer is not kept for the spelling)
	out=$(cd "$W/dd/hidden/sub" && "$ST" run $mode --policy "$W/dd/pol" -- sh -c \
		'cat ../../pub/f; "$1" stat ../../hidden/sub/../../pub/f; "$1" stat "$2/../../pub/f"
		cat ../../pub/f' sh "$DRV" "$W/dd/hidden/sub" | tr '\n' ' ')
	check "from a hidden working directory ${mode:-(arena)}: .. leaves it (got: $out)" \
		test "$out" = "p ENOENT ENOENT p "
done
# a short spelling whose resolution is longer than the room beside the access's fields
# (shim.h ST_RHEAD, 512 bytes) is resolved again into the long buffer: judged by where it
# leads, absolute or relative to the cwd (joined in place), and recorded there
seg=d123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789
long="$seg/$seg/$seg/$seg/$seg/$seg"
mkdir -p "$W/out/$long" "$W/in/$long"
echo hidden > "$W/out/$long/f"; echo seen > "$W/in/$long/f"
ln -s "$W/out/$long" "$W/in/tolongout"; ln -s "$W/in/$long" "$W/in/tolongin"
R=$W/rl.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- sh -c \
	'"$1" open-r "$2/in/tolongout/f"; "$1" open-r tolongout/f; "$1" open-r "$2/in/tolongin/f"; "$1" open-r tolongin/f' \
	sh "$DRV" "$W" | tr '\n' ' ')
check "a link to a long path: judged where it leads (got: $out)" test "$out" = "ENOENT ENOENT ok ok "
check "... and recorded there" grep -q "\"$W/in/$long/f\"" "$R"
check "... the denied one a violation under its long name" sh -c "grep '\"type\":\"violation\"' '$R' | grep -q '$W/out/$long/f'"
# the run's first policy sits in the arena header's page when it fits (2,560 bytes,
# arena.h SANDTRACE_ARENA_POLICY0_MAX), else where the bump puts it: the same
# verdicts either way, with the decisive rules after 60 long ones
{
	cat "$W/policy"
	i=0
	while [ $i -lt 60 ]; do
		echo "allow read $W/a-long-prefix-that-matches-nothing-in-this-test/number-$i"
		i=$((i+1))
	done
} > "$W/policy-big"
[ "$(wc -c < "$W/policy-big")" -gt 4096 ] || bad "policy-big is smaller than the header's room"
for pol in policy policy-big; do
	out=$("$ST" run --fence --policy "$W/$pol" -- sh -c \
		'"$1" open-r "$2/out/secret"; "$1" open-r "$2/ro/f"; "$1" stat "$2/in/mine"' sh "$DRV" "$W" | tr '\n' ' ')
	check "$pol: a denied read hidden, allowed ones seen (got: $out)" test "$out" = "ENOENT ok ok "
done
# a name the kernel fails at, then "..": a symlink loop (ELOOP) and, for a user who may not
# search it, a directory (EACCES).  The rest was folded lexically past it, so the call was
# judged as a hidden file the kernel never reached: refused with ENOENT and a violation,
# where the untraced call fails with ELOOP or EACCES (twice: the second answer is the cache's)
ln -s loopb "$W/in/loopa"; ln -s loopa "$W/in/loopb"
for nc in "" --no-cache; do
	R=$W/rloop$nc.jsonl
	out=$(cd "$W/in" && "$ST" run $nc --fence --policy "$W/policy" --report "$R" -- sh -c \
		'"$1" stat loopa/../../out/secret; "$1" stat loopa/../../out/secret' sh "$DRV" | tr '\n' ' ')
	check "a symlink loop then ..$nc: ELOOP as untraced (got: $out)" test "$out" = "ELOOP ELOOP "
	check "... no violation$nc" test "$(summary_field "$R" violations)" = 0
	check "... the loop recorded$nc" sh -c "'$ST' report --list '$R' | grep -qE '^Q	$W/in/loop[ab]\$'"
done
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null 2>&1; then
	N=$(mktemp -d /tmp/st-fence-nobody.XXXXXX)
	chmod 755 "$N"
	mkdir -p "$N/in/shut/sub" "$N/out"
	echo s > "$N/out/secret"
	chmod 700 "$N/in/shut"
	chmod 777 "$N/in"
	printf 'allow any %s/in\nallow read %s/tests/drivers\nallow exec %s/tests/drivers\n%s\n' \
		"$N" "$B" "$B" "$(system_rules)" > "$N/policy"
	for nc in "" --no-cache; do
		out=$(cd "$N/in" && setpriv --reuid=65534 --regid=65534 --clear-groups "$ST" run $nc --fence \
			--policy "$N/policy" --report "$N/in/r$nc.jsonl" -- /bin/sh -c \
			'"$1" stat shut/sub/../../../out/secret; "$1" stat shut/../../out/secret; "$1" stat shut/../../out/secret' \
			sh "$DRV" | tr '\n' ' ')
		check "a directory its user may not search, then ..$nc: EACCES as untraced (got: $out)" \
			test "$out" = "EACCES EACCES EACCES "
		check "... no violation$nc" test "$(summary_field "$N/in/r$nc.jsonl" violations)" = 0
	done
	rm -rf "$N"
else
	echo "skip - a directory its user may not search: needs root and setpriv"
fi
# a call of two names, one of them null: the kernel copies both names in and fails
# (EFAULT) before it looks either up; the other name was judged first, so a hidden one
# made the call fail with ENOENT and a violation (libc's link: GCC had dropped the test)
mkdir -p "$W/out/nd"
R=$W/rnull.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- "$DRV" null-pairs "$W/out/nd" | tr '\n' ' ')
untr=$("$DRV" null-pairs "$W/out/nd" | tr '\n' ' ')
check "two names, one null: EFAULT as untraced, the hidden one not judged (got: $out; untraced: $untr)" \
	test "$out" = "$untr"
check "... no violation" test "$(summary_field "$R" violations)" = 0
# A refused call fails as it would on a name that does not exist: a flag, mode or
# length the kernel refuses before any lookup is EINVAL for a hidden name too, as
# untraced (ENOENT before ST_REFUSAL); the probe touches nothing.
mkdir -p "$W/ba/hid" "$W/ba/in"
echo keep > "$W/ba/hid/f"
printf 'deny any %s\nallow any /\n' "$W/ba/hid" > "$W/ba/policy"
untr=$("$DRV" badargs "$W/ba/hid/f" "$W/ba/in/o" | tr '\n' ' ')
R=$W/ba/r.jsonl
out=$("$ST" run --fence --policy "$W/ba/policy" --report "$R" -- "$DRV" badargs "$W/ba/hid/f" "$W/ba/in/o" | tr '\n' ' ')
check "bad arguments on a hidden name: the untraced errors (got: $out)" test "$out" = "$untr"
check "... EINVAL each, untraced" test "$("$DRV" badargs "$W/ba/hid/f" "$W/ba/in/o" | grep -cv '=EINVAL$')" = 0
check "... the hidden file untouched" test "$(cat "$W/ba/hid/f")" = keep
check "... no name made beside it" test -z "$(ls -A "$W/ba/in")"
out=$("$ST" run --fence --policy "$W/ba/policy" --report "$R" -- "$DRV" stat "$W/ba/hid/f")
check "... a plain stat of it still hidden (got: $out)" test "$out" = ENOENT
# mkstemp and its family check the template (EINVAL) and fill its X's before they
# open: a hidden directory gives what a missing one does, template letters and all
for t in fooXXXXXX foo fooXXXXX; do
	untr=$("$DRV" mktemps "$W/ba/none/$t" | tr '\n' ' ')
	out=$("$ST" run --fence --policy "$W/ba/policy" --report "$R" -- "$DRV" mktemps "$W/ba/hid/$t" | tr '\n' ' ')
	check "mkstemp family, template $t in a hidden directory: as in a missing one (got: $out)" \
		test "$out" = "$untr"
done
check "... nothing made in the hidden directory" test "$(ls -A "$W/ba/hid")" = f
# realpath is not probed: glibc leaves what it resolved before failing in the
# caller's buffer, which for the probe's name was "/proc/-1"
out=$("$ST" run --fence --policy "$W/ba/policy" --report "$R" -- "$DRV" realpath-buf "$W/ba/hid/f")
check "a hidden name's realpath: ENOENT, the buffer as it was (got: $out)" \
	test "$out" = "ENOENT buf=ZZZZZZZZZZZZZZZZ"
# A name the call does not look up (a tmpfs mount's source, fsconfig's "source"
# string) succeeds on any string: the refusal's probe must not be made on it (it
# mounted a tmpfs with ST_ABSENT's name, closed descriptor 0 as if the mount's 0 were
# a descriptor, and gave the context a source, so the next one was EINVAL)
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	mkdir -p "$W/ba/mnt"
	out=$(unshare -m --propagation private "$ST" run --fence --policy "$W/ba/policy" -- \
		"$DRV" mount-source "$W/ba/hid/dev" "$W/ba/mnt" < /dev/null | tr '\n' ' ')
	check "a hidden source of a tmpfs: refused, nothing mounted, fd 0 kept, no source set (got: $out)" \
		test "$out" = "mount=ENOENT source=none fd0 open fsconfig=ENOENT fsconfig-again=ok "
else
	echo "skip - a hidden mount source: needs root and unshare -m"
fi
# system(), popen() and wordexp() run /bin/sh by libc's own spawn: the shell is
# judged as an exec; one the sandbox hides is not run, and each call fails as libc's
# does with no /bin/sh (system: status 127; popen: NULL, ENOMEM; wordexp:
# WRDE_NOSPACE, all three seen with /usr/bin hidden under a tmpfs).  The shell ran
# before, recorded but unjudged.
mkdir -p "$W/sh"
cat > "$W/sh/policy" <<P
allow read /usr/lib
allow read /etc
allow read /proc
allow read /dev
allow read $B/tests/drivers
allow exec $B/tests/drivers
allow any $W/sh
P
R=$W/sh/r.jsonl
out=$(cd "$W/sh" && "$ST" run --fence --policy "$W/sh/policy" --report "$R" -- "$DRV" shell hid | tr '\n' ' ')
check "system/popen/wordexp with a hidden /bin/sh: the shell not run, libc's failures (got: $out)" \
	test "$out" = "system=32512 popen=NULL ENOMEM wordexp=1  "
check "... a violation of the shell's exec" grep -q '"type":"violation",.*"kind":"X","path":"/usr/bin/dash"' "$R"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	untr=$(unshare -m sh -c 'mount -t tmpfs none /usr/bin && exec "$0" shell hid' "$DRV" 2>/dev/null | tr '\n' ' ')
	check "... as untraced with no /bin/sh (got: $untr)" test "$out" = "$untr"
fi
printf 'allow exec /usr/bin\nallow read /usr/bin\n' >> "$W/sh/policy"
out=$(cd "$W/sh" && "$ST" run --fence --policy "$W/sh/policy" --report "$W/sh/r2.jsonl" -- "$DRV" shell vis | tr '\n' ' ')
check "... an allowed shell runs (got: $out)" test "$out" = "vis-system system=0 popen=read vis-popen wordexp=0 vis "
check "... and is recorded as run" has X /usr/bin/dash "$W/sh/r2.jsonl"
# a signal handler's open of a hidden file, at a 30 us timer, while the thread loops over
# relative stats, opens and accesses of allowed names (the shim's own code most of the time)
# and a scandir whose selector stats each entry (a checked call inside a forwarded one): a
# handler's call that comes while the thread is inside the shim's code, or forwarding its
# deepest nested call, passed unchecked (thousands of the 20,000 opened the file); checked
# aside now, it never may
mkdir -p "$W/in/storm"; : > "$W/in/storm/a"; : > "$W/in/storm/b"
out=$(cd "$W/in/storm" && "$ST" run --fence --policy "$W/policy" -- "$DRV" sig-storm open "$W/out/secret" "$W/in/storm" 20000)
calls=${out#calls=}; calls=${calls%% *}
check "a handler's open of a hidden file, 20,000 times, never succeeds (got: $out)" \
	test "${out##* }" = opened=0 -a "${calls:-0}" -ge 20000
# a handler that siglongjmps out of a blocked open (of a FIFO with no writer) skips the
# shim's end of the call: its state stayed as inside the call, every later call of the
# thread went aside, and from the fourth jump on passed unchecked (the hidden file opened)
for n in 1 2 4 6; do
	out=$(cd "$W/in" && "$ST" run --fence --policy "$W/policy" -- "$DRV" jump-out "$W/in/fifo-$n" "$W/out/secret" $n)
	check "after $n siglongjmps out of a blocked open, a hidden file is still hidden (got: $out)" test "$out" = ENOENT
done
# the same jumps, each blocked open (and the last, of the hidden file) made from a deeper
# frame than the one before: the state of the calls jumped out of stayed (a deeper call
# looks nested in them), the fourth call passed unchecked and the hidden file opened.  The
# jump (every name glibc gives it) drops the state of the calls it unwinds (init.c
# st__jump_out, which reads glibc's mangled stack pointer: x86-64 only; elsewhere a call
# that cannot be checked is refused, EACCES, and the driver's later blocking open with it)
for nm in siglongjmp longjmp _longjmp __longjmp_chk; do
	for n in 4 6; do
		out=$(cd "$W/in" && "$ST" run --fence --policy "$W/policy" -- "$DRV" jump-deep "$W/in/fifo-d$n" "$W/out/secret" $n $nm)
		if [ "$(uname -m)" = x86_64 ]; then
			check "after $n ${nm}s out of blocked opens from ever deeper frames, a hidden file is still hidden (got: $out)" test "$out" = ENOENT
		else
			check "after $n ${nm}s out of blocked opens from ever deeper frames, a hidden file never opens (got: $out)" test "$out" != opened
		fi
	done
done
# a second handler's open that interrupts a call checked aside (a handler's scandir, whose
# selector blocks, while the thread's own selector blocks) cannot be checked: it passed
# unchecked (the hidden file opened); under a sandbox that can refuse it is refused now
# (EACCES), counted lost; its siglongjmp out of all of them leaves no state behind
R=$W/nest.jsonl
out=$(cd "$W/in" && "$ST" run --fence --policy "$W/policy" --report "$R" -- "$DRV" jump-nest "$W/in/nf1" "$W/in/nf2" "$W/in" "$W/out/secret")
check "a doubly nested handler's open of a hidden file is refused, and the hidden file stays hidden after the jump (got: $out)" \
	test "$out" = "handler=EACCES main=ENOENT"
check "... the call counted lost: the report says it is incomplete" test "$(summary_field "$R" complete)" = false
# the same under a deny rule, no fence: the call that cannot be checked is refused
printf 'deny read %s\n' "$W/out" > "$W/deny-out"
out=$(cd "$W/in" && "$ST" run --policy "$W/deny-out" -- "$DRV" jump-nest "$W/in/nf1" "$W/in/nf2" "$W/in" "$W/out/secret")
check "... under a deny rule too (got: $out)" test "$out" = "handler=EACCES main=ENOENT"
# a handler's open in a vfork child, interrupting a nested call (its selector's blocked
# open) before the child's exec, cannot be checked (the thread's variables are the
# suspended parent's): it passed unchecked; refused now
out=$(cd "$W/in" && "$ST" run --fence --policy "$W/policy" -- "$DRV" vfork-nest "$W/in/vf" "$W/in" "$W/out/secret")
check "a vfork child's handler's open of a hidden file is refused (got: $out)" test "$out" = EACCES
# trace only: nothing can be refused, the call passes unchecked, counted lost
R=$W/nest-t.jsonl
out=$(cd "$W/in" && "$ST" run --report "$R" -- "$DRV" jump-nest "$W/in/nf1" "$W/in/nf2" "$W/in" "$W/out/secret")
check "... trace only: it passes (got: $out)" test "$out" = "handler=opened main=opened"
check "... and the report says the trace is incomplete" test "$(summary_field "$R" complete)" = false
# a hidden zone file: localtime's wrapper swaps TZ in environ for the call (wrap_fs.c
# tz_judge), while the program's other threads read environ.  A child another thread
# spawned or forked meanwhile got the stand-in (TZ=:/proc/-1/...) for good (about a third
# of 80); now each child gets the parent's TZ, and a visible zone the same
if [ -e /usr/share/zoneinfo/UTC ]; then
	cp /usr/share/zoneinfo/UTC "$W/out/zone"
	cp /usr/share/zoneinfo/UTC "$W/in/zone"
	for z in "$W/out/zone" "$W/in/zone"; do
		out=$(TZ=$z "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-env 40)
		check "children spawned and forked during localtime with TZ=$z get that TZ (got: $out)" \
			test "$out" = "differ=0 TZ=$z"
		# ... and getenv and secure_getenv of the program's other thread meanwhile: 3,780 of
		# 200,000 reads got the stand-in (TZ=:/proc/-1/...), and 36,731 of LOCPATH's below
		out=$(TZ=$z "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-getenv 100000)
		check "getenv and secure_getenv during localtime of another thread with TZ=$z read that TZ (got: $out)" \
			test "$out" = "differ=0 TZ=$z"
		# ... and a setenv of TZ, or an unsetenv of an entry before it (the entries shift),
		# while another thread's localtime had the stand-in in: the swap put the value it took
		# out back in the old place (the value set lost; a neighbour overwritten, the
		# stand-in left for good); 224 of 3,000 values set were put back
		out=$(TZ=$z "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-setenv 3000)
		check "setenv and unsetenv during localtime of another thread with TZ=$z keep what they set (got: $out)" \
			test "$out" = "reverted=0 entries=1 TZ=last"
	done
fi
# libc's tzset also runs inside the first gmtime, gmtime_r or timegm of a process, in
# strftime's %Z of a tm with no zone name, and in libc's internal localtime (syslog's
# stamp, strptime's %s): the hidden zone file was read there (its zone
# then used by localtime_r); now each is wrapped as localtime is: as a missing file
if [ -e /usr/share/zoneinfo/Asia/Tokyo ]; then
	cp /usr/share/zoneinfo/Asia/Tokyo "$W/out/tokyo"
	for how in gmtime gmtime_r timegm strftime wcsftime syslog strptime; do
		want=$(TZ=$W/out/no-such-zone "$DRV" tz-first $how)
		out=$(TZ=$W/out/tokyo "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-first $how)
		check "a hidden zone file is not read by the tzset inside $how (got: $out, missing: $want)" \
			test -n "$want" -a "$out" = "$want"
	done
fi
# TZ not set: libc reads the default zone file, /etc/localtime.  Hidden, it was reported
# and read all the same (there is no TZ entry to swap); now the wrapper puts a TZ entry in
# for libc's call (wrap_fs.c tz_insert) and libc uses UTC, named "UTC", exactly as when the
# file cannot be read (here: /dev/null put where /etc/localtime leads).  A mount namespace of
# its own puts Tokyo's zone there, so that the default zone is not UTC.  Root only.
lt=$(readlink -f /etc/localtime 2>/dev/null)
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null &&
	[ -e /usr/share/zoneinfo/Asia/Tokyo ] && [ -f "$lt" ]; then
	# in_zone FILE CMD...: CMD with FILE's zone where /etc/localtime leads, TZ not set
	in_zone() {
		zf=$1; shift
		unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
			sh "$zf" "$lt" env -u TZ "$@"
	}
	{ printf 'deny read %s\n' "$lt"; cat "$W/policy"; } > "$W/tzpol"
	tokyo=$(in_zone /usr/share/zoneinfo/Asia/Tokyo "$DRV" tz-show -)
	want=$(in_zone /dev/null "$DRV" tz-show -)
	R=$W/tzdefault.jsonl
	out=$(in_zone /usr/share/zoneinfo/Asia/Tokyo "$ST" run --fence --policy "$W/tzpol" --report "$R" -- "$DRV" tz-show -)
	check "TZ not set, /etc/localtime hidden: libc uses UTC as for an unreadable one (got: $(echo $out), unreadable: $(echo $want))" \
		test -n "$want" -a "$out" = "$want" -a "$tokyo" != "$want"
	check "... the hidden default zone file is recorded as a violation" \
		sh -c "grep '\"type\":\"violation\"' '$R' | grep -qF '\"path\":\"$lt\"'"
	out=$(in_zone /usr/share/zoneinfo/Asia/Tokyo "$ST" run --policy "$W/tzpol" -- "$DRV" tz-show - | head -1)
	check "... and with a deny rule, no fence (got: $out)" test "$out" = "localtime_r [UTC] 0"
	# ... in a program that defines its own putenv, unsetenv and getenv (bash keeps its
	# variables in a table of its own): the entry goes into libc's environ all the same,
	# and is gone after the call
	out=$(in_zone /usr/share/zoneinfo/Asia/Tokyo "$ST" run --fence --policy "$W/tzpol" -- \
		bash -c 'printf "%(%H %Z)T\n" 0; echo "TZ=${TZ-unset}"; printenv TZ || echo none')
	check "... in bash, which defines its own putenv (got: $(echo $out))" \
		test "$(echo $out)" = "00 UTC TZ=unset none"
	# the entry put in is the call's alone: the program's other threads' getenv and
	# secure_getenv, the children they spawn or fork meanwhile, and environ at the end
	# see no TZ
	out=$(in_zone /usr/share/zoneinfo/Asia/Tokyo "$ST" run --fence --policy "$W/tzpol" -- "$DRV" tz-unset 20000)
	check "TZ not set, /etc/localtime hidden: no TZ seen by other threads or children meanwhile (got: $out)" \
		test "$out" = "differ=0 entries=0 TZ=(unset)"
else
	echo "skip - TZ not set and /etc/localtime hidden: needs root and a private mount namespace (unshare -m)"
fi
# ... and the insertion's putenv and unsetenv (libc's, under libc's environment lock) run
# in a thread of the program's that never sets a variable itself: a child forked by
# another thread meanwhile inherited that lock taken (libc's fork does not take it) and
# its first setenv waited for ever (about every other child).  A fork waits for them.
{ printf 'deny read /etc/localtime\n'; cat "$W/policy"; } > "$W/tzpol2"
out=$(env -u TZ "$ST" run --fence --policy "$W/tzpol2" -- "$DRV" tz-forkenv 200)
check "TZ not set, /etc/localtime hidden: a child forked meanwhile can set a variable (got: $out)" \
	test "$out" = "hung=0 of 200"
out=$(env -u TZ "$ST" run --policy "$W/tzpol2" -- "$DRV" tz-forkenv 200)
check "... and with a deny rule, no fence (got: $out)" test "$out" = "hung=0 of 200"
# The wrappers looked TZ up (getenv) at every localtime_r, ctime_r and gmtime_r, where
# libc's own code reads it only at the process's first: a program whose other thread
# sets and clears its environment meanwhile (clearenv frees the array) crashed traced
# (SIGSEGV in tz_judge's getenv, 5 of 5 runs) and ran untraced
out=$("$DRV" tz-clearenv 100000)
check "untraced: localtime_r in a thread while another clears environ (got: $out)" test "$out" = done
out=$("$ST" run -- "$DRV" tz-clearenv 100000); rc=$?
check "trace only: localtime_r in a thread while another clears environ does not crash (got: $rc $out)" \
	test "$rc/$out" = 0/done
out=$("$ST" run --fence --policy "$W/policy" -- "$DRV" tz-clearenv 100000); rc=$?
check "fenced: localtime_r in a thread while another clears environ does not crash (got: $rc $out)" \
	test "$rc/$out" = 0/done
# the same for LOCPATH, which newlocale's wrapper swaps when it names a hidden directory
mkdir -p "$W/out/loc" "$W/in/loc"
for l in "$W/out/loc" "$W/in/loc"; do
	out=$(LOCPATH=$l "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-env 40 LOCPATH)
	check "children spawned and forked during newlocale with LOCPATH=$l get that LOCPATH (got: $out)" \
		test "$out" = "differ=0 LOCPATH=$l"
	out=$(LOCPATH=$l "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-getenv 100000 LOCPATH)
	check "getenv and secure_getenv during newlocale of another thread with LOCPATH=$l read that LOCPATH (got: $out)" \
		test "$out" = "differ=0 LOCPATH=$l"
	out=$(LOCPATH=$l "$ST" run --fence --policy "$W/policy" -- "$DRV" tz-setenv 3000 LOCPATH)
	check "setenv and unsetenv during newlocale of another thread with LOCPATH=$l keep what they set (got: $out)" \
		test "$out" = "reverted=0 entries=1 LOCPATH=last"
done
done_
