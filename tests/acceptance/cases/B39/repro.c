/* B39: iconv_open loads gconv modules with libc's own dlopen; iconv_close
 * unloads them again. */
#define _GNU_SOURCE
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	iconv_t cd = iconv_open("UTF-16LE", "ISO-8859-5");
	if (cd == (iconv_t)-1) {
		printf("iconv_open: %s\n", strerrorname_np(errno));
		return 1;
	}
	char in[] = "\xb0", out[8];
	char *ip = in, *op = out;
	size_t il = 1, ol = sizeof(out);
	size_t r = iconv(cd, &ip, &il, &op, &ol);
	printf("iconv %zu: %02x %02x\n", r, (unsigned char)out[0], (unsigned char)out[1]);
	iconv_close(cd);
	return 0;
}
