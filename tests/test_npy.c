#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"

/* Each test gets its own scratch folder; Criterion runs tests in separate processes, so a static
 * is per-test. */
static char g_dir[64];
static char g_err[512];

static void npy_setup(void)
{
    strcpy(g_dir, "/tmp/test_npy.XXXXXX");
    cr_assert_not_null(mkdtemp(g_dir));
    g_err[0] = '\0';
}

static void npy_teardown(void)
{
    DIR *d = opendir(g_dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        if (remove(p) != 0) rmdir(p);
    }
    closedir(d);
    rmdir(g_dir);
}

TestSuite(npy, .init = npy_setup, .fini = npy_teardown);

static const char *tpath(const char *name)
{
    static char buf[4][256];
    static int slot;
    char *p = buf[slot++ % 4];
    snprintf(p, 256, "%s/%s", g_dir, name);
    return p;
}

static void put_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static size_t get_bytes(const char *path, unsigned char *b, size_t cap)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    size_t n = fread(b, 1, cap, f);
    fclose(f);
    return n;
}

/* Builds a .npy image by hand: magic, version, header text as given (no padding added), then
 * nbytes of payload. Returns the total size. */
static size_t make_npy(unsigned char *out, int major, const char *hdr, const void *payload,
                       size_t nbytes)
{
    size_t hl = strlen(hdr), pre = major == 1 ? 10 : 12;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hl & 0xff);
    out[9] = (unsigned char)((hl >> 8) & 0xff);
    if (major != 1) {
        out[10] = (unsigned char)((hl >> 16) & 0xff);
        out[11] = (unsigned char)((hl >> 24) & 0xff);
    }
    memcpy(out + pre, hdr, hl);
    if (nbytes) memcpy(out + pre + hl, payload, nbytes);
    return pre + hl + nbytes;
}

/* Writes a hand-made file and expects npy_read to refuse it with a message holding `word`. */
static void expect_reject(const char *name, const unsigned char *img, size_t n, const char *word)
{
    const char *p = tpath(name);
    tensor_t t;
    put_bytes(p, img, n);
    memset(&t, 0x5a, sizeof t);
    cr_assert_eq(npy_read(p, &t, g_err, sizeof g_err), -1, "%s was accepted", name);
    cr_assert_null(t.data, "failed read left data behind");
    cr_assert_not_null(strstr(g_err, word), "message '%s' lacks '%s'", g_err, word);
    cr_assert_eq(strncmp(g_err, p, strlen(p)), 0, "message '%s' does not start with the path", g_err);
}

static const char *F4_HDR = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";

/* ---- round trips ---- */

static void roundtrip(int rank, const int64_t *dims, int f32)
{
    shape_t s = shape_make(rank, dims);
    int64_t n = shape_numel(&s);
    cr_assert_geq(n, 0);
    double *d = calloc((size_t)(n ? n : 1), sizeof *d);
    float *fl = calloc((size_t)(n ? n : 1), sizeof *fl);
    for (int64_t i = 0; i < n; i++) {
        /* exact in float32, includes negatives and fractions */
        fl[i] = (float)((double)(i % 97) * 0.25 - 7.5);
        d[i] = f32 ? fl[i] : (double)i * 1.0e-3 - 1.0 / 3.0;
    }
    const char *p = tpath(f32 ? "rt32.npy" : "rt64.npy");
    int rc = f32 ? npy_write_f32(p, &s, fl, g_err, sizeof g_err)
                 : npy_write_f64(p, &s, d, g_err, sizeof g_err);
    cr_assert_eq(rc, 0, "write failed: %s", g_err);

    unsigned char head[16];
    cr_assert_geq(get_bytes(p, head, sizeof head), 10);
    size_t prefix = 10 + (size_t)head[8] + ((size_t)head[9] << 8);
    cr_assert_eq(prefix % 64, 0, "prefix %zu not 64-aligned", prefix);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq((size_t)st.st_size, prefix + (size_t)n * (f32 ? 4u : 8u));

    tensor_t t;
    cr_assert_eq(npy_read(p, &t, g_err, sizeof g_err), 0, "read failed: %s", g_err);
    cr_assert(shape_equal(&t.shape, &s));
    for (int64_t i = 0; i < n; i++) cr_assert_eq(t.data[i], d[i], "element %lld", (long long)i);
    tensor_free(&t);
    free(d);
    free(fl);
}

Test(npy, roundtrip_f64_ranks)
{
    int64_t d1[] = {7}, d4[] = {2, 3, 1, 5}, de[] = {3, 0, 2};
    roundtrip(0, NULL, 0);
    roundtrip(1, d1, 0);
    roundtrip(4, d4, 0);
    roundtrip(3, de, 0);
}

Test(npy, roundtrip_f32_ranks)
{
    int64_t d1[] = {7}, d4[] = {2, 3, 1, 5}, de[] = {0};
    roundtrip(0, NULL, 1);
    roundtrip(1, d1, 1);
    roundtrip(4, d4, 1);
    roundtrip(1, de, 1);
}

Test(npy, roundtrip_large_crosses_chunks)
{
    int64_t d[] = {3, 10001};
    roundtrip(2, d, 0);
    roundtrip(2, d, 1);
}

Test(npy, written_header_text)
{
    int64_t d1[] = {5}, d3[] = {2, 3, 4};
    double v[24] = {0};
    unsigned char b[256];
    shape_t s1 = shape_make(1, d1), s0 = shape_make(0, NULL), s3 = shape_make(3, d3);

    cr_assert_eq(npy_write_f64(tpath("a.npy"), &s1, v, g_err, sizeof g_err), 0);
    size_t n = get_bytes(tpath("a.npy"), b, sizeof b - 1);
    b[n] = 0;
    cr_assert_eq(memcmp(b, "\x93NUMPY\x01\x00", 8), 0);
    size_t prefix = 10 + (size_t)b[8] + ((size_t)b[9] << 8);
    cr_assert_eq(prefix % 64, 0);
    cr_assert_eq(b[prefix - 1], '\n');
    cr_assert_eq(b[prefix - 2], ' ', "header is padded with spaces");
    cr_assert_not_null(strstr((char *)b + 10, "'descr': '<f8'"));
    cr_assert_not_null(strstr((char *)b + 10, "'fortran_order': False"));
    cr_assert_not_null(strstr((char *)b + 10, "'shape': (5,)"));

    cr_assert_eq(npy_write_f32(tpath("b.npy"), &s0, (const float[]){1.5f}, g_err, sizeof g_err), 0);
    n = get_bytes(tpath("b.npy"), b, sizeof b - 1);
    b[n] = 0;
    cr_assert_not_null(strstr((char *)b + 10, "'descr': '<f4'"));
    cr_assert_not_null(strstr((char *)b + 10, "'shape': ()"));

    cr_assert_eq(npy_write_f64(tpath("c.npy"), &s3, v, g_err, sizeof g_err), 0);
    n = get_bytes(tpath("c.npy"), b, sizeof b - 1);
    b[n] = 0;
    cr_assert_not_null(strstr((char *)b + 10, "'shape': (2, 3, 4)"));
}

/* ---- hand-made files ---- */

Test(npy, reads_handmade_v1_f4_odd_layout)
{
    /* keys reordered, extra whitespace, trailing comma, double quotes */
    const char *hdr = "{ \"shape\" : ( 2 , 2 , ) ,'fortran_order':False,  'descr':'<f4' , }   \n";
    unsigned char pay[16], img[256];
    const float v[4] = {1.0f, -2.5f, 0.125f, 3.0e10f};
    for (int i = 0; i < 4; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        for (int k = 0; k < 4; k++) pay[i * 4 + k] = (unsigned char)(u >> (8 * k));
    }
    size_t n = make_npy(img, 1, hdr, pay, sizeof pay);
    put_bytes(tpath("h1.npy"), img, n);
    tensor_t t;
    cr_assert_eq(npy_read(tpath("h1.npy"), &t, g_err, sizeof g_err), 0, "%s", g_err);
    cr_assert_eq(t.shape.rank, 2);
    cr_assert_eq(t.shape.dims[0], 2);
    cr_assert_eq(t.shape.dims[1], 2);
    for (int i = 0; i < 4; i++) cr_assert_eq(t.data[i], (double)v[i]);
    tensor_free(&t);
}

static void check_v2v3(int major)
{
    const char *hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\n";
    unsigned char pay[24], img[256];
    const double v[3] = {0.1, -1e300, 42.0};
    for (int i = 0; i < 3; i++) {
        uint64_t u;
        memcpy(&u, &v[i], 8);
        for (int k = 0; k < 8; k++) pay[i * 8 + k] = (unsigned char)(u >> (8 * k));
    }
    size_t n = make_npy(img, major, hdr, pay, sizeof pay);
    put_bytes(tpath("h2.npy"), img, n);
    tensor_t t;
    cr_assert_eq(npy_read(tpath("h2.npy"), &t, g_err, sizeof g_err), 0, "%s", g_err);
    cr_assert_eq(t.shape.rank, 1);
    cr_assert_eq(t.shape.dims[0], 3);
    for (int i = 0; i < 3; i++) cr_assert_eq(t.data[i], v[i]);
    tensor_free(&t);
}

Test(npy, reads_handmade_v2_f8) { check_v2v3(2); }
Test(npy, reads_handmade_v3_f8) { check_v2v3(3); }

Test(npy, reads_scalar_and_empty)
{
    unsigned char img[256], pay[8] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}; /* 1.0 */
    tensor_t t;
    size_t n = make_npy(img, 1, "{'descr':'<f8','fortran_order':False,'shape':()}", pay, 8);
    put_bytes(tpath("s.npy"), img, n);
    cr_assert_eq(npy_read(tpath("s.npy"), &t, g_err, sizeof g_err), 0, "%s", g_err);
    cr_assert_eq(t.shape.rank, 0);
    cr_assert_eq(t.data[0], 1.0);
    tensor_free(&t);

    n = make_npy(img, 1, "{'descr':'<f8','fortran_order':False,'shape':(4,0)}", NULL, 0);
    put_bytes(tpath("e.npy"), img, n);
    cr_assert_eq(npy_read(tpath("e.npy"), &t, g_err, sizeof g_err), 0, "%s", g_err);
    cr_assert_eq(t.shape.rank, 2);
    cr_assert_eq(shape_numel(&t.shape), 0);
    tensor_free(&t);
}

/* ---- rejections ---- */

Test(npy, rejects_bad_magic)
{
    unsigned char img[256], pay[8] = {0};
    size_t n = make_npy(img, 1, F4_HDR, pay, 8);
    img[1] = 'M';
    expect_reject("magic.npy", img, n, "magic");
}

Test(npy, rejects_big_endian)
{
    unsigned char img[256], pay[8] = {0};
    size_t n = make_npy(img, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", pay, 8);
    expect_reject("be.npy", img, n, "'>f4'");
    cr_assert_not_null(strstr(g_err, "expected little-endian float32 ('<f4') or float64 ('<f8')"));
}

Test(npy, rejects_other_dtypes)
{
    static const char *bad[] = {"<i4", "<f2", "|u1", "=f4", "<c8", "f4", ""};
    unsigned char img[256], pay[16] = {0};
    char hdr[128], want[16];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }", bad[i]);
        size_t n = make_npy(img, 1, hdr, pay, 8);
        snprintf(want, sizeof want, "'%s'", bad[i]);
        expect_reject("dt.npy", img, n, want);
        cr_assert_not_null(strstr(g_err, "unsupported dtype"), "%s", g_err);
    }
    /* structured dtype: descr is a list, not a string */
    size_t n = make_npy(img, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
                        pay, 8);
    expect_reject("st.npy", img, n, "dtype");
}

/* the command line's files are C order (harness contract: anything else is exit 2) */
Test(npy, rejects_fortran_order_on_the_command_line)
{
    unsigned char img[256], pay[16] = {0};
    size_t n =
        make_npy(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", pay, 16);
    expect_reject("fo.npy", img, n, "Fortran order not supported");
}

/* a device's output: NumPy writes a transposed (Fortran-contiguous) array in Fortran order; a
   dir: file is read in C order */
Test(npy, reads_a_devices_fortran_order_in_c_order)
{
    unsigned char img[256];
    /* a 2x3 array [[1, 2, 3], [4, 5, 6]] stored column by column */
    float col[6] = {1, 4, 2, 5, 3, 6};
    unsigned char pay[24];
    memcpy(pay, col, sizeof pay);
    size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", pay, 24);
    tensor_t t;
    put_bytes(tpath("fo.npy"), img, n);
    cr_assert_eq(npy_read_dtype(tpath("fo.npy"), &t, dtype_get(CONFORM_DTYPE_FLOAT32), g_err, sizeof g_err), 0, "%s", g_err);
    for (int i = 0; i < 6; i++) cr_assert_eq(t.data[i], (double)(i + 1), "element %d: %g", i, t.data[i]);
    tensor_free(&t);
    /* rank 3: element (i, j, k) of a 2x2x2 at Fortran offset i + 2j + 4k */
    float f3[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) f3[i + 2 * j + 4 * k] = (float)(100 * i + 10 * j + k);
    unsigned char p3[32];
    memcpy(p3, f3, sizeof p3);
    n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2, 2), }", p3, 32);
    put_bytes(tpath("fo3.npy"), img, n);
    cr_assert_eq(npy_read_dtype(tpath("fo3.npy"), &t, dtype_get(CONFORM_DTYPE_FLOAT32), g_err, sizeof g_err), 0, "%s", g_err);
    for (int c = 0; c < 8; c++) cr_assert_eq(t.data[c], (double)(100 * (c / 4) + 10 * (c / 2 % 2) + c % 2));
    tensor_free(&t);
}

Test(npy, rejects_truncated_data)
{
    unsigned char img[256], pay[8] = {0};
    size_t n = make_npy(img, 1, F4_HDR, pay, 7);
    expect_reject("td.npy", img, n, "truncated");
    cr_assert_not_null(strstr(g_err, "8"), "%s", g_err);
    cr_assert_not_null(strstr(g_err, "7"), "%s", g_err);
}

Test(npy, rejects_trailing_bytes)
{
    unsigned char img[256], pay[9] = {0};
    size_t n = make_npy(img, 1, F4_HDR, pay, 9);
    expect_reject("tb.npy", img, n, "trailing");
}

Test(npy, rejects_bad_header_text)
{
    static const char *bad[] = {
        "",
        "{",
        "descr: '<f4'",
        "{'descr': '<f4', 'fortran_order': False}",                           /* no shape */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",    /* extra key */
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",            /* int, not tuple */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
        "{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}",
    };
    unsigned char img[256], pay[8] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = make_npy(img, 1, bad[i], pay, 8);
        expect_reject("bh.npy", img, n, "header");
    }
}

Test(npy, rejects_missing_file)
{
    tensor_t t;
    const char *p = tpath("nope.npy");
    cr_assert_eq(npy_read(p, &t, g_err, sizeof g_err), -1);
    cr_assert_null(t.data);
    cr_assert_not_null(strstr(g_err, "cannot open"), "%s", g_err);
    cr_assert_not_null(strstr(g_err, "nope.npy"), "%s", g_err);
}

Test(npy, rejects_structural_problems)
{
    unsigned char img[512], pay[8] = {0};
    size_t n;

    n = make_npy(img, 1, F4_HDR, pay, 8);
    img[6] = 4;
    expect_reject("ver.npy", img, n, "version");

    expect_reject("short.npy", (const unsigned char *)"\x93NUM", 4, "truncated header");

    n = make_npy(img, 1, F4_HDR, pay, 8);
    img[8] = 0xff;
    img[9] = 0x7f; /* header length far past the end of the file */
    expect_reject("hl.npy", img, n, "header length");

    n = make_npy(img, 2, F4_HDR, pay, 8);
    img[11] = 0xff; /* 4-byte length near 4 GiB */
    expect_reject("hl2.npy", img, n, "header length");

    n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}",
                 pay, 4);
    expect_reject("rank.npy", img, n, "rank");

    n = make_npy(img, 1,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000)}",
                 pay, 4);
    expect_reject("big.npy", img, n, "too many elements");

    n = make_npy(img, 1,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
                 pay, 4);
    expect_reject("huge.npy", img, n, "absurd");
}

/* Cheap deterministic fuzz: every truncation and many single-byte mutations of a valid file must
 * be handled without crashing (run under ASan/UBSan to make this meaningful). */
Test(npy, survives_mutations)
{
    unsigned char img[256], mut[256], pay[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    size_t n = make_npy(img, 1, F4_HDR, pay, 8);
    const char *p = tpath("fz.npy");
    tensor_t t;
    for (size_t cut = 0; cut < n; cut++) {
        put_bytes(p, img, cut);
        cr_assert_eq(npy_read(p, &t, g_err, sizeof g_err), -1);
    }
    uint32_t x = 12345;
    for (int iter = 0; iter < 2000; iter++) {
        memcpy(mut, img, n);
        for (int k = 0; k < 3; k++) {
            x = x * 1103515245u + 12345u;
            mut[(x >> 8) % n] = (unsigned char)(x >> 20);
        }
        put_bytes(p, mut, n);
        if (npy_read(p, &t, g_err, sizeof g_err) == 0) tensor_free(&t);
    }
}

/* ---- writing failures ---- */

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t c = 0;
    struct dirent *e;
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) c++;
    closedir(d);
    return c;
}

Test(npy, failed_write_leaves_nothing)
{
    int64_t dims[] = {2};
    double v[2] = {1, 2};
    shape_t s = shape_make(1, dims);

    /* folder does not exist: the temp file cannot even be created */
    cr_assert_eq(npy_write_f64(tpath("missing/x.npy"), &s, v, g_err, sizeof g_err), -1);
    cr_assert_not_null(strstr(g_err, "x.npy"), "%s", g_err);
    cr_assert_not_null(strstr(g_err, "No such file"), "%s", g_err);
    cr_assert_eq(count_entries(g_dir), 0);

    /* target is a directory: the temp file is written, the rename fails and must be cleaned up */
    cr_assert_eq(mkdir(tpath("occupied"), 0700), 0);
    cr_assert_eq(npy_write_f64(tpath("occupied"), &s, v, g_err, sizeof g_err), -1);
    cr_assert_not_null(strstr(g_err, "rename"), "%s", g_err);
    cr_assert_eq(count_entries(g_dir), 1, "temporary file left behind");

    /* an invalid shape writes nothing at all */
    int64_t neg[] = {-1};
    shape_t bad = shape_make(1, neg);
    cr_assert_eq(npy_write_f32(tpath("neg.npy"), &bad, NULL, g_err, sizeof g_err), -1);
    cr_assert_not_null(strstr(g_err, "shape"), "%s", g_err);
    cr_assert_eq(count_entries(g_dir), 1);
}

Test(npy, write_replaces_existing_file)
{
    int64_t d1[] = {1}, d2[] = {2};
    shape_t s1 = shape_make(1, d1), s2 = shape_make(1, d2);
    const char *p = tpath("r.npy");
    cr_assert_eq(npy_write_f64(p, &s2, (const double[]){1, 2}, g_err, sizeof g_err), 0);
    cr_assert_eq(npy_write_f64(p, &s1, (const double[]){9}, g_err, sizeof g_err), 0);
    tensor_t t;
    cr_assert_eq(npy_read(p, &t, g_err, sizeof g_err), 0, "%s", g_err);
    cr_assert_eq(t.shape.dims[0], 1);
    cr_assert_eq(t.data[0], 9.0);
    tensor_free(&t);
    cr_assert_eq(count_entries(g_dir), 1);
}
