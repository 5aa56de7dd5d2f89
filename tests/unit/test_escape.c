/* tests/unit/test_escape.c - daemon/escape.c: which bytes are kept, which become \xNN, and the
 * round trip. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* Escape n bytes and compare with the expected text. */
static void expect(const char *in, size_t n, const char *want)
{
	char *out = NULL;
	size_t outlen = 0;
	ck_assert_int_eq(st__escape(in, n, &out, &outlen), 0);
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(outlen, strlen(want));
	ck_assert_uint_eq(st__escaped_len(in, n), strlen(want));
	free(out);
}

START_TEST(ascii_kept)
{
	expect("/usr/include/stdio.h", 20, "/usr/include/stdio.h");
	expect(" !\"#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~", 38,
	       " !\"#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~");
	expect("", 0, "");
}
END_TEST

START_TEST(backslash_escaped)
{
	expect("a\\b", 3, "a\\x5cb");
	expect("\\", 1, "\\x5c");
}
END_TEST

START_TEST(controls_escaped)
{
	expect("a\tb\nc\rd", 7, "a\\x09b\\x0ac\\x0dd");
	expect("\x7f", 1, "\\x7f");
	expect("\x01\x1f", 2, "\\x01\\x1f");
	expect("a\0b", 3, "a\\x00b");
}
END_TEST

START_TEST(utf8_kept)
{
	expect("\xc3\xa9", 2, "\xc3\xa9");		   /* U+00E9 */
	expect("\xc2\x80", 2, "\xc2\x80");		   /* U+0080, smallest 2-byte */
	expect("\xe2\x82\xac", 3, "\xe2\x82\xac");	   /* U+20AC */
	expect("\xef\xbf\xbf", 3, "\xef\xbf\xbf");	   /* U+FFFF */
	expect("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80"); /* U+1F600 */
	expect("\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	expect("/tmp/caf\xc3\xa9/x", 12, "/tmp/caf\xc3\xa9/x");
}
END_TEST

START_TEST(invalid_utf8_escaped)
{
	expect("\xff", 1, "\\xff");
	expect("\x80", 1, "\\x80");			       /* lone continuation */
	expect("\xc0\xaf", 2, "\\xc0\\xaf");		       /* overlong '/' */
	expect("\xc1\xbf", 2, "\\xc1\\xbf");		       /* overlong */
	expect("\xe0\x80\xaf", 3, "\\xe0\\x80\\xaf");	       /* overlong 3-byte */
	expect("\xf0\x80\x80\xaf", 4, "\\xf0\\x80\\x80\\xaf"); /* overlong 4-byte */
	expect("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");	       /* surrogate U+D800 */
	expect("\xed\xbf\xbf", 3, "\\xed\\xbf\\xbf");	       /* surrogate U+DFFF */
	expect("\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80"); /* U+110000 */
	expect("\xf5\x80\x80\x80", 4, "\\xf5\\x80\\x80\\x80");
	expect("\xe2\x82", 2, "\\xe2\\x82");   /* truncated at the end */
	expect("\xe2\x82/", 3, "\\xe2\\x82/"); /* truncated before ASCII */
	expect("\xc3", 1, "\\xc3");
	expect("\xc3\xc3\xa9", 3, "\\xc3\xc3\xa9"); /* bad lead, then a good pair */
}
END_TEST

/* Every byte value, alone and all together, comes back from escape + unescape. */
START_TEST(roundtrip_all_bytes)
{
	unsigned char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;

	for (int i = 0; i <= 256; i++) {
		const char *in = (const char *)(i < 256 ? all + i : all);
		size_t n = i < 256 ? 1 : 256;
		char *esc, *back;
		size_t elen, blen;
		ck_assert_int_eq(st__escape(in, n, &esc, &elen), 0);
		/* The escaped text is printable ASCII or valid UTF-8: JSON takes it as it is. */
		for (size_t k = 0; k < elen; k++)
			ck_assert_msg((unsigned char)esc[k] >= 0x20 && esc[k] != 0x7f,
				      "control byte in escaped text of %d", i);
		json_t *j = json_stringn(esc, elen);
		ck_assert_ptr_nonnull(j);
		json_decref(j);
		ck_assert_int_eq(st__unescape(esc, elen, &back, &blen), 0);
		ck_assert_uint_eq(blen, n);
		ck_assert_mem_eq(back, in, n);
		free(esc);
		free(back);
	}
}
END_TEST

START_TEST(unescape_errors)
{
	char *out = (char *)0x1;
	ck_assert_int_eq(st__unescape("\\x4", 3, &out, NULL), -EINVAL);
	ck_assert_int_eq(st__unescape("\\q00", 4, &out, NULL), -EINVAL);
	ck_assert_int_eq(st__unescape("\\xzz", 4, &out, NULL), -EINVAL);
	ck_assert_int_eq(st__unescape("a\\", 2, &out, NULL), -EINVAL);
	ck_assert_ptr_eq(out, (char *)0x1); /* untouched on error */
	size_t n;
	ck_assert_int_eq(st__unescape("\\x41\\x5C", 8, &out, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(out, "A\\");
	free(out);
}
END_TEST

START_TEST(utf8_seq_len)
{
	ck_assert_uint_eq(st__utf8_seq_len((const unsigned char *)"\xc3\xa9", 2), 2);
	ck_assert_uint_eq(st__utf8_seq_len((const unsigned char *)"\xc3\xa9", 1), 0);
	ck_assert_uint_eq(st__utf8_seq_len((const unsigned char *)"A", 1), 0);
	ck_assert_uint_eq(st__utf8_seq_len((const unsigned char *)"\xe0\xa0\x80", 3), 3);
	ck_assert_uint_eq(st__utf8_seq_len((const unsigned char *)"\xf0\x90\x80\x80", 4), 4);
}
END_TEST

Suite *suite_escape(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("escape");
	tcase_add_test(tc, ascii_kept);
	tcase_add_test(tc, backslash_escaped);
	tcase_add_test(tc, controls_escaped);
	tcase_add_test(tc, utf8_kept);
	tcase_add_test(tc, invalid_utf8_escaped);
	tcase_add_test(tc, roundtrip_all_bytes);
	tcase_add_test(tc, unescape_errors);
	tcase_add_test(tc, utf8_seq_len);
	suite_add_tcase(s, tc);
	return s;
}
