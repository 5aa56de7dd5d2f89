/* tests/unit/main.c - runs every Check suite listed in suites.def (none can be dropped silently). */
#include <check.h>
#include <stdlib.h>

#define SUITE(fn) Suite *fn(void);
#include "suites.def"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
#define SUITE(fn) srunner_add_suite(sr, fn());
#include "suites.def"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
