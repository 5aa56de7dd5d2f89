/* tests/unit/test_log.c - the record log in the arena: append, order across chunks, hostile chunks, full table. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandtrace/log.h"

static struct sandtrace_arena A;
static char name[SANDTRACE_ARENA_NAME_MAX];

static void setup(void)
{
	ck_assert_int_eq(sandtrace_arena_create(&A, 4 << 20, 0, name), 0);
	ck_assert_int_eq(sandtrace_log_init(&A, 64), 0);
}

static void teardown(void)
{
	sandtrace_arena_unlink(name);
	sandtrace_arena_detach(&A);
}

struct got {
	int n;
	uint64_t seq[64];
	char text[64][32];
	int32_t pid[64];
};

static int collect(void *ctx, const struct sandtrace_log_entry *e, const uint8_t *payload)
{
	struct got *g = ctx;
	ck_assert_int_lt(g->n, 64);
	g->seq[g->n] = e->seq;
	g->pid[g->n] = e->pid;
	size_t l = e->frame.len < 31 ? e->frame.len : 31;
	memcpy(g->text[g->n], payload, l);
	g->text[g->n][l] = 0;
	g->n++;
	return 0;
}

static int put(uint64_t chunk, int32_t pid, const char *s)
{
	struct iovec iov = {(void *)s, strlen(s)};
	return sandtrace_log_append(&A, chunk, pid, 0, SANDTRACE_MSG_EXIT, 0, &iov, 1);
}

START_TEST(order_across_chunks)
{
	uint64_t c1 = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 11);
	uint64_t c2 = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 22);
	ck_assert_uint_ne(c1, 0);
	ck_assert_uint_ne(c2, 0);
	/* interleaved writes in two chunks come out in the order they were made */
	ck_assert_int_eq(put(c2, 22, "first"), 0);
	ck_assert_int_eq(put(c1, 11, "second"), 0);
	ck_assert_int_eq(put(c2, 22, "third"), 0);
	struct sandtrace_log_reader r = {0};
	struct got g = {0};
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 3);
	ck_assert_str_eq(g.text[0], "first");
	ck_assert_str_eq(g.text[1], "second");
	ck_assert_str_eq(g.text[2], "third");
	ck_assert_int_eq(g.pid[1], 11);
	/* a second drain delivers only what is new */
	ck_assert_int_eq(put(c1, 11, "fourth"), 0);
	g.n = 0;
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 1);
	ck_assert_str_eq(g.text[0], "fourth");
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 0);
	sandtrace_log_reader_free(&r);
}
END_TEST

/* A consumer that stops after its third entry (sandtrace_log_fn's nonzero return). */
static int collect_three(void *ctx, const struct sandtrace_log_entry *e, const uint8_t *payload)
{
	collect(ctx, e, payload);
	return ((struct got *)ctx)->n == 3;
}

/* Drained in slices: each slice continues where the last stopped, in seq
 * order, entries published meanwhile come after the collected ones, and a
 * full drain delivers what a slice left before anything newer. */
START_TEST(drain_in_slices)
{
	uint64_t c1 = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 11);
	uint64_t c2 = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 22);
	char t[16];
	for (int i = 0; i < 10; i++) {
		snprintf(t, sizeof(t), "e%d", i);
		ck_assert_int_eq(put(i % 3 ? c1 : c2, i % 3 ? 11 : 22, t), 0);
	}
	struct sandtrace_log_reader r = {0};
	struct got g = {0};
	ck_assert_int_eq(sandtrace_log_drain_some(&A, &r, collect, &g, 4), 4);
	ck_assert(sandtrace_log_pending(&r));
	ck_assert_int_eq(put(c2, 22, "late"), 0);
	ck_assert_int_eq(sandtrace_log_drain_some(&A, &r, collect, &g, 4), 4);
	ck_assert_int_eq(sandtrace_log_drain_some(&A, &r, collect, &g, 4), 2); /* the batch's rest */
	ck_assert(!sandtrace_log_pending(&r));
	for (int i = 0; i < 10; i++) {
		snprintf(t, sizeof(t), "e%d", i);
		ck_assert_str_eq(g.text[i], t);
	}
	ck_assert_int_eq(sandtrace_log_drain_some(&A, &r, collect, &g, 4), 1);
	ck_assert_str_eq(g.text[10], "late");
	/* a slice left, then a full drain: the slice's rest first */
	ck_assert_int_eq(put(c1, 11, "x1"), 0);
	ck_assert_int_eq(put(c1, 11, "x2"), 0);
	ck_assert_int_eq(sandtrace_log_drain_some(&A, &r, collect, &g, 1), 1);
	ck_assert_int_eq(put(c2, 22, "x3"), 0);
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 2);
	ck_assert_str_eq(g.text[11], "x1");
	ck_assert_str_eq(g.text[12], "x2");
	ck_assert_str_eq(g.text[13], "x3");
	ck_assert_uint_eq(r.entries, 14);
	/* a consumer that stops: the rest stays pending, nothing is lost */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(put(c1, 11, "y"), 0);
	struct got g2 = {0};
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect_three, &g2), 3);
	ck_assert(sandtrace_log_pending(&r));
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g2), 2);
	ck_assert_int_eq(g2.n, 5);
	sandtrace_log_reader_free(&r);
}
END_TEST

/* Entries below a record's stamp are delivered before it, those at or above
 * it stay pending; stamps and entry seqs share log_seq. */
START_TEST(drain_before_stamp)
{
	uint64_t c = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 11);
	ck_assert_int_eq(put(c, 11, "a"), 0);
	ck_assert_int_eq(put(c, 11, "b"), 0);
	uint32_t stamp = sandtrace_log_stamp(&A); /* a record sent now */
	ck_assert_int_eq(put(c, 11, "c"), 0);     /* appended after the send */
	struct sandtrace_log_reader r = {0};
	struct got g = {0};
	ck_assert_int_eq(sandtrace_log_drain_before(&A, &r, collect, &g, stamp), 2);
	ck_assert_str_eq(g.text[0], "a");
	ck_assert_str_eq(g.text[1], "b");
	ck_assert(sandtrace_log_pending(&r)); /* "c" waits */
	/* a later stamp takes "c", and (one fresh collection) what came since */
	ck_assert_int_eq(put(c, 11, "d"), 0);
	uint32_t later = sandtrace_log_stamp(&A);
	ck_assert_int_eq(put(c, 11, "e"), 0);
	ck_assert_int_eq(sandtrace_log_drain_before(&A, &r, collect, &g, later), 2);
	ck_assert_str_eq(g.text[2], "c");
	ck_assert_str_eq(g.text[3], "d");
	/* an older stamp delivers nothing */
	ck_assert_int_eq(sandtrace_log_drain_before(&A, &r, collect, &g, stamp), 0);
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 1);
	ck_assert_str_eq(g.text[4], "e");
	/* collect takes nothing while entries are pending, all once drained */
	ck_assert_int_eq(put(c, 11, "f"), 0);
	ck_assert_int_eq(sandtrace_log_collect(&A, &r), 1);
	ck_assert_int_eq(put(c, 11, "g"), 0);
	ck_assert_int_eq(sandtrace_log_collect(&A, &r), 0);
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 2);
	ck_assert_str_eq(g.text[6], "g");
	ck_assert_uint_ne(stamp, 0);
	sandtrace_log_reader_free(&r);
}
END_TEST

START_TEST(chunk_full_and_table_full)
{
	uint64_t c = sandtrace_log_chunk_new(&A, 128, 1);
	ck_assert_uint_ne(c, 0);
	char big[200];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ck_assert_int_eq(put(c, 1, big), -ENOSPC); /* does not fit: nothing written */
	ck_assert_int_eq(put(c, 1, "ok"), 0);
	/* 64 asked for, a whole block given; then the table is full */
	uint32_t cap = sandtrace_arena_hdr(&A)->log_cap;
	ck_assert_uint_eq(cap, SANDTRACE_LOG_BLOCK);
	for (uint32_t i = 1; i < cap; i++)
		ck_assert_uint_ne(sandtrace_log_chunk_new(&A, 16, 1), 0);
	ck_assert_uint_eq(sandtrace_log_chunk_new(&A, 16, 1), 0);
	struct sandtrace_log_reader r = {0};
	struct got g = {0};
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 1);
	ck_assert_str_eq(g.text[0], "ok");
	sandtrace_log_reader_free(&r);
}
END_TEST

START_TEST(hostile_chunk_skipped)
{
	uint64_t c = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 5);
	ck_assert_int_eq(put(c, 5, "good"), 0);
	ck_assert_int_eq(put(c, 5, "lies"), 0);
	struct sandtrace_log_chunk *ch = sandtrace_arena_ptr(&A, c, sizeof(*ch));
	/* a traced process may scribble anything into the arena: the second
	 * entry claims to be larger than the chunk */
	struct sandtrace_log_entry *e1 = (void *)ch->data;
	struct sandtrace_log_entry *e2 = (void *)(ch->data + e1->size);
	e2->size = 1u << 30;
	struct sandtrace_log_reader r = {0};
	struct got g = {0};
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 1);
	ck_assert_str_eq(g.text[0], "good");
	ck_assert_uint_eq(r.bad, 1);
	/* a bad frame magic is refused too */
	uint64_t c2 = sandtrace_log_chunk_new(&A, SANDTRACE_LOG_CHUNK, 6);
	ck_assert_int_eq(put(c2, 6, "x"), 0);
	struct sandtrace_log_chunk *ch2 = sandtrace_arena_ptr(&A, c2, sizeof(*ch2));
	((struct sandtrace_log_entry *)ch2->data)->frame.magic = 0;
	g.n = 0;
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 0);
	ck_assert_uint_eq(r.bad, 2);
	sandtrace_log_reader_free(&r);
}
END_TEST

/* An arena with areas and a log of four table blocks.  drain_and_drop
 * drains it and removes it: the tests that use them take what they assert
 * on first and assert last, so that a failure leaves no arena behind. */
static struct sandtrace_arena_header *areas_log(struct sandtrace_arena *b, char *name)
{
	ck_assert_int_eq(sandtrace_arena_create(b, SANDTRACE_ARENA_AREAS_MIN, 0, name), 0);
	ck_assert_int_eq(sandtrace_log_init(b, 4 * SANDTRACE_LOG_BLOCK), 0);
	return sandtrace_arena_hdr(b);
}

static long drain_and_drop(struct sandtrace_arena *b, char *name, struct got *g, uint64_t *bad)
{
	struct sandtrace_log_reader r = {0};
	long n = sandtrace_log_drain(b, &r, collect, g);
	if (bad)
		*bad = r.bad;
	sandtrace_log_reader_free(&r);
	sandtrace_arena_detach(b);
	sandtrace_arena_unlink(name);
	return n;
}

/* The table's blocks are made when first needed, in an arena with areas;
 * a writer that took a slot and died before making its block (or storing
 * its chunk) holds up no one: a later writer makes the block, and the
 * reader delivers every published chunk around the hole. */
START_TEST(table_blocks_on_demand)
{
	struct sandtrace_arena b;
	char bname[SANDTRACE_ARENA_NAME_MAX];
	struct sandtrace_arena_header *h = areas_log(&b, bname);
	ck_assert_uint_eq(h->log_cap, 4 * SANDTRACE_LOG_BLOCK);
	for (uint64_t i = 0; i < h->log_cap; i += SANDTRACE_LOG_BLOCK)
		ck_assert_ptr_null(sandtrace_log_slot(&b, i, false));
	uint64_t c0 = sandtrace_log_chunk_new(&b, 64, 7);
	ck_assert_uint_ne(c0, 0);
	ck_assert_ptr_nonnull(sandtrace_log_slot(&b, SANDTRACE_LOG_BLOCK - 1, false));
	ck_assert_ptr_null(sandtrace_log_slot(&b, SANDTRACE_LOG_BLOCK, false));
	ck_assert_ptr_null(sandtrace_log_slot(&b, h->log_cap, true)); /* past the table */
	/* slots 1 .. BLOCK + 9 handed out to writers that never came back */
	atomic_fetch_add(&h->log_nchunks, SANDTRACE_LOG_BLOCK + 9);
	uint64_t c1 = sandtrace_log_chunk_new(&b, 64, 8);
	ck_assert_uint_ne(c1, 0);
	_Atomic uint64_t *s1 = sandtrace_log_slot(&b, SANDTRACE_LOG_BLOCK + 10, false);
	ck_assert_ptr_nonnull(s1);
	ck_assert_uint_eq(atomic_load(s1), c1);
	struct iovec iov0 = {"zero", 4}, iov1 = {"one", 3};
	ck_assert_int_eq(sandtrace_log_append(&b, c0, 7, 0, SANDTRACE_MSG_EXIT, 0, &iov0, 1), 0);
	ck_assert_int_eq(sandtrace_log_append(&b, c1, 8, 0, SANDTRACE_MSG_EXIT, 0, &iov1, 1), 0);
	struct got g = {0};
	long n = drain_and_drop(&b, bname, &g, NULL);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(g.text[0], "zero");
	ck_assert_str_eq(g.text[1], "one");
	ck_assert_int_eq(g.pid[1], 8);
}
END_TEST

/* A writer's first chunk (1 KiB) is a small chunk: the header names its
 * segment, no table slot is used, and the reader finds it by its index:
 * entries of small and table chunks come out in one order; an index handed
 * out and never published is skipped, a small chunk whose cap was scribbled
 * over is dropped as malformed, and once the segments are used up first
 * chunks go through the table. */
START_TEST(small_chunks)
{
	struct sandtrace_arena b;
	char bname[SANDTRACE_ARENA_NAME_MAX];
	struct sandtrace_arena_header *h = areas_log(&b, bname);
	uint64_t s0 = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK_FIRST, 1);
	uint64_t s1 = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK_FIRST, 2);
	ck_assert_uint_ne(s0, 0);
	ck_assert_uint_eq(s1, s0 + SANDTRACE_LOG_SMALL_SIZE);
	ck_assert_uint_eq(atomic_load(&h->log_small[0]), s0);
	ck_assert_uint_eq(atomic_load(&h->log_nsmall), 2);
	ck_assert_uint_eq(atomic_load(&h->log_nchunks), 0);
	atomic_fetch_add(&h->log_nsmall, 1); /* index 2: a writer that never came back */
	uint64_t s3 = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK_FIRST, 3);
	ck_assert_uint_eq(s3, s0 + 3 * SANDTRACE_LOG_SMALL_SIZE);
	uint64_t big = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK, 4);
	ck_assert_uint_eq(atomic_load(&h->log_nchunks), 1);
	uint64_t bad = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK_FIRST, 5);
	struct iovec v[5] = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}};
	uint64_t at[5] = {s0, big, s1, s3, bad};
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(sandtrace_log_append(&b, at[i], (int32_t)i + 1, 0, SANDTRACE_MSG_EXIT, 0,
						      &v[i], 1), 0);
	((struct sandtrace_log_chunk *)sandtrace_arena_ptr(&b, bad, 16))->cap = 1u << 30;
	/* the segments used up: the next first chunk takes a table slot */
	atomic_store(&h->log_nsmall, (uint64_t)SANDTRACE_LOG_SMALL_SEGS * SANDTRACE_LOG_SMALL_PER_SEG);
	uint64_t t = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK_FIRST, 6);
	uint64_t nt = atomic_load(&h->log_nchunks);
	struct got g = {0};
	uint64_t nbad;
	long n = drain_and_drop(&b, bname, &g, &nbad);
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(nbad, 1);
	const char *want[4] = {"a", "b", "c", "d"};
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(g.text[i], want[i]);
	ck_assert_uint_ne(t, 0);
	ck_assert_uint_eq(nt, 2);
}
END_TEST

START_TEST(child_process_writes)
{
	pid_t p = fork();
	if (p == 0) {
		struct sandtrace_arena b;
		if (sandtrace_arena_attach(&b, name) != 0)
			_exit(1);
		uint64_t c = sandtrace_log_chunk_new(&b, SANDTRACE_LOG_CHUNK, getpid());
		struct iovec iov = {"from child", 10};
		_exit(c && sandtrace_log_append(&b, c, getpid(), 0, SANDTRACE_MSG_EXIT, 0, &iov,
						1) == 0
			  ? 0
			  : 2);
	}
	int st;
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct sandtrace_log_reader r = {0};
	struct got g = {0};
	ck_assert_int_eq(sandtrace_log_drain(&A, &r, collect, &g), 1);
	ck_assert_str_eq(g.text[0], "from child");
	ck_assert_int_eq(g.pid[0], p);
	sandtrace_log_reader_free(&r);
}
END_TEST

Suite *suite_log(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, order_across_chunks);
	tcase_add_test(tc, drain_in_slices);
	tcase_add_test(tc, drain_before_stamp);
	tcase_add_test(tc, chunk_full_and_table_full);
	tcase_add_test(tc, hostile_chunk_skipped);
	tcase_add_test(tc, table_blocks_on_demand);
	tcase_add_test(tc, small_chunks);
	tcase_add_test(tc, child_process_writes);
	suite_add_tcase(s, tc);
	return s;
}
