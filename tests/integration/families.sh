#!/bin/sh
# tests/integration/families.sh - every path-taking entry point (drivers/families.c), traced: same output as untraced and the right kind on the right path; fenced: hidden, nothing changes.
. "$(dirname "$0")/lib.sh"
FAM=$B/tests/drivers/families

# a tiny library for dlopen/dlmopen by path
printf 'int fam_lib(void) { return 42; }\n' > "$W/lib.c"
cc -shared -fPIC -o "$W/lib.so" "$W/lib.c" || bad "cc -shared"
export FAM_SO=$W/lib.so

# ---------------------------------------------------------------------------
# (a) trace only: untraced and traced runs print the same lines, and the
# report lists each call's kind on its resolved absolute path.
# ---------------------------------------------------------------------------
mkdir "$W/t1" "$W/t2" "$W/cwd"
cd "$W/cwd"
"$FAM" "$W/t1" setup && "$FAM" "$W/t2" setup || bad "setup"
"$FAM" "$W/t1" run > "$W/out1" 2>"$W/err1"
R=$W/trace.jsonl
"$ST" run --report "$R" -- "$FAM" "$W/t2" run > "$W/out2" 2>"$W/err2"
check "traced run exits 0" test $? -eq 0
check "untraced run: one line per case" test "$(wc -l < "$W/out1")" -eq "$("$FAM" "$W/t1" list | wc -l)"
if cmp -s "$W/out1" "$W/out2"; then ok "traced output identical to untraced"; else
	bad "traced output differs from untraced:"; diff "$W/out1" "$W/out2" | sed 's/^/    /'
fi
check "untraced: all calls ok but the missing/ELOOP ones and the gone sockets" \
	test "$(grep -v ' ok$' "$W/out1" | grep -cv ' ECONNREFUSED$')" -eq 3
check "untraced: the gone sockets are ECONNREFUSED (the name was found)" \
	test "$(grep -c ' ECONNREFUSED$' "$W/out1")" -eq 8
"$ST" report --list "$R" > "$W/list"

# The expectation table: NAME KIND PATH (relative to the case's W unless
# absolute; ? and * are wildcards).  One line per function; calls that touch
# two names, or a chain, have a line per name.
cat > "$W/expect" <<'T'
open                    R fam-open
open-symlink            R fam-open-symlink.target
open-missing            N fam-open-missing
open-nofollow           R fam-open-nofollow
open-rdonly-creat       W fam-open-rdonly-creat
open-rdonly-trunc       W fam-open-rdonly-trunc
open-wronly             W fam-open-wronly
open-creat-excl         W fam-open-creat-excl
open-path               Q fam-open-path
open-directory          D fam-open-directory
open64                  R fam-open64
openat                  R fam-openat
openat-creat            W fam-openat-creat
openat64                R fam-openat64
__open_2                R fam-__open_2
__open64_2              R fam-__open64_2
__openat_2              R fam-__openat_2
__openat64_2            R fam-__openat64_2
__open                  R fam-__open
__open64                W fam-__open64
creat                   W fam-creat
creat64                 W fam-creat64
fopen-r                 R fam-fopen-r
fopen-rplus             W fam-fopen-rplus
fopen-w                 W fam-fopen-w
fopen-a                 W fam-fopen-a
fopen-x                 W fam-fopen-x
fopen64                 R fam-fopen64
fopen64-w               W fam-fopen64-w
setmntent               R fam-setmntent
ftok                    Q fam-ftok
freopen                 R fam-freopen
freopen64               W fam-freopen64
open-tmpfile            W fam-open-tmpfile
linkat-procfd           W fam-linkat-procfd.dir
linkat-procfd           W fam-linkat-procfd
linkat-procfd           Q fam-linkat-procfd.dir/#*
linkat-empty            W fam-linkat-empty.dir
linkat-empty            W fam-linkat-empty
linkat-empty            Q fam-linkat-empty.dir/#*
linkat-empty-fd         R fam-linkat-empty-fd.src
linkat-empty-fd         Q fam-linkat-empty-fd.src
linkat-empty-fd         W fam-linkat-empty-fd
stat                    Q fam-stat.target
stat-missing            N fam-stat-missing
lstat                   Q fam-lstat
fstatat                 Q fam-fstatat.target
fstatat-nofollow        Q fam-fstatat-nofollow
fstatat-empty           Q fam-fstatat-empty
stat64                  Q fam-stat64.target
lstat64                 Q fam-lstat64
fstatat64               Q fam-fstatat64.target
fstatat64-nofollow      Q fam-fstatat64-nofollow
__xstat                 Q fam-__xstat.target
__lxstat                Q fam-__lxstat
__fxstatat              Q fam-__fxstatat.target
__xstat64               Q fam-__xstat64.target
__lxstat64              Q fam-__lxstat64
__fxstatat64            Q fam-__fxstatat64
statx                   Q fam-statx.target
statx-nofollow          Q fam-statx-nofollow
statx-empty             Q fam-statx-empty
access                  Q fam-access
faccessat               Q fam-faccessat
faccessat-eaccess       Q fam-faccessat-eaccess
faccessat-nofollow      Q fam-faccessat-nofollow
faccessat-empty         Q fam-faccessat-empty
euidaccess              Q fam-euidaccess
eaccess                 Q fam-eaccess
readlink                Q fam-readlink
readlinkat              Q fam-readlinkat
__readlink_chk          Q fam-__readlink_chk
__readlinkat_chk        Q fam-__readlinkat_chk
link                    Q fam-link.src
link                    W fam-link
linkat                  Q fam-linkat.src
linkat                  W fam-linkat
linkat-follow           Q fam-linkat-follow.src.target
linkat-follow           W fam-linkat-follow
symlink                 W fam-symlink
symlinkat               W fam-symlinkat
realpath                Q fam-realpath.target
__realpath_chk          Q fam-__realpath_chk.target
canonicalize_file_name  Q fam-canonicalize_file_name.target
mkdir                   W fam-mkdir
mkdirat                 W fam-mkdirat
rmdir                   W fam-rmdir.d
unlink                  W fam-unlink
unlinkat                W fam-unlinkat
unlinkat-removedir      W fam-unlinkat-removedir.d
remove                  W fam-remove
remove-dir              W fam-remove-dir.d
rename                  W fam-rename.src
rename                  W fam-rename
renameat                W fam-renameat.src
renameat                W fam-renameat
renameat2-noreplace     W fam-renameat2-noreplace.src
renameat2-noreplace     W fam-renameat2-noreplace
renameat2-exchange      W fam-renameat2-exchange.src
renameat2-exchange      W fam-renameat2-exchange
mknod                   W fam-mknod
mknodat                 W fam-mknodat
mkfifo                  W fam-mkfifo
mkfifoat                W fam-mkfifoat
__xmknod                W fam-__xmknod
__xmknodat              W fam-__xmknodat
chmod                   W fam-chmod
fchmodat                W fam-fchmodat
fchmodat-nofollow       W fam-fchmodat-nofollow
lchmod                  W fam-lchmod
chown                   W fam-chown
lchown                  W fam-lchown
fchownat                W fam-fchownat
fchownat-nofollow       W fam-fchownat-nofollow
fchownat-empty          W fam-fchownat-empty
truncate                W fam-truncate
truncate64              W fam-truncate64
utime                   W fam-utime
utimes                  W fam-utimes
lutimes                 W fam-lutimes
futimesat               W fam-futimesat
utimensat               W fam-utimensat
utimensat-nofollow      W fam-utimensat-nofollow
utimensat-empty         W fam-utimensat-empty
futimens                W fam-futimens
fchmod                  W fam-fchmod
fchown                  W fam-fchown
futimes                 W fam-futimes
fsetxattr               W fam-fsetxattr
fremovexattr            W fam-fremovexattr
ioctl-setflags          W fam-ioctl-setflags
ioctl-fssetxattr        W fam-ioctl-fssetxattr
setxattr                W fam-setxattr
lsetxattr               W fam-lsetxattr
getxattr                Q fam-getxattr
lgetxattr               Q fam-lgetxattr
listxattr               Q fam-listxattr
llistxattr              Q fam-llistxattr
removexattr             W fam-removexattr
lremovexattr            W fam-lremovexattr
statfs                  Q fam-statfs
statfs64                Q fam-statfs64
statvfs                 Q fam-statvfs
statvfs64               Q fam-statvfs64
pathconf                Q fam-pathconf
name_to_handle_at       Q fam-name_to_handle_at
name_to_handle_at-empty Q fam-name_to_handle_at-empty
inotify_add_watch       Q fam-inotify_add_watch
bind                    W fam-bind
connect                 Q fam-connect
sendto                  Q fam-sendto
sendmsg                 Q fam-sendmsg
sendmmsg                Q fam-sendmmsg
SYS_bind                W fam-SYS_bind
SYS_connect             Q fam-SYS_connect
SYS_sendto              Q fam-SYS_sendto
SYS_sendmsg             Q fam-SYS_sendmsg
SYS_sendmmsg            Q fam-SYS_sendmmsg
mkstemp                 W fam-mkstemp.??????
mkstemp64               W fam-mkstemp64.??????
mkostemp                W fam-mkostemp.??????
mkostemp64              W fam-mkostemp64.??????
mkstemps                W fam-mkstemps.??????.c
mkstemps64              W fam-mkstemps64.??????.c
mkostemps               W fam-mkostemps.??????.c
mkostemps64             W fam-mkostemps64.??????.c
mkdtemp                 W fam-mkdtemp.??????
tmpfile                 W /tmp
tmpfile64               W /tmp
opendir                 D fam-opendir
fdopendir               D fam-fdopendir
scandir                 D fam-scandir
scandir64               D fam-scandir64
scandirat               D fam-scandirat
scandirat64             D fam-scandirat64
nftw                    D fam-nftw
nftw                    Q fam-nftw/file
nftw64                  D fam-nftw64
ftw                     D fam-ftw
ftw64                   D fam-ftw64
fts                     D fam-fts
fts                     Q fam-fts/file
fts64                   D fam-fts64
fts64                   Q fam-fts64/file
glob                    D fam-glob
glob                    Q fam-glob/file
glob64                  D fam-glob64
glob64                  Q fam-glob64/file
glob-literal            Q fam-glob-literal
chdir                   Q fam-chdir
chdir                   R fam-chdir/file
fchdir                  D fam-fchdir
fchdir                  R fam-fchdir/file
chroot                  Q fam-chroot
dlopen                  R fam-dlopen
dlmopen                 R fam-dlmopen
execve                  X fam-execve
execv                   X fam-execv
execvp                  X fam-execvp
execvpe                 X fam-execvpe
execl                   X fam-execl
execlp                  X fam-execlp
execle                  X fam-execle
execveat                X fam-execveat
execveat-empty          X fam-execveat-empty
fexecve                 X fam-fexecve
posix_spawn             X fam-posix_spawn
posix_spawn             W fam-posix_spawn.out
posix_spawnp            X fam-posix_spawnp
posix_spawnp            R fam-posix_spawnp.in
posix_spawn-addopen     W fam-posix_spawn-addopen
posix_spawn-addchdir    Q fam-posix_spawn-addchdir
popen                   X fam-popen
system                  X fam-system
SYS_open                R fam-SYS_open
SYS_creat               W fam-SYS_creat
SYS_openat              R fam-SYS_openat
SYS_openat-creat        W fam-SYS_openat-creat
SYS_openat2             R fam-SYS_openat2
SYS_stat                Q fam-SYS_stat.target
SYS_lstat               Q fam-SYS_lstat
SYS_newfstatat          Q fam-SYS_newfstatat.target
SYS_statx               Q fam-SYS_statx
SYS_access              Q fam-SYS_access
SYS_faccessat           Q fam-SYS_faccessat
SYS_faccessat2          Q fam-SYS_faccessat2
SYS_readlink            Q fam-SYS_readlink
SYS_readlinkat          Q fam-SYS_readlinkat
SYS_rename              W fam-SYS_rename.src
SYS_rename              W fam-SYS_rename
SYS_renameat            W fam-SYS_renameat.src
SYS_renameat            W fam-SYS_renameat
SYS_renameat2           W fam-SYS_renameat2.src
SYS_renameat2           W fam-SYS_renameat2
SYS_unlink              W fam-SYS_unlink
SYS_unlinkat            W fam-SYS_unlinkat
SYS_rmdir               W fam-SYS_rmdir.d
SYS_mkdir               W fam-SYS_mkdir
SYS_mkdirat             W fam-SYS_mkdirat
SYS_link                Q fam-SYS_link.src
SYS_link                W fam-SYS_link
SYS_linkat              Q fam-SYS_linkat.src
SYS_linkat              W fam-SYS_linkat
SYS_symlink             W fam-SYS_symlink
SYS_symlinkat           W fam-SYS_symlinkat
SYS_mknod               W fam-SYS_mknod
SYS_mknodat             W fam-SYS_mknodat
SYS_chmod               W fam-SYS_chmod
SYS_fchmodat            W fam-SYS_fchmodat
SYS_fchmodat2           W fam-SYS_fchmodat2
SYS_chown               W fam-SYS_chown
SYS_lchown              W fam-SYS_lchown
SYS_fchownat            W fam-SYS_fchownat
SYS_truncate            W fam-SYS_truncate
SYS_utime               W fam-SYS_utime
SYS_utimes              W fam-SYS_utimes
SYS_futimesat           W fam-SYS_futimesat
SYS_utimensat           W fam-SYS_utimensat
SYS_utimensat-fd        W fam-SYS_utimensat-fd
SYS_setxattr            W fam-SYS_setxattr
SYS_getxattr            Q fam-SYS_getxattr
SYS_listxattr           Q fam-SYS_listxattr
SYS_removexattr         W fam-SYS_removexattr
SYS_statfs              Q fam-SYS_statfs
SYS_chdir               Q fam-SYS_chdir
SYS_chdir               R fam-SYS_chdir/file
SYS_fchdir              D fam-SYS_fchdir
SYS_fchdir              R fam-SYS_fchdir/file
SYS_fchmod              W fam-SYS_fchmod
SYS_fchown              W fam-SYS_fchown
SYS_fsetxattr           W fam-SYS_fsetxattr
SYS_fremovexattr        W fam-SYS_fremovexattr
SYS_ioctl-setflags      W fam-SYS_ioctl-setflags
SYS_chroot              Q fam-SYS_chroot
SYS_execve              X fam-SYS_execve
SYS_execveat            X fam-SYS_execveat
T
# the calls of Linux 6.13 and 6.17, where the driver lists them (the kernel has them)
if "$FAM" "$W/t1" list | grep -q '^SYS_file_getattr '; then
	cat >> "$W/expect" <<'T'
SYS_setxattrat          W fam-SYS_setxattrat
SYS_getxattrat          Q fam-SYS_getxattrat
SYS_listxattrat         Q fam-SYS_listxattrat
SYS_removexattrat       W fam-SYS_removexattrat
SYS_file_getattr        Q fam-SYS_file_getattr
SYS_file_setattr        W fam-SYS_file_setattr
T
fi
# the GLIBC_2.2.5 versions that behave differently (x86-64, where the driver has them)
if "$FAM" "$W/t1" list | grep -q '^realpath-old '; then
	cat >> "$W/expect" <<'T'
realpath-old            Q fam-realpath-old.target
nftw-old                D fam-nftw-old
nftw64-old              D fam-nftw64-old
glob-old                Q fam-glob-old/file
glob64-old              Q fam-glob64-old/file
posix_spawn-old         X fam-posix_spawn-old
posix_spawnp-old        X fam-posix_spawnp-old
T
fi

# every case of the driver has at least one line in the table
"$FAM" "$W/t1" list | cut -d' ' -f1 | while read -r n; do
	grep -q "^$n " "$W/expect" || echo "$n"
done > "$W/untabled"
check "every driver case has an expectation ($(tr '\n' ' ' < "$W/untabled"))" test ! -s "$W/untabled"

python3 - "$W/expect" "$W/list" "$W/t2" > "$W/verdicts" <<'PY'
import fnmatch, sys
exp, lst, root = sys.argv[1:4]
seen = set(l.rstrip('\n') for l in open(lst))
for line in open(exp):
    f = line.split()
    if len(f) != 3:
        continue
    name, kind, path = f
    full = path if path.startswith('/') else root + '/' + path
    want = kind + '\t' + full
    hit = want in seen or any(fnmatch.fnmatchcase(s, want) for s in seen)
    print('%d %s: %s %s' % (hit, name, kind, full))
PY
while read -r v desc; do
	if [ "$v" = 1 ]; then PASS=$((PASS+1)); else bad "recorded $desc"; fi
done < "$W/verdicts"
echo "     ($(grep -c '^1' "$W/verdicts") of $(wc -l < "$W/verdicts") expected records present)"

# ---------------------------------------------------------------------------
# (b) fenced, W outside the sandbox: every call fails with ENOENT, and nothing
# under W changes.  The *at calls use a descriptor of W opened before the run.
# ---------------------------------------------------------------------------
F=$W/fenced
mkdir "$F" "$W/scratch"
"$FAM" "$F" setup || bad "fenced setup"
cp "$W/lib.so" "$W/scratch/"
cat > "$W/policy" <<P
$(system_rules)
allow read /lib
allow read /lib64
allow exec /lib
allow exec /lib64
allow read $B/tests/drivers
allow exec $B/tests/drivers
allow any $W/scratch
default deny
P
snapshot() { # a listing of everything under $1, with sizes, modes, times, xattrs and checksums
	(cd "$1" && find . -printf '%p %y %m %U %G %s %T@ %l\n' | LC_ALL=C sort
	 find . -type f -exec md5sum {} + | LC_ALL=C sort
	 python3 -c 'import os,sys
for d,ds,fs in sorted(os.walk(".")):
    for n in sorted(ds+fs):
        p=os.path.join(d,n)
        try: print(p, sorted(os.listxattr(p, follow_symlinks=False)))
        except OSError as e: print(p, e.errno)')
}
snapshot "$F" > "$W/before"
cd "$W/scratch"
RF=$W/fenced.jsonl
FAM_DIRFD=9 "$ST" run --fence --policy "$W/policy" --report "$RF" -- "$FAM" "$F" run \
	> "$W/outf" 2>"$W/errf" 9<"$F"
check "fenced run exits 0" test $? -eq 0
check "fenced run: one line per case" test "$(wc -l < "$W/outf")" -eq "$(wc -l < "$W/out1")"
# tmpfile() creates in /tmp, which is on the way to the allowed $W/scratch: visible, so
# the refused write is EACCES ("visible but not writable"), not ENOENT
grep -v ' ENOENT$' "$W/outf" | grep -vx 'tmpfile EACCES' | grep -vx 'tmpfile64 EACCES' > "$W/notenoent"
if [ -s "$W/notenoent" ]; then
	bad "fenced calls that did not fail with ENOENT:"; sed 's/^/    /' "$W/notenoent"
else
	ok "fenced: every call fails with ENOENT"
fi
snapshot "$F" > "$W/after"
if cmp -s "$W/before" "$W/after"; then ok "fenced: nothing under W changed"; else
	bad "fenced: W changed:"; diff "$W/before" "$W/after" | sed 's/^/    /'
fi
check "fenced: violations reported" test "$(summary_field "$RF" violations)" -gt 0

# ---------------------------------------------------------------------------
# (c) the mount API (FAM_MOUNT=1: open_tree, open_tree_attr, move_mount, fspick,
# mount_setattr, fsconfig, by libc and syscall()), as root, each run in a private
# mount namespace of its own where setup's bind mounts stay for it: traced as in
# (a); fenced as in (b), and fenced with W allowed (a clone's descriptor, which
# the kernel names "/", must not be judged as "/").  Skipped without root.
# ---------------------------------------------------------------------------
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	export FAM_MOUNT=1
	mkdir "$W/m1" "$W/m2" "$W/m3" "$W/scratch/m4"
	in_ns() { unshare -m --propagation private sh -c "$1"; }
	in_ns "'$FAM' '$W/m1' setup && '$FAM' '$W/m1' run" > "$W/mout1" 2>&1
	RM=$W/mtrace.jsonl
	in_ns "'$FAM' '$W/m2' setup && '$ST' run --report '$RM' -- '$FAM' '$W/m2' run" > "$W/mout2" 2>&1
	check "mount API: one line per case" test "$(wc -l < "$W/mout1")" -eq "$(FAM_MOUNT=1 "$FAM" "$W/m1" list | wc -l)"
	if cmp -s "$W/mout1" "$W/mout2"; then ok "mount API: traced output identical to untraced"; else
		bad "mount API: traced output differs from untraced:"; diff "$W/mout1" "$W/mout2" | sed 's/^/    /'
	fi
	cat > "$W/mexpect" <<'T'
open_tree               Q fam-open_tree
open_tree-clone         R fam-open_tree-clone
open_tree-symlink       R fam-open_tree-symlink.target
open_tree-nofollow      Q fam-open_tree-nofollow
open_tree-empty         R fam-open_tree-empty
move_mount              R fam-move_mount
move_mount              W fam-move_mount.tgt
move_mount-detached     R fam-move_mount-detached
move_mount-detached     W fam-move_mount-detached.tgt
move_mount-tsymlinks    R fam-move_mount-tsymlinks
move_mount-tsymlinks    W fam-move_mount-tsymlinks.tgt.target
move_mount-nofollow     R fam-move_mount-nofollow
move_mount-nofollow     W fam-move_mount-nofollow
move_mount-tempty       R fam-move_mount-tempty
move_mount-tempty       W fam-move_mount-tempty.tgt
fspick                  W fam-fspick
fspick-empty            W fam-fspick-empty
mount_setattr           W fam-mount_setattr
mount_setattr-empty     W fam-mount_setattr-empty
fsconfig-path           R fam-fsconfig-path
fsconfig-path-empty     R fam-fsconfig-path-empty
fsconfig-source         R fam-fsconfig-source
SYS_open_tree           R fam-SYS_open_tree
SYS_move_mount          R fam-SYS_move_mount
SYS_move_mount          W fam-SYS_move_mount.tgt
SYS_move_mount-null     R fam-SYS_move_mount-null
SYS_move_mount-null     W fam-SYS_move_mount-null.tgt
SYS_fspick              W fam-SYS_fspick
SYS_mount_setattr       W fam-SYS_mount_setattr
SYS_fsconfig            R fam-SYS_fsconfig
SYS_open_tree_attr      R fam-SYS_open_tree_attr
T
	FAM_MOUNT=1 "$FAM" "$W/m1" list | cut -d' ' -f1 | while read -r n; do
		grep -q "^$n " "$W/mexpect" || echo "$n"
	done > "$W/muntabled"
	check "mount API: every case has an expectation ($(tr '\n' ' ' < "$W/muntabled"))" test ! -s "$W/muntabled"
	"$ST" report --list "$RM" > "$W/mlist"
	while read -r n k path; do
		# open_tree_attr only where the kernel has it (the driver lists it then)
		grep -q "^$n " "$W/mout1" || continue
		if grep -qxF "$k	$W/m2/$path" "$W/mlist"; then PASS=$((PASS+1)); else bad "mount API: recorded $n: $k $path"; fi
	done < "$W/mexpect"
	check "mount API: a clone's descriptor is not recorded as /" sh -c "! grep -qE '^[RWQ]	/\$' '$W/mlist'"
	# fenced, W hidden: each call refused with ENOENT, no mount made or moved under W;
	RMF=$W/mfenced.jsonl
	in_ns "'$FAM' '$W/m3' setup && grep -c '$W/m3' /proc/self/mountinfo > '$W/mcount1' &&
		cd '$W/scratch' && FAM_DIRFD=9 '$ST' run --fence --policy '$W/policy' --report '$RMF' -- \
		'$FAM' '$W/m3' run 9<'$W/m3'; grep -c '$W/m3' /proc/self/mountinfo > '$W/mcount2'" > "$W/moutf" 2>&1
	check "mount API fenced: one line per case" test "$(wc -l < "$W/moutf")" -eq "$(wc -l < "$W/mout1")"
	# ... but a call the kernel refuses for any name fails so on the hidden name too:
	# fsconfig's FSCONFIG_SET_PATH of a key the file system does not take is EINVAL
	# before the name is looked up (untraced too); move_mount-nofollow's EINVAL comes
	# after the lookup (the link is no mount), and its fd-named fsconfig names no path
	sed 's/ .*//' "$W/mout1" | while read -r n; do
		case $n in fsconfig-path|SYS_fsconfig) echo "$n EINVAL" ;; *) echo "$n ENOENT" ;; esac
	done > "$W/mexpectf"
	if ! cmp -s "$W/mexpectf" "$W/moutf"; then
		bad "mount API fenced: calls that did not fail with ENOENT (or untraced's EINVAL):"
		diff "$W/mexpectf" "$W/moutf" | sed 's/^/    /'
	else
		ok "mount API fenced: every call fails with ENOENT, or untraced's EINVAL"
	fi
	check "mount API fenced: no mount under W made or moved ($(cat "$W/mcount1" "$W/mcount2" | tr '\n' ' '))" \
		cmp -s "$W/mcount1" "$W/mcount2"
	check "mount API fenced: violations reported" test "$(summary_field "$RMF" violations)" -gt 0
	# fenced, W allowed: each call as untraced ("/", a clone's kernel name, is not)
	in_ns "'$FAM' '$W/scratch/m4' setup && cd '$W/scratch' && '$ST' run --fence --policy '$W/policy' -- '$FAM' '$W/scratch/m4' run" > "$W/mouta" 2>&1
	if cmp -s "$W/mout1" "$W/mouta"; then ok "mount API fenced, W allowed: output as untraced"; else
		bad "mount API fenced, W allowed: output differs from untraced:"; diff "$W/mout1" "$W/mouta" | sed 's/^/    /'
	fi
else
	echo "skip - the mount API: needs root and a private mount namespace (unshare -m)"
fi
done_
