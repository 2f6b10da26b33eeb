/* array/ppl.h -- the partial parity log of a served array (internal to
 * array/; raid/ppl.h has md's format, raid/plan.h the entries a plan
 * logs).
 *
 * The rules are md's (drivers/md/raid5-ppl.c, its header comment):
 *  - every member has a log of its own, for the stripes whose parity it
 *    holds; an entry with its partial parity is durable there (one write,
 *    FUA: the header, then the PP of each entry in order) before any of
 *    that stripe's data or parity writes is issued;
 *  - entries of several requests go into one io_unit (group commit); a
 *    log has at most one unit written whose stripes are not all written
 *    yet: "Another io_unit can't be submitted until the previous has
 *    completed (PPL and stripe data+parity is written)";
 *  - "If write-back cache is enabled for any of the disks in the array,
 *    its data must be flushed before next io_unit is submitted": members
 *    written under a unit (without FUA) are synced before the log's next
 *    unit is written -- page caches and NBD servers are such caches;
 *  - every unit goes to the start of the area, as md's single-PPL mode
 *    writes (ppl_submit_iounit without use_multippl); md's multiple-PPL
 *    reader walks headers from the start and keeps the newest, and the
 *    rest of the area is zeroed at every start, so it reads ours;
 *  - at start a dirty array is recovered from the newest header of each
 *    log (ppl_load_distributed, ppl_recover), then every log is emptied
 *    (ppl_write_empty_header); the array is recorded clean if entries were
 *    recovered and none was refused (ppl_init_log).
 *
 * No deadlock: a request logs its parity groups one after another in
 * member order, and its group's stripes are written (its unit left)
 * before it logs the next; so no request waits for a unit while holding
 * one back.  A unit is written by one of its own requests (the first to
 * find the log free, or the one that wrote the unit before it), not by a
 * thread of the log's, and that request also issues every request's
 * writes of the unit's stripes (ppl_ticket).
 *
 * Locking: each log's lock guards its units and tickets; the request
 * that writes a unit does its I/O without it.  Errors: 0/-errno; a unit
 * that could not be written fails every request in it with the op to
 * blame.
 */
#ifndef ARRAY_PPL_H
#define ARRAY_PPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/batch.h"
#include "raid/plan.h"
#include "raid/ppl.h"

struct array;
struct array_err;
struct plan_run;

enum ppl_unit_state {
  PPL_UNIT_IDLE,              /* free (the log's other unit gathers) */
  PPL_UNIT_GATHERING,         /* takes entries */
  PPL_UNIT_WRITING,           /* its log write, then its stripes' writes */
};

/* A request's part in a unit.  The request that writes the unit also
 * issues every request's writes of the unit's stripes (one thread, no
 * wakeup between the log write and the data, nor between one unit and
 * the next), and fills in the rest.
 */
struct ppl_ticket {
  struct plan_run *x;         /* the request's plan run */
  bool done;                  /* all below is set */
  int log_result;             /* the unit's write: 0 or -errno ... */
  struct io_op failed;        /* ... and then the op to blame */
  int result;                 /* plan_run_writes' for the group: x->ops
                               * and x->nops say what failed */
};

struct ppl_unit {
  enum ppl_unit_state state;
  struct ppl_header hdr;      /* entries_count entries gathered */
  uint32_t pp_bytes;          /* PP bytes after the header */
  unsigned joiners;           /* requests in it */
  struct ppl_ticket *tickets[PPL_HDR_MAX_ENTRIES];
  struct io_op failed;        /* what to blame when its write failed */
  /* The unit as it goes to the log, 4096-aligned: the header, then the
   * PP of its entries in order (copied in as they join: one write, and
   * no two ops of it share a block on a member with O_DIRECT).
   */
  void *block;                /* PPL_HEADER_SIZE + unit_room bytes */
  /* Its requests wait here: to be done, or (GATHERING) to be the one
   * that writes it once the log's other unit is idle.  Woken all at once
   * when they are done, one when it may be written.
   */
  pthread_cond_t wake;
};

struct ppl_log {
  pthread_mutex_t lock;
  pthread_cond_t room;        /* a full gathering unit went out */
  unsigned room_waiters;
  struct ppl_unit unit[2];
  unsigned gather;            /* unit[gather] is GATHERING */
  uint64_t flush;             /* members to sync before the next unit */
};

struct ppl {
  bool on;                    /* the array keeps a log */
  uint64_t area_off;          /* bytes from a member's start */
  uint64_t area_len;          /* usable bytes (md's ppl_validate_rdev) */
  uint32_t unit_room;         /* PP bytes one unit holds */
  uint32_t signature;
  _Atomic uint64_t seq;       /* the last unit's generation */
  struct ppl_log *logs;       /* one per member, if on */
  bool made;
  _Atomic uint64_t units, entries;    /* written since open */
  unsigned recovered, refused;        /* entries at start (md's
                                       * recovered_entries, mismatch_count) */
};

/* Entries and PP bytes a batch of a request may log (r5_range's
 * ppl_entries and ppl_bytes), so that one unit holds any group of it.
 */
#define PPL_BATCH_ENTRIES (PPL_HDR_MAX_ENTRIES - 4)

/* From the superblock: is there a log, where, how big (after
 * meta_assemble).  0, or -EINVAL with err when md would refuse the area.
 */
int ppl_setup (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Locks and units (after ppl_setup).  0 or -ENOMEM with err. */
int ppl_init (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
void ppl_free (struct array *a) __attribute__((nonnull));

/* At start (after ppl_init, before job_init): recover a dirty array from
 * its logs, empty every log in service, record the array clean as md
 * does (ppl-recover.c).  0, or -errno with err.
 */
int ppl_start (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Run x's plan (made with ppl) as plan_run does, with its entries logged
 * group by group before that group's writes.  On failure x->ops[0..nops)
 * are the ops to blame, as after plan_run.
 */
int ppl_run (struct array *a, struct plan_run *x)
  __attribute__((nonnull, warn_unused_result));

/* Slot's member (or, slot ARRAY_REPLACEMENT, the replacement of slot
 * a->replace.slot) joins an array with a log: its log area zeroed with
 * an empty header, as mdadm's write_init_ppl1 (for every device it adds,
 * a replacement's too) and md's ppl_write_empty_header leave it -- a
 * device that held a log of this array before would otherwise bring its
 * stale entries to the next dirty start.  0 (also without a log), or
 * -errno with err.
 */
int ppl_init_member (struct array *a, unsigned slot, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

#endif /* ARRAY_PPL_H */
