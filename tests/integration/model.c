/* tests/integration/model.c -- see model.h. */

#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

static uint64_t
known_bytes (uint64_t size)
{
  return (size + 7) / 8;
}

int
model_init (struct model *m, uint64_t size, bool known)
{
  m->size = size;
  m->data = calloc (size ? size : 1, 1);
  m->known = malloc (known_bytes (size) + 1);
  if (m->data == NULL || m->known == NULL) {
    perror ("model: malloc");
    model_free (m);
    return -1;
  }
  memset (m->known, known ? 0xff : 0, known_bytes (size) + 1);
  return 0;
}

void
model_free (struct model *m)
{
  free (m->data);
  free (m->known);
  m->data = m->known = NULL;
}

/* Read exactly len bytes of path into buf.  Returns 0 / -1. */
static int
read_file (const char *path, unsigned char *buf, uint64_t len)
{
  int fd = open (path, O_RDONLY);
  uint64_t done = 0;

  if (fd == -1) {
    fprintf (stderr, "model: %s: %m\n", path);
    return -1;
  }
  while (done < len) {
    ssize_t r = read (fd, buf + done, len - done);
    if (r <= 0) {
      fprintf (stderr, "model: %s: short read at %" PRIu64 "\n", path, done);
      close (fd);
      return -1;
    }
    done += r;
  }
  close (fd);
  return 0;
}

static int
write_file (const char *path, const unsigned char *buf, uint64_t len)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  uint64_t done = 0;

  if (fd == -1) {
    fprintf (stderr, "model: %s: %m\n", path);
    return -1;
  }
  while (done < len) {
    ssize_t r = write (fd, buf + done, len - done);
    if (r <= 0) {
      fprintf (stderr, "model: %s: write: %m\n", path);
      close (fd);
      return -1;
    }
    done += r;
  }
  if (close (fd) == -1) {
    fprintf (stderr, "model: %s: close: %m\n", path);
    return -1;
  }
  return 0;
}

static char *
known_path (const char *path)
{
  char *p;

  if (asprintf (&p, "%s.known", path) == -1) {
    perror ("model: asprintf");
    return NULL;
  }
  return p;
}

int
model_load (struct model *m, const char *path)
{
  struct stat st;
  char *kpath;
  int r = 0;

  if (stat (path, &st) == -1) {
    fprintf (stderr, "model: %s: %m\n", path);
    return -1;
  }
  if (model_init (m, st.st_size, true) == -1)
    return -1;
  kpath = known_path (path);
  if (kpath == NULL || read_file (path, m->data, m->size) == -1)
    r = -1;
  else if (access (kpath, F_OK) == 0)
    r = read_file (kpath, m->known, known_bytes (m->size));
  free (kpath);
  if (r == -1)
    model_free (m);
  return r;
}

int
model_save (const struct model *m, const char *path)
{
  char *kpath = known_path (path);
  int r = -1;

  if (kpath != NULL &&
      write_file (path, m->data, m->size) == 0 &&
      write_file (kpath, m->known, known_bytes (m->size)) == 0)
    r = 0;
  free (kpath);
  return r;
}

/* Set or clear the known bits of [off, off + len): whole bytes of the
 * bitmap in the middle, bit by bit at the ends.
 */
static void
set_known (struct model *m, uint64_t off, uint64_t len, bool known)
{
  uint64_t end = off + len;

  while (off < end && (off & 7) != 0) {
    if (known)
      m->known[off >> 3] |= 1u << (off & 7);
    else
      m->known[off >> 3] &= ~(1u << (off & 7));
    off++;
  }
  if (end - off >= 8) {
    memset (&m->known[off >> 3], known ? 0xff : 0, (end - off) >> 3);
    off += (end - off) & ~UINT64_C(7);
  }
  for (; off < end; off++) {
    if (known)
      m->known[off >> 3] |= 1u << (off & 7);
    else
      m->known[off >> 3] &= ~(1u << (off & 7));
  }
}

void
model_write (struct model *m, uint64_t off, const void *buf, size_t len)
{
  memcpy (m->data + off, buf, len);
  set_known (m, off, len, true);
}

void
model_zero (struct model *m, uint64_t off, size_t len)
{
  memset (m->data + off, 0, len);
  set_known (m, off, len, true);
}

void
model_forget (struct model *m, uint64_t off, size_t len)
{
  set_known (m, off, len, false);
}

uint64_t
model_count_known (const struct model *m, uint64_t off, uint64_t len)
{
  uint64_t n = 0, i;

  for (i = off; i < off + len; i++) {
    if ((i & 7) == 0 && i + 8 <= off + len &&
        (m->known[i >> 3] == 0 || m->known[i >> 3] == 0xff)) {
      n += m->known[i >> 3] ? 8 : 0;
      i += 7;
      continue;
    }
    n += model_is_known (m, i);
  }
  return n;
}

/* Compare one byte; counts it in d if it is known and differs. */
static void
compare_byte (struct model *m, uint64_t off, unsigned char got, bool learn,
              struct model_diff *d)
{
  if (!model_is_known (m, off)) {
    if (learn) {
      m->data[off] = got;
      m->known[off >> 3] |= 1u << (off & 7);
    }
    return;
  }
  if (m->data[off] == got)
    return;
  if (d->differ == 0)
    d->first = off;
  d->last = off;
  d->differ++;
}

uint64_t
model_compare (struct model *m, uint64_t off, const unsigned char *buf,
               size_t len, bool learn, struct model_diff *d)
{
  size_t i = 0;

  memset (d, 0, sizeof *d);
  while (i < len) {
    uint64_t a = off + i;

    /* Fast path: 8 bytes, all known, all equal. */
    if ((a & 7) == 0 && i + 8 <= len && m->known[a >> 3] == 0xff &&
        memcmp (m->data + a, buf + i, 8) == 0) {
      i += 8;
      continue;
    }
    compare_byte (m, a, buf[i], learn, d);
    i++;
  }
  return d->differ;
}

void
print_bytes (const char *label, const unsigned char *buf, uint64_t base,
             size_t len, uint64_t at)
{
  uint64_t start = at >= base + 8 ? at - 8 : base;
  uint64_t end = start + 32 < base + len ? start + 32 : base + len;
  uint64_t i;

  fprintf (stderr, "  %-8s @%#" PRIx64 ":", label, start);
  for (i = start; i < end; i++)
    fprintf (stderr, i == at ? " [%02x]" : " %02x", buf[i - base]);
  fprintf (stderr, "  |");
  for (i = start; i < end; i++)
    fputc (isprint (buf[i - base]) ? buf[i - base] : '.', stderr);
  fprintf (stderr, "|\n");
}

int
parse_size (const char *s, uint64_t *ret)
{
  char *end;
  unsigned long long v;
  unsigned shift = 0;

  errno = 0;
  v = strtoull (s, &end, 0);
  if (errno != 0 || end == s || *s == '-')
    return -1;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  }
  if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
    return -1;
  *ret = (uint64_t) v << shift;
  return 0;
}
