/* tools/progress.h -- progress of a long job (resync, check, rebuild) on
 * stderr: a bar with percentage, speed and ETA redrawn in place while
 * stderr is a terminal, and one final line in any case.
 *
 * Work is counted in steps (stripes) of step_bytes of each member, and
 * speeds are per member, as md reports sync speed.  Single-threaded: the
 * job's thread calls progress_update as array_progress_fn.
 */
#ifndef TOOLS_PROGRESS_H
#define TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
  const char *what;           /* "resync" */
  uint64_t step_bytes;        /* member bytes per step */
  bool tty;                   /* draw the bar */
  bool drawn;                 /* a bar is on the screen */
  uint64_t start_ns, last_ns;
  uint64_t done, total;       /* steps */
  uint64_t base;              /* steps done before this run (a job that
                                 resumes): counted in the bar, not in the
                                 speed or in the final line's size */
};

void progress_init (struct progress *p, const char *what,
                    uint64_t step_bytes) __attribute__((nonnull));

/* The job resumes at step done: time and speed count from here. */
void progress_resume (struct progress *p, uint64_t done)
  __attribute__((nonnull));

/* An array_progress_fn: opaque is the struct progress.  Redraws at most
 * five times a second.
 */
void progress_update (void *opaque, uint64_t done, uint64_t total);

/* Clear the bar and print "raid5ctl SUB: WHAT: SIZE of each member in
 * T s (SPEED per member)NOTE" on stderr (SIZE: the steps since base);
 * note may be "".
 */
void progress_finish (struct progress *p, const char *note)
  __attribute__((nonnull));

/* Clear the bar, if one is drawn (the job failed: no final line). */
void progress_clear (struct progress *p) __attribute__((nonnull));

#endif /* TOOLS_PROGRESS_H */
