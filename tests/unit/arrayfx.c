/* tests/unit/arrayfx.c -- see arrayfx.h. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <json-c/json.h>

#include "raid/badblocks.h"
#include "tests/unit/arrayfx.h"

/* The array logs from several threads at once (a job's parts, the
 * background thread): appends are serialised, or two lines written at
 * the same place would leave a NUL in the middle of the log.
 */
static pthread_mutex_t loglock = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[16384];
static size_t loglen;

static void
on_log (enum array_log_level level, const char *msg)
{
  int n;

  (void) level;
  pthread_mutex_lock (&loglock);
  n = snprintf (logbuf + loglen, sizeof logbuf - loglen, "%s%s",
                loglen ? "\n" : "", msg);
  if (n > 0 && loglen + (size_t) n < sizeof logbuf)
    loglen += (size_t) n;
  else
    logbuf[loglen] = '\0';   /* a line that does not fit is left out */
  pthread_mutex_unlock (&loglock);
}

const char *
afx_log (void)
{
  return logbuf;
}

void
afx_log_clear (void)
{
  pthread_mutex_lock (&loglock);
  loglen = 0;
  logbuf[0] = '\0';
  pthread_mutex_unlock (&loglock);
}

static void
make_dir (struct afx *f)
{
  const char *base = access ("/dev/shm", W_OK) == 0 ? "/dev/shm"
    : getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";

  snprintf (f->dir, sizeof f->dir, "%s/r5-arrayfx-XXXXXX", base);
  cr_assert_not_null (mkdtemp (f->dir), "mkdtemp in %s", base);
}

void
afx_make (struct afx *f, unsigned n, uint64_t bytes, const char *create_args)
{
  char cmd[8192];
  int at;

  memset (f, 0, sizeof *f);
  make_dir (f);
  f->n = n;
  f->cfg.members = n;
  at = snprintf (cmd, sizeof cmd, "'%s/tools/raid5ctl' create %s",
                 getenv ("abs_top_builddir") ? getenv ("abs_top_builddir")
                 : ".", create_args ? create_args : "");
  for (unsigned i = 0; i < n; i++) {
    snprintf (f->path[i], sizeof f->path[i], "%s/m%u.img", f->dir, i);
    {
      int fd = open (f->path[i], O_CREAT | O_RDWR, 0600);

      cr_assert_geq (fd, 0);
      cr_assert_eq (ftruncate (fd, (off_t) bytes), 0);
      close (fd);
    }
    f->cfg.paths[i] = f->path[i];
    at += snprintf (cmd + at, sizeof cmd - (size_t) at, " '%s'", f->path[i]);
  }
  if (create_args == NULL) {
    f->cfg.metadata = ARRAY_META_NONE;
    f->cfg.chunk = 64 << 10;
    f->cfg.layout = R5_LEFT_SYMMETRIC;
    return;
  }
  strncat (cmd, " >/dev/null 2>&1", sizeof cmd - strlen (cmd) - 1);
  cr_assert_eq (system (cmd), 0, "%s", cmd);
}

int
afx_open (struct afx *f, struct array_err *err)
{
  int r;

  f->a = NULL;
  if ((r = array_open (&f->cfg, on_log, &f->a, err)) < 0)
    return r;
  f->cap = array_capacity (f->a);
  free (f->model);
  f->model = malloc (f->cap);
  cr_assert_not_null (f->model);
  cr_assert_eq (array_read (f->a, f->model, f->cap, 0, err), 0, "%s",
                err->msg);
  return 0;
}

void
afx_open_ok (struct afx *f)
{
  struct array_err err;

  cr_assert_eq (afx_open (f, &err), 0, "array_open: %s", err.msg);
}

/* The array opened again on f's configuration, its model kept. */
static void
open_again (struct afx *f)
{
  struct array_err err;

  cr_assert_eq (array_open (&f->cfg, on_log, &f->a, &err), 0,
                "array_open: %s", err.msg);
}

void
afx_reopen (struct afx *f)
{
  open_again (f);
  cr_assert_eq (array_capacity (f->a), f->cap, "the capacity changed");
}

void
afx_reopen_grown (struct afx *f)
{
  open_again (f);
  cr_assert_gt (array_capacity (f->a), f->cap, "the array did not grow");
}

void
afx_close (struct afx *f)
{
  array_close (f->a);
  f->a = NULL;
}

void
afx_write (struct afx *f, uint64_t off, uint64_t len, unsigned seed)
{
  struct array_err err;
  unsigned x = seed * 2654435761u + 1;

  cr_assert_leq (off + len, f->cap);
  for (uint64_t i = 0; i < len; i++) {
    x = x * 1103515245u + 12345u;
    f->model[off + i] = (unsigned char) (x >> 16);
  }
  cr_assert_eq (array_write (f->a, f->model + off, len, off, 0, &err), 0,
                "write [%lu, +%lu): %s", (unsigned long) off,
                (unsigned long) len, err.msg);
}

/* Bytes [off, off + len) of the array read and compared with the model. */
static void
verify_range (struct afx *f, uint64_t off, uint64_t len)
{
  struct array_err err;
  unsigned char *got = malloc (len ? len : 1);

  cr_assert_not_null (got);
  cr_assert_eq (array_read (f->a, got, len, off, &err), 0, "%s", err.msg);
  for (uint64_t i = 0; i < len; i++)
    if (got[i] != f->model[off + i])
      cr_assert_fail ("array byte %lu reads %u, the model says %u",
                      (unsigned long) (off + i), got[i],
                      f->model[off + i]);
  free (got);
}

void
afx_verify (struct afx *f)
{
  verify_range (f, 0, f->cap);
}

void
afx_verify_lost (struct afx *f, uint64_t lost, uint64_t len)
{
  struct array_err err;
  unsigned char *got = malloc (len);

  cr_assert_not_null (got);
  cr_assert_eq (array_read (f->a, got, len, lost, &err), -EIO,
                "array bytes %lu+%lu read, but are lost",
                (unsigned long) lost, (unsigned long) len);
  free (got);
  if (lost > 0)
    verify_range (f, 0, lost);
  if (lost + len < f->cap)
    verify_range (f, lost + len, f->cap - lost - len);
}

void
afx_check_clean (struct afx *f)
{
  struct array_err err;
  struct array_job_status st;

  cr_assert_eq (array_job_run (f->a, R5_JOB_CHECK, NULL, &err), 0, "%s",
                err.msg);
  array_job_status (f->a, &st);
  cr_assert_eq (st.last_mismatches, 0, "check: mismatch_cnt %lu",
                (unsigned long) st.last_mismatches);
}

json_object *
afx_status_json (struct afx *f)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  json_object *root;

  if (out == NULL)
    return NULL;
  array_status_print (f->a, true, out);
  fclose (out);
  root = json_tokener_parse (text);
  free (text);
  return root;
}

/* A number at o.section.key (section NULL: o.key), or UINT64_MAX. */
static uint64_t
number_at (json_object *o, const char *section, const char *key)
{
  json_object *val;

  if (section && !json_object_object_get_ex (o, section, &o))
    return UINT64_MAX;
  return json_object_object_get_ex (o, key, &val)
    ? (uint64_t) json_object_get_int64 (val) : UINT64_MAX;
}

uint64_t
afx_status (struct afx *f, const char *section, const char *key)
{
  json_object *root = afx_status_json (f);
  uint64_t v;

  cr_assert_not_null (root, "status is not JSON");
  v = number_at (root, section, key);

  json_object_put (root);
  cr_assert_neq (v, UINT64_MAX, "status has no %s.%s", section, key);
  return v;
}

uint64_t
afx_member_status (struct afx *f, unsigned slot, const char *object,
                   const char *key)
{
  json_object *root = afx_status_json (f), *ms;
  uint64_t v = UINT64_MAX;

  cr_assert_not_null (root, "status is not JSON");
  if (json_object_object_get_ex (root, "members", &ms) &&
      slot < json_object_array_length (ms))
    v = number_at (json_object_array_get_idx (ms, slot), object, key);
  json_object_put (root);
  cr_assert_neq (v, UINT64_MAX, "status has no members[%u].%s.%s", slot,
                 object ? object : "", key);
  return v;
}

void
afx_flip (struct afx *f, unsigned i, uint64_t off, unsigned char mask)
{
  int fd = open (f->path[i], O_RDWR);
  unsigned char b;

  cr_assert_geq (fd, 0);
  cr_assert_eq (pread (fd, &b, 1, (off_t) off), 1);
  b ^= mask;
  cr_assert_eq (pwrite (fd, &b, 1, (off_t) off), 1);
  close (fd);
}

void
afx_copy_file (const char *from, const char *to)
{
  static char buf[1 << 20];
  int in = open (from, O_RDONLY);
  int out = open (to, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  ssize_t n;

  cr_assert (in >= 0 && out >= 0, "%s -> %s", from, to);
  while ((n = read (in, buf, sizeof buf)) > 0)
    cr_assert_eq (write (out, buf, (size_t) n), n, "%s", to);
  cr_assert_eq (n, 0, "%s", from);
  close (in);
  close (out);
}

void
afx_new_member (struct afx *f, char *path, size_t size, uint64_t bytes)
{
  int fd;

  snprintf (path, size, "%s/m3.img", f->dir);
  fd = open (path, O_CREAT | O_RDWR, 0600);
  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (ftruncate (fd, (off_t) bytes), 0);
  close (fd);
}

/* The fixture owns its folder: every file a test put there (members
 * added later, spares, backups, records) goes with it -- left behind,
 * they fill /dev/shm run after run.
 */
void
afx_cleanup (struct afx *f)
{
  char path[PATH_MAX + 300];
  DIR *dir;
  struct dirent *e;

  afx_close (f);
  free (f->model);
  f->model = NULL;
  if ((dir = opendir (f->dir)) != NULL) {
    while ((e = readdir (dir)) != NULL) {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      snprintf (path, sizeof path, "%s/%s", f->dir, e->d_name);
      unlink (path);
    }
    closedir (dir);
  }
  cr_expect_eq (rmdir (f->dir), 0, "rmdir %s: %m", f->dir);
}

void
afx_sb_read (const char *path, struct md_sb *sb)
{
  unsigned char block[MD_SB_BLOCK];
  int fd = open (path, O_RDONLY);

  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (pread (fd, block, sizeof block, MD_SB_OFFSET),
                (ssize_t) sizeof block);
  close (fd);
  md_sb_peek (block, sb, NULL);
}

void
afx_sb_write (const char *path, const struct md_sb *sb)
{
  unsigned char block[MD_SB_BLOCK];
  struct md_sb copy = *sb;
  int fd = open (path, O_WRONLY);

  cr_assert_geq (fd, 0, "%s", path);
  md_sb_encode (&copy, block);
  cr_assert_eq (pwrite (fd, block, sizeof block, MD_SB_OFFSET),
                (ssize_t) sizeof block);
  close (fd);
}

void
afx_mark_dirty (struct afx *f, uint64_t sectors)
{
  for (unsigned i = 0; i < f->n; i++) {
    struct md_sb sb;

    afx_sb_read (f->path[i], &sb);
    sb.resync_offset = sectors;
    afx_sb_write (f->path[i], &sb);
  }
}

void
afx_put_log (const char *path, const struct md_bb_table *tb, bool empty_bit)
{
  unsigned char area[4096];
  uint64_t sector;
  struct md_sb sb;
  int fd;

  afx_sb_read (path, &sb);
  cr_assert (md_bblog_area (&sb, &sector, NULL), "%s: no log", path);
  cr_assert_eq (md_bblog_encode (&sb, tb, area), 0);
  cr_assert_eq (md_bblog_feature (&sb, tb, &sb.feature_map), 0);
  if (empty_bit)
    sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
  fd = open (path, O_RDWR);
  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (pwrite (fd, area, sb.bblog_size * 512u, sector * 512),
                (ssize_t) (sb.bblog_size * 512u));
  close (fd);
  afx_sb_write (path, &sb);
}

bool
afx_has_bb_bit (const char *path)
{
  struct md_sb sb;

  afx_sb_read (path, &sb);
  return sb.feature_map & MD_FEATURE_BAD_BLOCKS;
}
