#!/usr/bin/env python3
"""tests/shim_aliases.py SHIM.so - every public name of a libc function the shim wraps is
wrapped: glibc exports some functions under two or more names at one address (fopen and
_IO_fopen, fork and __fork, statfs and __statfs, ...), each a dynamic symbol of its own, and
a program that calls one by a name the shim does not export reaches the real function with
no wrapper (no record, no fence).  The libc is the one the shim is linked against; its
GLIBC_PRIVATE names are not public (a program cannot link them).  And every version of a
wrapped name is one function, but for the old versions shim/abi.c tells apart.  Exit 1 naming
each name missing or split."""
import collections, re, subprocess, sys

shim = sys.argv[1]
libc = None
for line in subprocess.run(['ldd', shim], capture_output=True, text=True).stdout.splitlines():
    m = re.search(r'libc\.so\.6 => (\S+)', line)
    if m:
        libc = m.group(1)
if not libc:
    sys.exit('shim_aliases: no libc.so.6 in ldd ' + shim)

def dynsyms(path):
    out = subprocess.run(['nm', '-D', '--defined-only', path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TtWiV':
            yield parts[0], parts[2]

exported = {name.split('@')[0] for _, name in dynsyms(shim)}
at = collections.defaultdict(set)
for addr, name in dynsyms(libc):
    if 'GLIBC_PRIVATE' in name:
        continue
    at[addr].add(name.split('@')[0])
missing = set()
for names in at.values():
    if names & exported:
        missing |= names - exported
for n in sorted(missing):
    print('FAIL libc name not wrapped, an alias of a wrapped one:', n)
# Every version of a wrapped name is one function in libc, but for those whose old
# version behaves differently, which the wrapper tells apart (shim/abi.c): a new compat
# version of a wrapped name would reach the program with the default's behaviour.
OLD_ABI = {'realpath', 'nftw', 'nftw64', 'glob', 'glob64', 'posix_spawn', 'posix_spawnp'}
addrs = collections.defaultdict(set)
for addr, name in dynsyms(libc):
    base = name.split('@')[0]
    if base in exported and 'GLIBC_PRIVATE' not in name:
        addrs[base].add(addr)
split = sorted(n for n, a in addrs.items() if len(a) > 1 and n not in OLD_ABI)
for n in split:
    print('FAIL libc has versions of a wrapped name at different addresses (shim/abi.c):', n)
n = sum(1 for names in at.values() if names & exported)
print(f'shim_aliases: {n} wrapped libc functions, {len(missing)} public name(s) missing, '
      f'{len(split)} with versions of their own')
sys.exit(1 if missing or split else 0)
