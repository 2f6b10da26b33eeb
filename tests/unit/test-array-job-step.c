/* tests/unit/test-array-job-step.c -- a job's steps through the array
 * layer, without nbdkit (arrayfx.h).  Asserts: a check over an array
 * whose parity is wrong in two stripes finds exactly those (in order,
 * the parity member and the first wrong offset named), counts md's
 * mismatch_cnt (8 sectors a wrong 4 KiB unit), and its progress rises
 * to the whole array; a repair rewrites them and changes no data; a
 * check after it finds nothing.
 */
#include <config.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/layout.h"
#include "tests/unit/arrayfx.h"

struct seen {
  uint64_t stripes[8];
  unsigned n;
  uint64_t last_done, total, calls;
  bool went_back;
};

static void
on_progress (void *opaque, uint64_t done, uint64_t total)
{
  struct seen *s = opaque;

  s->went_back |= done < s->last_done;
  s->last_done = done;
  s->total = total;
  s->calls++;
}

static void
on_found (void *opaque, const struct array_mismatch *mm)
{
  struct seen *s = opaque;

  if (s->n < 8)
    s->stripes[s->n++] = mm->stripe;
}

static int
run (struct afx *f, enum r5_job kind, struct seen *s)
{
  struct array_job_watch w = { .progress = on_progress, .found = on_found,
                               .opaque = s };
  struct array_err err;
  int r;

  memset (s, 0, sizeof *s);
  r = array_job_run (f->a, kind, &w, &err);
  cr_assert_eq (r, 0, "%s: %s", r5_job_name (kind), err.msg);
  return r;
}

Test (array_job, check_finds_repair_fixes, .timeout = 120)
{
  struct afx f;
  struct array_job_status st;
  struct seen s;
  const uint64_t bad[2] = { 3, 10 };
  struct r5_geom g;

  afx_make (&f, 3, 4 << 20, NULL);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 1);
  g = *array_geom (f.a);
  afx_close (&f);
  /* Parity of stripes 3 and 10, where md's layout puts it. */
  for (unsigned i = 0; i < 2; i++)
    afx_flip (&f, r5_parity_member (&g, bad[i]),
              r5_stripe_member_off (&g, bad[i]) + 5000, 0x40);
  afx_open_ok (&f);
  run (&f, R5_JOB_CHECK, &s);
  array_job_status (f.a, &st);
  cr_assert_eq (s.n, 2, "stripes found: %u", s.n);
  cr_assert (s.stripes[0] == 3 && s.stripes[1] == 10,
             "found stripes %lu and %lu", (unsigned long) s.stripes[0],
             (unsigned long) s.stripes[1]);
  cr_assert_eq (st.last_mismatches, 16, "mismatch_cnt %lu",
                (unsigned long) st.last_mismatches);
  cr_assert_eq (st.last_stripes_bad, 2);
  cr_assert (s.calls > 0 && !s.went_back, "progress went back");
  cr_assert_eq (s.last_done, s.total, "progress ends at %lu of %lu",
                (unsigned long) s.last_done, (unsigned long) s.total);
  cr_assert_eq (s.total, array_geom (f.a)->stripes);
  run (&f, R5_JOB_REPAIR, &s);
  cr_assert_eq (s.n, 2, "repair met the same two");
  run (&f, R5_JOB_CHECK, &s);
  array_job_status (f.a, &st);
  cr_assert_eq (s.n, 0, "after the repair: %u wrong", s.n);
  cr_assert_eq (st.last_mismatches, 0);
  afx_verify (&f);            /* the data was never changed */
  afx_cleanup (&f);
}

/* A look at status taken while slot 1 fails and is rebuilt, over and
 * over, by another thread: each look must show the job and the slot from
 * one moment -- a rebuild running exactly when the slot is rebuilding.
 * (A look that showed the job from before the rebuild's end beside the
 * slot from after it made raid5ctl monitor miss a hot spare taking a
 * failed member's slot.)
 */
struct looker {
  struct afx *f;
  atomic_bool stop;
  atomic_uint torn;           /* read by the test's thread meanwhile */
  unsigned looks, unreadable;
  char first_torn[96];
};

static const char *
str_at (json_object *o, const char *key)
{
  json_object *v;

  return o && json_object_object_get_ex (o, key, &v)
    ? json_object_get_string (v) : "";
}

static void
look_once (struct looker *l)
{
  json_object *root = afx_status_json (l->f), *job = NULL, *ms = NULL;
  const char *kind, *state;

  if (root == NULL || !json_object_object_get_ex (root, "job", &job) ||
      !json_object_object_get_ex (root, "members", &ms)) {
    l->unreadable++;
    json_object_put (root);
    return;
  }
  kind = str_at (job, "kind");
  state = str_at (json_object_array_get_idx (ms, 1), "state");
  if ((strcmp (kind, "rebuild") == 0) != (strcmp (state, "rebuilding") == 0)
      && l->torn++ == 0)
    snprintf (l->first_torn, sizeof l->first_torn, "job %s, slot 1 %s",
              kind, state);
  l->looks++;
  json_object_put (root);
}

static void *
look_on (void *opaque)
{
  struct looker *l = opaque;

  while (!atomic_load (&l->stop))
    look_once (l);
  return NULL;
}

Test (array_job, status_is_one_look, .timeout = 120)
{
  struct afx f;
  struct looker l = { .f = &f };
  struct array_err err;
  pthread_t t;

  afx_make (&f, 3, 2 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 4);
  cr_assert_eq (pthread_create (&t, NULL, look_on, &l), 0);
  for (unsigned i = 0; i < 150 && atomic_load (&l.torn) == 0; i++) {
    cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
    cr_assert_geq (array_rebuild_start (f.a, 1, f.path[1], false, &err), 0,
                   "%s", err.msg);
    cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                  err.msg);
  }
  atomic_store (&l.stop, true);
  pthread_join (t, NULL);
  cr_assert_eq (l.unreadable, 0, "%u looks were not JSON", l.unreadable);
  cr_assert_eq (atomic_load (&l.torn), 0, "%u of %u looks torn; the "
                "first: %s", atomic_load (&l.torn), l.looks, l.first_torn);
  cr_assert_gt (l.looks, 0);
  afx_verify (&f);
  afx_cleanup (&f);
}
