/* io/sigbus.c -- SIGBUS in a member's mapping turned into an error: see
 * sigbus.h.
 *
 * SA_NODEFER: the jump leaves no signal blocked, and sigsetjmp need not
 * save the mask (a system call a run).  The guard is initial-exec TLS:
 * the handler must not reach __tls_get_addr's slow path, which may
 * allocate.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "io/sigbus.h"

struct guard {
  sigjmp_buf jb;
  const struct io_sigbus_range *ranges;
  unsigned n;
  unsigned which;             /* out: the range faulted ... */
  const char *at;             /* ... and the byte */
};

static __thread struct guard *guard
  __attribute__((tls_model ("initial-exec")));
static struct sigaction sigbus_before;
static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;

static void
on_sigbus (int sig, siginfo_t *si, void *uc)
{
  struct guard *g = guard;
  const char *at = si->si_addr;

  (void) uc;
  for (unsigned i = 0; g != NULL && si->si_code > 0 && i < g->n; i++)
    if (at >= g->ranges[i].lo && at < g->ranges[i].hi) {
      guard = NULL;
      g->which = i;
      g->at = at;
      siglongjmp (g->jb, 1);
    }
  sigaction (SIGBUS, &sigbus_before, NULL);
  if (si->si_code <= 0)       /* sent (kill), not a fault: as if unseen */
    raise (sig);
}

static void
sigbus_install (void)
{
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset (&sa.sa_mask);
  (void) sigaction (SIGBUS, &sa, &sigbus_before);
}

int
io_sigbus_run (const struct io_sigbus_range *ranges, unsigned n,
               void (*fn) (void *), void *arg, unsigned *which,
               const char **at)
{
  struct guard g = { .ranges = ranges, .n = n };

  pthread_once (&sigbus_once, sigbus_install);
  if (sigsetjmp (g.jb, 0) != 0) {
    atomic_signal_fence (memory_order_seq_cst);
    if (which)
      *which = g.which;
    if (at)
      *at = g.at;
    return -EFAULT;
  }
  guard = &g;
  atomic_signal_fence (memory_order_seq_cst);
  fn (arg);
  atomic_signal_fence (memory_order_seq_cst);
  guard = NULL;
  return 0;
}
