/* daemon/escape.h - the one escaping of byte strings (paths, argv, exe) used by every report
 * format. */
#ifndef ST_ESCAPE_H
#define ST_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Escaping rule (docs/INTERNALS.md, "Report"): bytes 0x20-0x7e other than
 * '\' and well-formed UTF-8 sequences (shortest form, no surrogates, at most
 * U+10FFFF) are kept as they are; every other byte, and '\', becomes the
 * four characters "\xNN" (lower-case hex).  The result is therefore valid
 * UTF-8 without control characters (a valid JSON string body once JSON's own
 * escaping of '"' is applied) and st__unescape() gives the bytes back.
 */

/*
 * st__utf8_seq_len - length (2..4) of the well-formed UTF-8 sequence that
 * starts at s (n bytes available), or 0 if s does not start one (ASCII,
 * continuation byte, overlong form, surrogate, > U+10FFFF, truncated).
 * Pure; thread-safe.
 */
size_t st__utf8_seq_len(const unsigned char *s, size_t n);

/* st__escaped_len - bytes st__escape_into() writes for in[0..len), NUL excluded. Pure. */
size_t st__escaped_len(const char *in, size_t len);

/*
 * st__escape_into - escape in[0..len) into out, which must hold
 * st__escaped_len(in, len) + 1 bytes; NUL-terminates.  Returns the length
 * written (NUL excluded).  Pure, allocation-free; thread-safe.
 */
size_t st__escape_into(const char *in, size_t len, char *out);

/*
 * st__escape - escape in[0..len) into a new malloc'd NUL-terminated string
 * (*out; *outlen gets its length if outlen is not NULL).  Returns 0 or
 * -ENOMEM (*out untouched).  Thread-safe.
 */
int st__escape(const char *in, size_t len, char **out, size_t *outlen);

/*
 * st__unescape - reverse st__escape: "\xNN" (either case of hex) becomes the
 * byte NN, every other byte is copied.  *out is malloc'd with len + 1 bytes
 * and NUL-terminated (the bytes may themselves hold NULs: use *outlen).
 * Returns 0, -EINVAL for a '\' not followed by 'x' and two hex digits (*out
 * untouched), or -ENOMEM.  Thread-safe.
 */
int st__unescape(const char *in, size_t len, char **out, size_t *outlen);

#endif
