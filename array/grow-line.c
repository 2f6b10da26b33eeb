/* array/grow-line.c -- requests while a grow is under way (grow.h): the
 * write path's "reshape line" row, which sends each batch to the shape
 * its address is in, and the recording of the line.
 *
 * md's rules (raid5.c make_stripe_request): a request ahead of the line
 * (reshape_progress) runs in the old shape; one behind the line but
 * ahead of what the superblocks record (reshape_safe) waits until they
 * record it -- after a crash those bytes are read in the old shape again,
 * so a write there would be lost -- and one in the window being moved
 * waits for the move.  Here a read behind the line goes on (what a crash
 * brings back there is the same bytes), and a write there records the
 * line itself rather than waiting for the job, which may be paused or
 * held back by the speed limits.  The window is kept by the locks of its
 * old-shape stripes, which every old-shape batch takes, reads too.
 *
 * Why batches of the two shapes never touch the same member bytes: the
 * new shape's stripes below the line were written where the old shape's
 * bytes below the line were (the job never writes over old bytes at or
 * past what is recorded: reshape.h), and the old shape's bytes at or past
 * the line lie past them.
 */
#include <config.h>

#include <inttypes.h>
#include <string.h>

#include "array/grow.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/writepath.h"

uint64_t
grow_line (const struct array *a)
{
  return a->job.cursor * a->geom.stripe_data;
}

uint64_t
array_capacity (const struct array *a)
{
  return a->grow.active ? a->grow.r.from.capacity : a->geom.capacity;
}

void
grow_write_stripes (const struct array *a, uint64_t off, uint64_t len,
                    struct meta_marks *marks)
{
  const struct r5_geom *shape[2] = { &a->geom, &a->grow.r.from };

  marks->n = a->grow.active ? 2 : 1;
  for (unsigned i = 0; i < marks->n; i++) {
    marks->r[i].first = off / shape[i]->stripe_data;
    marks->r[i].last = (off + len - 1) / shape[i]->stripe_data;
  }
}

int
grow_record (struct array *a, uint64_t line, struct array_err *err)
{
  struct grow *g = &a->grow;
  int r = 0;

  pthread_mutex_lock (&g->record_lock);
  if (g->active && line > g->safe &&
      (r = array_sync (a, err)) == 0 &&
      (r = meta_apply (a, &(struct md_event) { .kind = MD_EV_RESHAPE_CP,
                                               .sectors = line / 512 },
                       err)) == 0) {
    g->safe = line;
    g->recorded_ns = array_now_ns ();
  }
  pthread_mutex_unlock (&g->record_lock);
  return r;
}

/* A batch ahead of the line: the old shape, where the new slots are not. */
static void
ahead (struct array *a, struct wp_batch *b)
{
  const struct r5_geom *from = &a->grow.r.from;

  b->geom = from;
  b->lock_reads = true;
  if (b->range->missing >= (int) from->members)
    b->range->missing = -1;
}

int
grow_shape (struct array *a, struct wp_batch *b, struct array_err *err)
{
  struct r5_range *rg = b->range;
  bool write = rg->op != R5_OP_READ;

  for (;;) {
    uint64_t line = grow_line (a);
    uint64_t end = write ? a->grow.safe : line;
    int r;

    if (!a->grow.active)
      return 0;               /* ended meanwhile: one shape, the array's */
    if (rg->off >= line) {
      ahead (a, b);
      return 0;
    }
    if (rg->off < end) {
      if (rg->len > end - rg->off)
        rg->len = end - rg->off;
      return 0;
    }
    if ((r = grow_record (a, line, err)) < 0)
      return r;
  }
}

/* A batch in the old shape holds while the line has not reached it and
 * the reshape goes on: once it ended (md: reshape_progress = MaxSector)
 * every byte is in the new shape.  The line is read before active: if
 * the reshape was still on after the read, the line read was its own
 * (a job after it, resetting the cursor, starts only once it is over).
 */
bool
grow_holds (const struct array *a, const struct wp_batch *b)
{
  uint64_t line;

  if (b->geom != &a->grow.r.from)
    return true;
  line = grow_line (a);
  return a->grow.active && b->range->off >= line;
}
