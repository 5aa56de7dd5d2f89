/* daemon/util.h - small helpers shared by sandtraced and the sandtrace CLI (flags, logging,
 * quoting). */
#ifndef ST_UTIL_H
#define ST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The enum sandtrace_run_flags word of a run with these options. Pure. */
unsigned st__run_flags(bool fence, bool fail_open, bool record_all, bool no_cache);

/*
 * Diagnostics of the daemon.  st__log_set routes them to f (NULL = stderr);
 * each line is "sandtraced[PID]: message\n", written with one fprintf and
 * flushed at once (a crash loses nothing).  Not async-signal-safe; the
 * daemon is single-threaded.
 */
void st__log_set(FILE *f);
/* st__log_is_stderr - no log file set: st__log writes to stderr. */
bool st__log_is_stderr(void);
void st__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * st__shell_quote - s quoted for a POSIX shell: plain words ([A-Za-z0-9_@%+=:,./-])
 * as they are, anything else in single quotes with ' written as '\''.
 * Returns a malloc'd string or NULL (ENOMEM).
 */
char *st__shell_quote(const char *s);

/*
 * st__parse_size - "N", "NK", "NM" or "NG" (binary units) into *out.  Returns
 * 0 or -EINVAL (not a number, trailing garbage, overflow).
 */
int st__parse_size(const char *s, uint64_t *out);

#endif
