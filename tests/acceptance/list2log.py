#!/usr/bin/env python3
"""list2log.py [LIST...] > LOG

Turns `sandtrace report --list` output (lines "KIND<TAB>PATH", the path escaped: every
non-printable byte and the backslash written as \\xNN) into the "op /abs/path" lines that
check_trace.py reads, with the path unescaped back to its raw bytes. Reads the named files
(or stdin), writes stdout. A path holding a newline byte cannot be written in a line-based
log: such records are dropped and counted on stderr. Malformed lines are reported on stderr
and skipped; the exit status is 1 if any line was malformed."""
import re, sys

ESC = re.compile(rb'\\x([0-9a-fA-F]{2})')

def unescape(b):
    out, i = bytearray(), 0
    for m in ESC.finditer(b):
        out += b[i:m.start()]
        out.append(int(m.group(1), 16))
        i = m.end()
    out += b[i:]
    return bytes(out)

def convert(data, out, err):
    bad = dropped = 0
    for n, line in enumerate(data.split(b'\n'), 1):
        if line.endswith(b'\r'):
            line = line[:-1]
        if not line:
            continue
        if b'\t' not in line:
            bad += 1
            err.write(f'list2log: line {n}: no TAB: {line[:80]!r}\n')
            continue
        kind, path = line.split(b'\t', 1)
        raw = unescape(path)
        if b'\\' in ESC.sub(b'', path):
            err.write(f'list2log: line {n}: stray backslash in {path[:80]!r}\n')
        if b'\n' in raw:
            dropped += 1
            continue
        out.write(kind + b' ' + raw + b'\n')
    if dropped:
        err.write(f'list2log: {dropped} record(s) with a newline in the path left out\n')
    return 1 if bad else 0

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] in ('-h', '--help'):
        print(__doc__); sys.exit(0)
    data = b''.join(open(f, 'rb').read() + b'\n' for f in sys.argv[1:]) if len(sys.argv) > 1 \
        else sys.stdin.buffer.read()
    sys.exit(convert(data, sys.stdout.buffer, sys.stderr))
