/* tools/mkfs-hint.c -- raid5ctl mkfs-hint: the stripe options for
 * mkfs.ext4 and mkfs.xfs, the NBD block sizes, and partition alignment,
 * computed for one geometry and explained.
 *
 * The alignment lesson is the seed posts' (a partition at sector 63 halved
 * write speed against sector 64): writes the filesystem lines up with its
 * stripe hints only avoid reads if the partition starts on a stripe
 * boundary.  The costs shown are the planner's (r5_plan_range).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/plan.h"
#include "tools/raid5ctl.h"
#include "tools/teach.h"

#define MAX_PREFERRED (32u << 20)       /* as plugin/raid5.c */
#define NBD_MAX_BLOCK 4096u             /* kernel nbd: at most a page */
#define MIB (UINT64_C (1) << 20)

/* A write's cost as the planner plans it. */
struct wcost {
  uint64_t chunks, reads, writes;
};

/* One partition start, and what two writes at its beginning cost. */
struct start {
  uint64_t sector;
  const char *what;
  struct wcost chunk_write, stripe_write;
};

static void
usage (void)
{
  printf (
"usage: raid5ctl mkfs-hint [--block SIZE] [GEOMETRY] [--json] [--from DISK...]\n"
"\n"
"What to tell a filesystem about this array's stripes: mkfs.ext4's\n"
"-E stride=,stripe_width= and mkfs.xfs's -d su=,sw=, the block sizes for\n"
"nbd-client and the one the raid5 plugin advertises, and where a partition\n"
"must start so that the filesystem's stripe-sized writes stay whole stripes.\n"
"\n"
"  --block SIZE         filesystem block size in bytes (4096)\n"
TEACH_OPTIONS_HELP
"\n"
"Examples:\n"
"  raid5ctl mkfs-hint --chunk 64K              stride=16,stripe_width=32\n"
"  raid5ctl mkfs-hint --chunk 64K --disks 4\n"
"  raid5ctl mkfs-hint --from d0.img d1.img d2.img\n");
}

static int
parse_block (const char *arg, uint64_t *block)
{
  if (teach_parse_bytes ("--block", arg, block) != 0)
    return TOOL_FAIL;
  if (*block < 1024 || *block > 65536 || (*block & (*block - 1)) != 0)
    return tool_error ("--block %s: must be a power of two from 1024 to "
                       "65536", arg);
  return 0;
}

static int
take_block (const char *arg, void *ctx)
{
  return parse_block (arg, ctx);
}

static int
parse_args (int argc, char **argv, struct teach *t, uint64_t *block)
{
  const struct teach_extra extra = { "block", take_block, block, usage, false };

  if (teach_getopt (t, &argc, argv, &extra) != 0)
    return TOOL_FAIL;
  if (optind < argc)
    return tool_error ("unexpected argument '%s' (see raid5ctl mkfs-hint "
                       "--help)", argv[optind]);
  if (teach_geometry (t) != 0)
    return TOOL_FAIL;
  if (*block > t->g.chunk)
    return tool_error ("--block %" PRIu64 " is larger than the chunk (%"
                       PRIu64 "): a stride would be less than one block",
                       *block, t->g.chunk);
  return 0;
}

/* The preferred block size the plugin advertises (raid5_block_size in
 * plugin/raid5.c): the largest power of two dividing a full stripe, from
 * 512 bytes to 32M; the full stripe itself when it is a power of two.
 */
static uint64_t
preferred_block (const struct r5_geom *g)
{
  uint64_t divisor = g->stripe_data & -g->stripe_data, p = 512;

  while (p * 2 <= divisor && p * 2 <= MAX_PREFERRED)
    p *= 2;
  return p;
}

/* Plan a write of [off, off+len) and count its member I/Os (0 if the
 * array is too small to hold it).
 */
static int
write_cost (const struct r5_geom *g, uint64_t off, uint64_t len,
            struct wcost *c)
{
  struct r5_plan p;
  uint64_t planned;
  int r = 0;

  *c = (struct wcost) { 0, 0, 0 };
  if (off >= g->capacity || len > g->capacity - off)
    return 0;
  c->chunks = (off + len - 1) / g->chunk - off / g->chunk + 1;
  r5_plan_init (&p);
  for (uint64_t pos = off; pos < off + len && r == 0; pos += planned)
    r = r5_plan_range (&p, g, &(struct r5_range) {
          .op = R5_OP_WRITE, .off = pos, .len = off + len - pos,
          .req_off = off, .missing = -1, .budget = UINT64_C (1) << 30 },
        &planned);
  for (size_t i = 0; i < p.nios; i++) {
    c->reads += p.ios[i].kind == R5_IO_READ;
    c->writes += p.ios[i].kind == R5_IO_WRITE;
  }
  r5_plan_free (&p);
  return r < 0 ? tool_error ("out of memory") : 0;
}

/* Partition starts worth showing: the old DOS default, the seed post's
 * fix, today's 1 MiB, and (if that is not one) the first multiple of the
 * stripe from 1 MiB on.
 */
static int
find_starts (const struct r5_geom *g, struct start *s, unsigned *n)
{
  uint64_t sd = g->stripe_data;
  uint64_t rec = (MIB + sd - 1) / sd * sd;

  s[0] = (struct start) { .sector = 63, .what = "the old DOS default" };
  s[1] = (struct start) { .sector = 64, .what = "the seed post's fix, "
                          "for 4K-sector disks" };
  s[2] = (struct start) { .sector = 2048, .what = "fdisk's default today" };
  *n = 3;
  if (rec != MIB)
    s[(*n)++] = (struct start) { .sector = rec / R5_SECTOR,
                                 .what = "the first stripe multiple from "
                                 "1 MiB" };
  for (unsigned i = 0; i < *n; i++)
    if (write_cost (g, s[i].sector * R5_SECTOR, g->chunk,
                    &s[i].chunk_write) != 0 ||
        write_cost (g, s[i].sector * R5_SECTOR, sd, &s[i].stripe_write) != 0)
      return TOOL_FAIL;
  return 0;
}

/* "64k" for xfs's su=. */
static const char *
xfs_size (uint64_t bytes, char *buf, size_t len)
{
  teach_size (bytes, buf, len);
  for (char *p = buf; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char) (*p - 'A' + 'a');
  return buf;
}

static void
print_mkfs (const struct r5_geom *g, uint64_t block)
{
  uint64_t stride = g->chunk / block;
  char c[32], su[32];

  teach_size (g->chunk, c, sizeof c);
  printf ("mkfs.ext4 -b %" PRIu64 " -E stride=%" PRIu64 ",stripe_width=%"
          PRIu64 " DEVICE\n", block, stride, stride * g->data_members);
  printf ("  stride = chunk / block = %s / %" PRIu64 " = %" PRIu64 " blocks "
          "(one member's part of a stripe)\n", c, block, stride);
  printf ("  stripe_width = stride x data members = %" PRIu64 " x %u = %"
          PRIu64 " blocks (a stripe's data:\n  N-1 chunks, not N, as parity "
          "holds no file data)\n", stride, g->data_members,
          stride * g->data_members);
  printf ("mkfs.xfs -d su=%s,sw=%u DEVICE\n",
          xfs_size (g->chunk, su, sizeof su), g->data_members);
  printf ("  su = stripe unit = the chunk; sw = stripe width in units = the "
          "data members (%u)\n", g->data_members);
}

/* After raid5ctl grow: the file system grows to the array, and its
 * stripe hints follow the data-chunk count, which a grow changes.
 */
static void
print_grow (const struct r5_geom *g, uint64_t block)
{
  uint64_t stride = g->chunk / block, su = g->chunk / 512;

  printf ("after raid5ctl grow --add (one member more: %u data chunks per "
          "stripe):\n", g->data_members + 1);
  printf ("  ext4: resize2fs DEVICE (mounted or not), then tune2fs -E "
          "stride=%" PRIu64 ",stripe_width=%" PRIu64 " DEVICE\n", stride,
          stride * (g->data_members + 1));
  printf ("  xfs: xfs_growfs MOUNTPOINT, and mount with -o sunit=%" PRIu64
          ",swidth=%" PRIu64 " (512-byte units)\n", su,
          su * (g->data_members + 1));
  printf ("  (an existing file system keeps the stride and stripe width it "
          "was made with until told)\n");
}

static void
print_nbd (const struct r5_geom *g, uint64_t block)
{
  uint64_t pref = preferred_block (g);
  char sd[32], p[32];

  printf ("nbd-client -b %" PRIu64 " HOST /dev/nbd0\n",
          block < NBD_MAX_BLOCK ? block : NBD_MAX_BLOCK);
  printf ("  -b: the device's block size; the filesystem's (at most %u, a "
          "page, for the kernel)\n", NBD_MAX_BLOCK);
  teach_size (g->stripe_data, sd, sizeof sd);
  teach_size (pref, p, sizeof p);
  printf ("the raid5 plugin advertises a preferred block size of %s: ", p);
  if (pref == g->stripe_data)
    printf ("one full stripe\n");
  else if ((g->stripe_data & (g->stripe_data - 1)) == 0)
    printf ("a full stripe (%s),\n  capped at %u MiB\n", sd,
            MAX_PREFERRED >> 20);
  else
    printf ("a full stripe (%s) is\n  not a power of two, which NBD needs, "
            "so it is the largest power of two\n  dividing one%s\n", sd,
            pref == MAX_PREFERRED ? " (at most 32 MiB)" : "");
}

static void
print_why (const struct r5_geom *g)
{
  char c[32], sd[32];

  teach_size (g->chunk, c, sizeof c);
  teach_size (g->stripe_data, sd, sizeof sd);
  printf ("\nA stripe holds %u data chunks of %s = %s of array data, plus "
          "one %s parity chunk.\nParity is kept per stripe: a write of whole, "
          "aligned stripes computes it from the\nnew data alone (no reads); "
          "anything less must read first (RCW or RMW: see\nraid5ctl explain)."
          "  With these hints the filesystem places and sizes its writes\nin "
          "stripes, which helps only if its stripes are the array's.\n\n",
          g->data_members, c, sd, c);
}

static void
print_start (const struct r5_geom *g, const struct start *s)
{
  uint64_t off = s->sector * R5_SECTOR;
  char c[32], sd[32], o[32];

  teach_size (g->chunk, c, sizeof c);
  teach_size (g->stripe_data, sd, sizeof sd);
  printf ("  sector %-5" PRIu64 " (%s, %s): %s\n", s->sector,
          teach_size (off, o, sizeof o), s->what,
          off % g->stripe_data == 0 ? "stripe-aligned"
          : off % g->chunk == 0 ? "chunk-aligned, not stripe-aligned"
          : off % 4096 == 0 ? "4K-aligned, not chunk-aligned"
          : "not even 4K-aligned");
  if (s->chunk_write.chunks == 0)
    return;
  printf ("    a %s write at its start touches %" PRIu64 " chunk%s: %" PRIu64
          " read%s + %" PRIu64 " writes\n", c, s->chunk_write.chunks,
          s->chunk_write.chunks == 1 ? "" : "s", s->chunk_write.reads,
          s->chunk_write.reads == 1 ? "" : "s", s->chunk_write.writes);
  printf ("    a %s (stripe_width) write: %" PRIu64 " read%s + %" PRIu64
          " writes%s\n", sd, s->stripe_write.reads,
          s->stripe_write.reads == 1 ? "" : "s", s->stripe_write.writes,
          s->stripe_write.reads == 0 ? ", a full-stripe write" : "");
}

static void
print_alignment (const struct r5_geom *g, const struct start *s, unsigned n)
{
  char sd[32];

  printf ("\nPartition alignment: array byte 0 starts a stripe, so a "
          "partition must start on a\nmultiple of the stripe (%s) for the "
          "filesystem's stripes to be the array's.\n(In the seed post a "
          "partition at sector 63 wrote at half the speed of one at 64.)\n",
          teach_size (g->stripe_data, sd, sizeof sd));
  for (unsigned i = 0; i < n; i++)
    print_start (g, &s[i]);
  printf ("Start at sector %" PRIu64 ", or any multiple of %" PRIu64
          " sectors (a stripe), or put the\nfilesystem on the whole device "
          "(offset 0 is aligned).\n", s[n - 1].sector,
          g->stripe_data / R5_SECTOR);
}

static void
json_wcost (struct json *j, const char *key, const struct wcost *c)
{
  tool_json_open (j, key, '{');
  tool_json_u64 (j, "chunks", c->chunks);
  tool_json_u64 (j, "reads", c->reads);
  tool_json_u64 (j, "writes", c->writes);
  tool_json_close (j, '{');
}

static void
json_starts (struct json *j, const struct r5_geom *g, const struct start *s,
             unsigned n)
{
  tool_json_open (j, "partition_starts", '[');
  for (unsigned i = 0; i < n; i++) {
    uint64_t off = s[i].sector * R5_SECTOR;

    tool_json_open (j, NULL, '{');
    tool_json_u64 (j, "sector", s[i].sector);
    tool_json_bool (j, "chunk_aligned", off % g->chunk == 0);
    tool_json_bool (j, "stripe_aligned", off % g->stripe_data == 0);
    json_wcost (j, "chunk_write", &s[i].chunk_write);
    json_wcost (j, "stripe_write", &s[i].stripe_write);
    tool_json_close (j, '{');
  }
  tool_json_close (j, '[');
  tool_json_u64 (j, "recommended_start_sector", s[n - 1].sector);
}

static void
print_json (const struct teach *t, uint64_t block, const struct start *s,
            unsigned n)
{
  const struct r5_geom *g = &t->g;
  uint64_t stride = g->chunk / block;
  struct json j;
  char su[32];

  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '{');
  teach_json_geometry (&j, t);
  tool_json_u64 (&j, "block", block);
  tool_json_open (&j, "ext4", '{');
  tool_json_u64 (&j, "stride", stride);
  tool_json_u64 (&j, "stripe_width", stride * g->data_members);
  tool_json_close (&j, '{');
  tool_json_open (&j, "xfs", '{');
  tool_json_str (&j, "su", xfs_size (g->chunk, su, sizeof su));
  tool_json_u64 (&j, "su_bytes", g->chunk);
  tool_json_u64 (&j, "sw", g->data_members);
  tool_json_close (&j, '{');
  tool_json_u64 (&j, "nbd_client_block", block < NBD_MAX_BLOCK ? block
                                                          : NBD_MAX_BLOCK);
  tool_json_u64 (&j, "nbd_preferred_block", preferred_block (g));
  json_starts (&j, g, s, n);
  tool_json_close (&j, '{');
}

int
mkfs_hint_main (int argc, char **argv)
{
  struct teach t;
  uint64_t block = 4096;
  struct start s[4];
  unsigned n;

  teach_init (&t);
  if (parse_args (argc, argv, &t, &block) != 0 ||
      find_starts (&t.g, s, &n) != 0)
    return TOOL_FAIL;
  if (t.json) {
    print_json (&t, block, s, n);
    return TOOL_OK;
  }
  teach_print_geometry (&t);
  print_why (&t.g);
  print_mkfs (&t.g, block);
  print_nbd (&t.g, block);
  print_alignment (&t.g, s, n);
  print_grow (&t.g, block);
  return TOOL_OK;
}
