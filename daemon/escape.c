/* daemon/escape.c - byte-string escaping for the report: printable ASCII and valid UTF-8 kept, \xNN
 * otherwise. */
#include "escape.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Well-formed sequences after Unicode 15, table 3-7: the second byte's range
 * depends on the first byte, which is what rules out overlong forms (C0, C1,
 * E0 80-9F, F0 80-8F), surrogates (ED A0-BF) and code points over U+10FFFF
 * (F4 90-BF, F5-FF).
 */
size_t st__utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t need;
	unsigned lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < need; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return need;
}

static inline int keep_ascii(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e && c != '\\';
}

size_t st__escaped_len(const char *in, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t out = 0;

	for (size_t i = 0; i < len;) {
		size_t k;
		if (keep_ascii(s[i])) {
			out++;
			i++;
		} else if (s[i] >= 0x80 && (k = st__utf8_seq_len(s + i, len - i)) != 0) {
			out += k;
			i += k;
		} else {
			out += 4;
			i++;
		}
	}
	return out;
}

size_t st__escape_into(const char *in, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)in;
	char *o = out;

	for (size_t i = 0; i < len;) {
		size_t k;
		if (keep_ascii(s[i])) {
			*o++ = (char)s[i++];
		} else if (s[i] >= 0x80 && (k = st__utf8_seq_len(s + i, len - i)) != 0) {
			memcpy(o, s + i, k);
			o += k;
			i += k;
		} else {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[s[i] >> 4];
			*o++ = hex[s[i] & 0xf];
			i++;
		}
	}
	*o = '\0';
	return (size_t)(o - out);
}

int st__escape(const char *in, size_t len, char **out, size_t *outlen)
{
	size_t n = st__escaped_len(in, len);
	char *buf = malloc(n + 1);

	if (buf == NULL)
		return -ENOMEM;
	st__escape_into(in, len, buf);
	*out = buf;
	if (outlen != NULL)
		*outlen = n;
	return 0;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int st__unescape(const char *in, size_t len, char **out, size_t *outlen)
{
	char *buf = malloc(len + 1);
	size_t o = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		if (in[i] != '\\') {
			buf[o++] = in[i];
			continue;
		}
		int h, l;
		if (len - i < 4 || in[i + 1] != 'x' || (h = hexval((unsigned char)in[i + 2])) < 0 ||
		    (l = hexval((unsigned char)in[i + 3])) < 0) {
			free(buf);
			return -EINVAL;
		}
		buf[o++] = (char)(h << 4 | l);
		i += 3;
	}
	buf[o] = '\0';
	*out = buf;
	if (outlen != NULL)
		*outlen = o;
	return 0;
}
