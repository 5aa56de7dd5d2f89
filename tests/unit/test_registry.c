/* tests/unit/test_registry.c - daemon/registry.c and deps.c on the fixture dpkg database
 * (tests/fixtures/dpkg): loading, merged-/usr aliases, diversions, debian/control parsing,
 * declared closure, owner-map errors with FILE:LINE. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry.h"

#ifndef ST_FIXTURES
#error "ST_FIXTURES (tests/fixtures) must be defined by the build"
#endif

static char err[4400];

static void load(struct st__registry *r)
{
	st__registry_init(r, ST_REG_USRMERGE);
	err[0] = '\0';
	int rc = st__registry_load_dpkg(r, ST_FIXTURES "/dpkg", err, sizeof(err));
	ck_assert_msg(rc == 0, "load: %d %s", rc, err);
}

static const char *owner(struct st__registry *r, const char *path, unsigned *flags)
{
	struct st__pkg *p = st__registry_owner(r, path, strlen(path), flags);
	return p ? p->name : NULL;
}

START_TEST(loads_fixture)
{
	struct st__registry r;
	load(&r);
	unsigned fl;
	ck_assert_str_eq(owner(&r, "/usr/include/foo.h", &fl), "libfoo-dev");
	ck_assert_uint_eq(fl, 0);
	/* ":amd64" is not part of the name */
	ck_assert_str_eq(owner(&r, "/usr/lib/x86_64-linux-gnu/libfoo.so.1", NULL), "libfoo1");
	ck_assert_ptr_nonnull(st__registry_pkg(&r, "libfoo1"));
	ck_assert_ptr_null(st__registry_pkg(&r, "libfoo1:amd64"));
	/* directories are listed by many packages and owned by none */
	ck_assert_ptr_null(owner(&r, "/usr/include", &fl));
	ck_assert_uint_eq(fl, ST_OWN_DIR);
	ck_assert_ptr_null(owner(&r, "/usr/include/nothere.h", &fl));
	ck_assert_uint_eq(fl, 0);
	ck_assert_ptr_null(owner(&r, "/.", NULL));
	/* status: installed state, Essential, removed packages */
	struct st__pkg *p = st__registry_pkg(&r, "essbase");
	ck_assert(p != NULL && p->essential && p->installed);
	p = st__registry_pkg(&r, "oldpkg");
	ck_assert(p != NULL && !p->installed);
	ck_assert_uint_eq(st__registry_pkg(&r, "libfoo-dev")->nfiles, 3);
	ck_assert_uint_eq(r.nlists, 11);
	ck_assert(r.load_ms >= 0.0);
	st__registry_free(&r);
}
END_TEST

START_TEST(usrmerge_aliases)
{
	struct st__registry r;
	load(&r);
	/* essbase lists /bin/essbin: stored as /usr/bin/essbin, found under both spellings */
	ck_assert_str_eq(owner(&r, "/usr/bin/essbin", NULL), "essbase");
	ck_assert_str_eq(owner(&r, "/bin/essbin", NULL), "essbase");
	ck_assert_str_eq(owner(&r, "/usr/lib/x86_64-linux-gnu/libc-fix.so.6", NULL), "libc-fix");
	ck_assert_str_eq(owner(&r, "/lib/x86_64-linux-gnu/libc-fix.so.6", NULL), "libc-fix");
	/* component-bounded: /binx is not /bin */
	ck_assert_ptr_null(owner(&r, "/binx/essbin", NULL));
	ck_assert_str_eq(owner(&r, "/etc/ess.conf", NULL), "essbase");
	st__registry_free(&r);

	/* without the aliases the path stays as dpkg wrote it */
	st__registry_init(&r, 0);
	ck_assert_int_eq(st__registry_load_dpkg(&r, ST_FIXTURES "/dpkg", err, sizeof(err)), 0);
	ck_assert_str_eq(owner(&r, "/bin/essbin", NULL), "essbase");
	ck_assert_ptr_null(owner(&r, "/usr/bin/essbin", NULL));
	st__registry_free(&r);
}
END_TEST

START_TEST(diversions)
{
	struct st__registry r;
	load(&r);
	/* diverter diverts toolpkg's /usr/bin/tool to /usr/bin/tool.distrib */
	ck_assert_str_eq(owner(&r, "/usr/bin/tool", NULL), "diverter");
	ck_assert_str_eq(owner(&r, "/usr/bin/tool.distrib", NULL), "toolpkg");
	ck_assert_uint_eq(r.ndiverted, 1);
	st__registry_free(&r);
}
END_TEST

START_TEST(missing_database)
{
	struct st__registry r;
	st__registry_init(&r, 0);
	int rc = st__registry_load_dpkg(&r, ST_FIXTURES "/no-such-dir", err, sizeof(err));
	ck_assert_int_eq(rc, -ENOENT);
	ck_assert_msg(strstr(err, "no-such-dir") != NULL, "%s", err);
	ck_assert_int_eq(st__registry_load_status(&r, ST_FIXTURES "/no-such-dir", true, err,
						  sizeof(err)),
			 0);
	st__registry_free(&r);
}
END_TEST

/* Does group g hold exactly the alternatives in alts (NULL-terminated)? */
static void group_is(const struct st__deplist *l, size_t g, const char *const *alts)
{
	ck_assert_uint_lt(g, l->ngroups);
	size_t n = 0;
	while (alts[n])
		n++;
	ck_assert_uint_eq(l->groups[g].nalts, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(l->groups[g].alts[i], alts[i]);
}

START_TEST(control_parsing)
{
	struct st__deplist l = {0};
	int rc = st__control_build_deps(ST_FIXTURES "/src-demo", "amd64", &l, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s", err);
	/* [armel armhf], [!amd64 !i386] and Build-Depends-Arch's [i386] drop out;
	 * <!nocheck> holds with no profile active; <stage1> <!cross> holds by its second list */
	ck_assert_uint_eq(l.ngroups, 9);
	group_is(&l, 0, (const char *[]){"libfoo-dev", NULL});
	group_is(&l, 1, (const char *[]){"gcc-other", "gcc-fix", NULL});
	group_is(&l, 2, (const char *[]){"libamd", NULL});
	group_is(&l, 3, (const char *[]){"libnocheck", NULL});
	group_is(&l, 4, (const char *[]){"libstage", NULL});
	group_is(&l, 5, (const char *[]){"pyth", NULL}); /* :any stripped */
	group_is(&l, 6, (const char *[]){"mail-transport-agent", NULL});
	group_is(&l, 7, (const char *[]){"libbar-dev", NULL}); /* :native, version, [linux-any] */
	group_is(&l, 8, (const char *[]){"docpkg", NULL});	/* Build-Depends-Indep */
	st__deplist_free(&l);
}
END_TEST

START_TEST(deps_restrictions)
{
	struct st__deplist l = {0};
	const char *t = "a [!amd64] | b [amd64], c <stage1>, d <stage1 !nocheck>, e <!nocheck !cross>,"
			" f [any-amd64], g [linux-i386], , h | i [armel]";
	ck_assert_int_eq(st__deps_parse(t, strlen(t), "amd64", "t", 1, &l, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.ngroups, 4);
	group_is(&l, 0, (const char *[]){"b", NULL});
	group_is(&l, 1, (const char *[]){"e", NULL});
	group_is(&l, 2, (const char *[]){"f", NULL});
	group_is(&l, 3, (const char *[]){"h", NULL});
	st__deplist_free(&l);
}
END_TEST

START_TEST(deps_errors_name_line)
{
	struct st__deplist l = {0};
	const char *t = "ok,\n other (>= 1.0,\n third";
	ck_assert_int_eq(st__deps_parse(t, strlen(t), "amd64", "x/debian/control", 7, &l, err,
					sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "x/debian/control:8:") != NULL, "%s", err);
	st__deplist_free(&l);
	const char *u = "a | , b";
	ck_assert_int_eq(st__deps_parse(u, strlen(u), "amd64", "--deps", 0, &l, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "--deps: ") == err, "%s", err);
	st__deplist_free(&l);
	const char *v = "a [amd64 !i386]";
	ck_assert_int_eq(st__deps_parse(v, strlen(v), "amd64", "t", 1, &l, err, sizeof(err)),
			 -EINVAL);
	st__deplist_free(&l);
}
END_TEST

static uint8_t decl(struct st__registry *r, const char *name)
{
	struct st__pkg *p = st__registry_pkg(r, name);
	ck_assert_msg(p != NULL, "no package %s", name);
	return p->declared;
}

START_TEST(declared_closure)
{
	struct st__registry r;
	load(&r);
	struct st__deplist l = {0};
	ck_assert_int_eq(st__control_build_deps(ST_FIXTURES "/src-demo", "amd64", &l, err,
						sizeof(err)),
			 0);
	size_t ndirect, ntotal;
	ck_assert_int_eq(st__registry_declare(&r, &l, true, &ndirect, &ntotal), 0);
	ck_assert_uint_eq(decl(&r, "libfoo-dev"), ST_DECL_DIRECT);
	ck_assert_uint_eq(decl(&r, "gcc-fix"), ST_DECL_DIRECT); /* first installed alternative */
	ck_assert_uint_eq(decl(&r, "mta-real"), ST_DECL_DIRECT); /* through Provides */
	ck_assert_uint_eq(decl(&r, "libfoo1"), ST_DECL_CLOSURE);  /* Depends */
	ck_assert_uint_eq(decl(&r, "libc-fix"), ST_DECL_CLOSURE); /* Pre-Depends of libfoo1 */
	ck_assert_uint_eq(decl(&r, "build-essential"), ST_DECL_IMPLICIT);
	ck_assert_uint_eq(decl(&r, "make-fix"), ST_DECL_IMPLICIT);
	ck_assert_uint_eq(decl(&r, "essbase"), ST_DECL_IMPLICIT);
	ck_assert_uint_eq(decl(&r, "libzz-dev"), ST_DECL_NO);
	ck_assert_uint_eq(decl(&r, "toolpkg"), ST_DECL_NO);
	/* declared but not installed: kept, flagged */
	struct st__pkg *p = st__registry_pkg(&r, "libamd");
	ck_assert(p != NULL && p->declared == ST_DECL_DIRECT && p->want_missing);
	ck_assert_uint_eq(ndirect, 9);
	st__deplist_free(&l);
	st__registry_free(&r);

	/* --no-implicit-deps */
	load(&r);
	const char *t = "libfoo-dev";
	ck_assert_int_eq(st__deps_parse(t, strlen(t), "amd64", "--deps", 0, &l, err, sizeof(err)),
			 0);
	ck_assert_int_eq(st__registry_declare(&r, &l, false, &ndirect, &ntotal), 0);
	ck_assert_uint_eq(ntotal, 3);
	ck_assert_uint_eq(decl(&r, "essbase"), ST_DECL_NO);
	ck_assert_uint_eq(decl(&r, "make-fix"), ST_DECL_NO);
	st__deplist_free(&l);
	st__registry_free(&r);
}
END_TEST

static char *write_tmp(const char *text)
{
	static char path[64];
	strcpy(path, "/tmp/st-owners.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(owner_map)
{
	struct st__registry r;
	st__registry_init(&r, ST_REG_USRMERGE);
	char *f = write_tmp("# exported from another package manager\n"
			    "/opt/local/include/z.h\tzlib\n"
			    "\n"
			    "/opt/local/include/\tzlib\n"
			    "/bin/port-tool\tmacports-base\n");
	ck_assert_msg(st__registry_load_owners(&r, f, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(owner(&r, "/opt/local/include/z.h", NULL), "zlib");
	ck_assert_ptr_null(owner(&r, "/opt/local/include", NULL)); /* trailing '/': a directory */
	ck_assert_str_eq(owner(&r, "/usr/bin/port-tool", NULL), "macports-base");
	ck_assert(st__registry_pkg(&r, "zlib")->installed);
	unlink(f);
	st__registry_free(&r);
}
END_TEST

START_TEST(owner_map_errors)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
	    {"/a\tp\n/b p\n", ":2: expected PATH<TAB>PACKAGE"},
	    {"/a\tp\n\n# c\nrel/path\tp\n", ":4: the path must be absolute"},
	    {"/a\t\n", ":1: empty package name"},
	    {"/a\tp\n/b\tp q\n", ":2: the package name holds a blank"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct st__registry r;
		st__registry_init(&r, 0);
		char *f = write_tmp(cases[i].text);
		char want[128];
		snprintf(want, sizeof(want), "%s%s", f, cases[i].want);
		ck_assert_int_eq(st__registry_load_owners(&r, f, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, want) == err, "case %zu: got \"%s\", want \"%s\"", i, err,
			      want);
		unlink(f);
		st__registry_free(&r);
	}
}
END_TEST

Suite *suite_registry(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("dpkg");
	tcase_add_test(tc, loads_fixture);
	tcase_add_test(tc, usrmerge_aliases);
	tcase_add_test(tc, diversions);
	tcase_add_test(tc, missing_database);
	suite_add_tcase(s, tc);
	tc = tcase_create("deps");
	tcase_add_test(tc, control_parsing);
	tcase_add_test(tc, deps_restrictions);
	tcase_add_test(tc, deps_errors_name_line);
	tcase_add_test(tc, declared_closure);
	suite_add_tcase(s, tc);
	tc = tcase_create("owners");
	tcase_add_test(tc, owner_map);
	tcase_add_test(tc, owner_map_errors);
	suite_add_tcase(s, tc);
	return s;
}
