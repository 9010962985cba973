#include "npy.h"

#include "dtype.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Real headers are a few hundred bytes; the cap keeps a hostile length from driving a big malloc. */
#define NPY_MAX_HEADER (1u << 20)
#define NPY_CHUNK 8192 /* elements per read/write batch */
#define NPY_DTYPE_HINT "expected little-endian float32 ('<f4') or float64 ('<f8')"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *file_kind(unsigned mode)
{
    return S_ISFIFO(mode) ? "a FIFO (named pipe)" : S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISDIR(mode) ? "a directory" : S_ISREG(mode) ? "a regular file"
         : "not a regular file";
}

FILE *fopen_regular(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a FIFO for reading waits for a writer, for ever; a tape or a terminal
       may wait too. Only once fstat has said "regular file" is the descriptor made blocking. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st = {0};
    if (fd < 0) {
        set_err(err, errlen, "%s: cannot open: %s", path, errno == ENXIO ? "a socket, not a regular file" : strerror(errno));
        return NULL;
    }
    int no_stat = fstat(fd, &st) != 0;
    if (no_stat || !S_ISREG(st.st_mode)) {
        if (no_stat) set_err(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        else set_err(err, errlen, "%s: %s, not a regular file", path, file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    FILE *f = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) ? NULL : fdopen(fd, "rb");
    if (!f) {
        set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int64_t npy_max_bytes(int64_t numel, int itemsize) { return 12 + (int64_t)NPY_MAX_HEADER + numel * itemsize; }

/* Byte-wise little-endian coding keeps the file format independent of host byte order and
 * avoids unaligned or type-punned loads. */
static uint64_t load_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void store_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        p[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

/* ---- header dict parsing: a tiny subset of Python literal syntax, bounds-checked ---- */

typedef struct {
    const char *s;
    size_t n, i;
} cursor_t;

static void skip_ws(cursor_t *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
                           c->s[c->i] == '\r'))
        c->i++;
}

static int peek(const cursor_t *c) { return c->i < c->n ? (unsigned char)c->s[c->i] : -1; }

static int accept_char(cursor_t *c, char ch)
{
    skip_ws(c);
    if (peek(c) == (unsigned char)ch) {
        c->i++;
        return 1;
    }
    return 0;
}

static int accept_word(cursor_t *c, const char *w)
{
    size_t len = strlen(w);
    skip_ws(c);
    if (c->n - c->i < len || memcmp(c->s + c->i, w, len) != 0) return 0;
    c->i += len;
    return 1;
}

/* Python string literal without escapes (dtype strings and key names never need them). On success
 * start and len point into the header text. */
static int parse_str(cursor_t *c, size_t *start, size_t *len)
{
    skip_ws(c);
    int q = peek(c);
    if (q != '\'' && q != '"') return -1;
    size_t j = c->i + 1;
    while (j < c->n && c->s[j] != (char)q) {
        if (c->s[j] == '\\' || c->s[j] == '\n' || c->s[j] == '\0') return -1;
        j++;
    }
    if (j >= c->n) return -1;
    *start = c->i + 1;
    *len = j - (c->i + 1);
    c->i = j + 1;
    return 0;
}

/* Non-negative decimal. Only int64 overflow is refused here; shape_numel judges the product, so a
 * huge dim next to a zero dim (numel 0) stays readable, matching what the writer accepts. */
static int parse_dim(cursor_t *c, int64_t *out)
{
    int64_t v = 0;
    size_t digits = 0;
    skip_ws(c);
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        int d = c->s[c->i] - '0';
        if (v > (INT64_MAX - d) / 10) return -2;
        v = v * 10 + d;
        c->i++;
        digits++;
    }
    if (digits == 0) return -1;
    if (c->i < c->n && c->s[c->i] == 'L') c->i++; /* Python 2 era writers emitted "3L" */
    *out = v;
    return 0;
}

/* Copy of untrusted text fit for an error message: printable ASCII only, shortened. */
static void sanitize(char *dst, size_t dstlen, const char *src, size_t n)
{
    size_t k = 0, i = 0;
    if (dstlen < 4) {
        if (dstlen) dst[0] = '\0';
        return;
    }
    for (; i < n && k + 4 < dstlen; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[k++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (i < n) { /* say the text was longer than shown */
        memcpy(dst + k, "...", 3);
        k += 3;
    }
    dst[k] = '\0';
}

static int parse_shape(cursor_t *c, shape_t *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!accept_char(c, '(')) {
        set_err(err, errlen, "%s: bad header: 'shape' is not a tuple", path);
        return -1;
    }
    if (accept_char(c, ')')) return 0; /* "()" is a scalar */
    int rank = 0;
    int saw_comma = 0;
    for (;;) {
        int64_t d;
        int rc = parse_dim(c, &d);
        if (rc == -2) {
            set_err(err, errlen, "%s: absurd dimension in 'shape' (overflows int64)", path);
            return -1;
        }
        if (rc != 0) {
            set_err(err, errlen, "%s: bad header: 'shape' must hold non-negative integers", path);
            return -1;
        }
        if (rank >= CONFORM_MAX_RANK) {
            set_err(err, errlen, "%s: rank exceeds the maximum of %d", path, CONFORM_MAX_RANK);
            return -1;
        }
        s->dims[rank++] = d;
        saw_comma = accept_char(c, ',');
        if (accept_char(c, ')')) break;
        if (!saw_comma) {
            set_err(err, errlen, "%s: bad header: malformed 'shape' tuple", path);
            return -1;
        }
    }
    /* "(5)" is an int in Python, not a tuple */
    if (rank == 1 && !saw_comma) {
        set_err(err, errlen, "%s: bad header: 'shape' (n) lacks the comma of a 1-tuple", path);
        return -1;
    }
    s->rank = rank;
    return 0;
}

/* Parses the dict; *itemsize becomes 4 or 8, or 2 where wide16 allows 16-bit types (then
 * *bf16 says whether the 16 bits are a bfloat16 carried as '<u2'). */
static int parse_header(const char *h, size_t n, const char *path, shape_t *shape, int *itemsize,
                        int wide16, int *bf16, int *fortran, char *err, size_t errlen)
{
    cursor_t c = {h, n, 0};
    int have_descr = 0, have_fortran = 0, have_shape = 0;

    if (!accept_char(&c, '{')) {
        set_err(err, errlen, "%s: bad header: expected a '{' dict", path);
        return -1;
    }
    for (;;) {
        if (accept_char(&c, '}')) break;
        size_t ks, kl;
        if (parse_str(&c, &ks, &kl) != 0) {
            set_err(err, errlen, "%s: bad header: expected a quoted key or '}'", path);
            return -1;
        }
        const char *key = h + ks;
        if (!accept_char(&c, ':')) {
            set_err(err, errlen, "%s: bad header: expected ':' after a key", path);
            return -1;
        }
        if (kl == 5 && memcmp(key, "descr", 5) == 0 && !have_descr) {
            size_t vs, vl;
            char shown[48];
            if (parse_str(&c, &vs, &vl) != 0) {
                set_err(err, errlen,
                        "%s: unsupported dtype (structured or malformed 'descr'; " NPY_DTYPE_HINT ")",
                        path);
                return -1;
            }
            if (vl == 3 && memcmp(h + vs, "<f4", 3) == 0) *itemsize = 4;
            else if (vl == 3 && memcmp(h + vs, "<f8", 3) == 0) *itemsize = 8;
            else if (wide16 && vl == 3 && memcmp(h + vs, "<f2", 3) == 0) { *itemsize = 2; *bf16 = 0; }
            else if (wide16 == NPY_BF16_AS_U2 && vl == 3 && memcmp(h + vs, "<u2", 3) == 0) { *itemsize = 2; *bf16 = 1; }
            else {
                sanitize(shown, sizeof shown, h + vs, vl);
                set_err(err, errlen, "%s: unsupported dtype '%s' (" NPY_DTYPE_HINT ")", path, shown);
                return -1;
            }
            have_descr = 1;
        } else if (kl == 13 && memcmp(key, "fortran_order", 13) == 0 && !have_fortran) {
            /* NumPy saves an array that is only Fortran-contiguous (a transpose) in Fortran order */
            if (accept_word(&c, "True")) *fortran = 1;
            else if (accept_word(&c, "False")) *fortran = 0;
            else {
                set_err(err, errlen, "%s: bad header: 'fortran_order' must be True or False", path);
                return -1;
            }
            have_fortran = 1;
        } else if (kl == 5 && memcmp(key, "shape", 5) == 0 && !have_shape) {
            if (parse_shape(&c, shape, path, err, errlen) != 0) return -1;
            have_shape = 1;
        } else {
            char shown[48];
            sanitize(shown, sizeof shown, key, kl);
            set_err(err, errlen, "%s: bad header: unexpected or repeated key '%s'", path, shown);
            return -1;
        }
        if (accept_char(&c, '}')) break;
        if (!accept_char(&c, ',')) {
            set_err(err, errlen, "%s: bad header: expected ',' or '}' in the dict", path);
            return -1;
        }
    }
    skip_ws(&c);
    if (c.i != c.n) {
        set_err(err, errlen, "%s: bad header: unexpected text after the dict", path);
        return -1;
    }
    if (!have_descr || !have_fortran || !have_shape) {
        set_err(err, errlen, "%s: bad header: missing key '%s'", path,
                !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
        return -1;
    }
    return 0;
}

/* ---- reading ---- */

/* data read in Fortran order (first index fastest) put in C order (last index fastest) */
static int fortran_to_c(tensor_t *t)
{
    const shape_t *s = &t->shape;
    int64_t n = shape_numel(s);
    if (s->rank < 2 || n < 2) return 0;
    double *f = malloc(sizeof(double) * (size_t)n);
    if (!f) return -1;
    memcpy(f, t->data, sizeof(double) * (size_t)n);
    int64_t idx[CONFORM_MAX_RANK] = {0};
    for (int64_t c = 0; c < n; c++) {
        int64_t off = 0;
        for (int d = s->rank - 1; d >= 0; d--) off = off * s->dims[d] + idx[d];
        t->data[c] = f[off];
        for (int d = s->rank - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0; /* next C index */
    }
    free(f);
    return 0;
}

double npy_half_to_double(uint16_t h) { return dtype_half_value(h); }

double npy_bf16_to_double(uint16_t b) { return dtype_bf16_value(b); }

static int read_body(FILE *f, const char *path, int itemsize, int bf16, tensor_t *t, int64_t numel, char *err,
                     size_t errlen)
{
    unsigned char *buf = malloc((size_t)NPY_CHUNK * (size_t)itemsize);
    if (!buf) {
        set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int64_t done = 0;
    while (done < numel) {
        size_t want = (size_t)(numel - done < NPY_CHUNK ? numel - done : NPY_CHUNK);
        size_t got = fread(buf, (size_t)itemsize, want, f);
        if (got != want) {
            /* size was checked up front, so this means the file changed or an I/O error */
            set_err(err, errlen, "%s: read error after %lld of %lld elements%s%s", path,
                    (long long)(done + (int64_t)got), (long long)numel, ferror(f) ? ": " : "",
                    ferror(f) ? strerror(errno) : "");
            free(buf);
            return -1;
        }
        for (size_t k = 0; k < want; k++) {
            const unsigned char *p = buf + k * (size_t)itemsize;
            if (itemsize == 2) {
                uint16_t u = (uint16_t)load_le(p, 2);
                t->data[done + (int64_t)k] = bf16 ? npy_bf16_to_double(u) : npy_half_to_double(u);
            } else if (itemsize == 4) {
                uint32_t u = (uint32_t)load_le(p, 4);
                float v;
                memcpy(&v, &u, sizeof v);
                t->data[done + (int64_t)k] = (double)v;
            } else {
                uint64_t u = load_le(p, 8);
                double v;
                memcpy(&v, &u, sizeof v);
                t->data[done + (int64_t)k] = v;
            }
        }
        done += (int64_t)want;
    }
    free(buf);
    return 0;
}

int npy_read(const char *path, tensor_t *t, char *err, size_t errlen) { return npy_read_ex(path, t, 0, err, errlen); }

static int read_found(const char *path, tensor_t *t, int wide16, int allow_fortran, const char **found, char *err,
                      size_t errlen);

int npy_read_ex(const char *path, tensor_t *t, int wide16, char *err, size_t errlen)
{
    const char *found;
    return read_found(path, t, wide16, 0, &found, err, errlen);
}

int npy_read_dtype(const char *path, tensor_t *t, const dtype_desc *dt, char *err, size_t errlen)
{
    const char *found;
    char why[CONFORM_NPY_ERR];
    if (read_found(path, t, NPY_BF16_AS_U2, 1, &found, why, sizeof why)) {
        char *hint = strstr(why, " (" NPY_DTYPE_HINT);
        if (hint) { /* the general list of what the reader takes: here one dtype is expected */
            *hint = '\0';
            set_err(err, errlen, "%s, expected '%s' (%s)", why, dt->npy_descr, dt->name);
        } else set_err(err, errlen, "%s", why);
        return -1;
    }
    if (strcmp(found, dt->npy_descr)) {
        set_err(err, errlen, "%s: dtype '%s', expected '%s' (%s)", path, found, dt->npy_descr, dt->name);
        tensor_free(t);
        memset(t, 0, sizeof *t);
        return -1;
    }
    return 0;
}

int npy_read_raw(const char *path, const shape_t *s, const dtype_desc *dt, tensor_t *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen_regular(path, err, errlen);
    struct stat st;
    if (!f) return -1;
    int64_t numel = shape_numel(s), want = numel * dt->itemsize;
    char sb[128];
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || (int64_t)st.st_size != want) {
        set_err(err, errlen, "%s: %lld bytes, expected %lld (%s of %s, headerless C order)", path,
                (long long)st.st_size, (long long)want, shape_str(s, sb, sizeof sb), dt->name);
        fclose(f);
        return -1;
    }
    unsigned char *buf = malloc((size_t)(want ? want : 1));
    if (!buf || tensor_alloc(t, s) || fread(buf, 1, (size_t)want, f) != (size_t)want) {
        set_err(err, errlen, "%s: cannot read %lld bytes", path, (long long)want);
        free(buf);
        tensor_free(t);
        memset(t, 0, sizeof *t);
        fclose(f);
        return -1;
    }
    dtype_decode(dt->id, buf, t->data, numel);
    free(buf);
    fclose(f);
    return 0;
}

/* The .npy prefix of an open file of fsize bytes: magic, version and header length (checked
 * against the file's size), and the prefix's own length */
static int read_prefix(FILE *f, const char *path, int64_t fsize, int64_t *prefix, int64_t *hlen, char *err,
                       size_t errlen)
{
    unsigned char pre[12];
    if (fsize < 10 || fread(pre, 1, 10, f) != 10) {
        set_err(err, errlen, "%s: truncated header: file has %lld bytes, not a .npy file", path,
                (long long)fsize);
        return -1;
    }
    if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        set_err(err, errlen, "%s: bad magic: not a .npy file", path);
        return -1;
    }
    int major = pre[6], minor = pre[7];
    if (major == 1 && minor == 0) {
        *hlen = (int64_t)load_le(pre + 8, 2);
        *prefix = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
        if (fsize < 12 || fread(pre + 10, 1, 2, f) != 2) {
            set_err(err, errlen, "%s: truncated header (version %d.0 prefix)", path, major);
            return -1;
        }
        *hlen = (int64_t)load_le(pre + 8, 4);
        *prefix = 12;
    } else {
        set_err(err, errlen, "%s: unsupported .npy format version %d.%d (expected 1.0, 2.0 or 3.0)",
                path, major, minor);
        return -1;
    }
    if (*hlen > fsize - *prefix) {
        set_err(err, errlen, "%s: truncated header: header length %lld exceeds the %lld bytes left in the file",
                path, (long long)*hlen, (long long)(fsize - *prefix));
        return -1;
    }
    if (*hlen > (int64_t)NPY_MAX_HEADER) {
        set_err(err, errlen, "%s: header length %lld is implausibly large", path, (long long)*hlen);
        return -1;
    }
    return 0;
}

/* The header dictionary of hlen bytes after the prefix, parsed (see parse_header) */
static int read_dict(FILE *f, const char *path, int64_t hlen, int wide16, shape_t *shape, int *itemsize, int *bf16,
                     int *fortran, char *err, size_t errlen)
{
    char *hdr = malloc((size_t)hlen + 1);
    if (!hdr) {
        set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (fread(hdr, 1, (size_t)hlen, f) != (size_t)hlen) {
        set_err(err, errlen, "%s: truncated header", path);
        free(hdr);
        return -1;
    }
    hdr[hlen] = '\0';
    int rc = parse_header(hdr, (size_t)hlen, path, shape, itemsize, wide16, bf16, fortran, err, errlen);
    free(hdr);
    return rc;
}

/* The data after the header: exactly the shape's bytes (have bytes are left in the file), into t
 * in C order; t is left empty on failure */
static int read_data(FILE *f, const char *path, int64_t have, const shape_t *shape, int itemsize, int bf16,
                     int fortran, tensor_t *t, char *err, size_t errlen)
{
    int64_t numel = shape_numel(shape);
    if (numel < 0) {
        char sb[256];
        set_err(err, errlen, "%s: shape %s has too many elements (limit %lld)", path,
                shape_str(shape, sb, sizeof sb), (long long)CONFORM_MAX_NUMEL);
        return -1;
    }
    /* numel <= 2^34 and itemsize <= 8, so this cannot overflow */
    int64_t want = numel * itemsize;
    if (have < want) {
        set_err(err, errlen, "%s: truncated data: expected %lld bytes, file holds %lld", path,
                (long long)want, (long long)have);
        return -1;
    }
    if (have > want) {
        set_err(err, errlen, "%s: trailing garbage: %lld bytes after the %lld bytes of data", path,
                (long long)(have - want), (long long)want);
        return -1;
    }
    if (tensor_alloc(t, shape) != 0) {
        set_err(err, errlen, "%s: out of memory for %lld elements", path, (long long)numel);
        memset(t, 0, sizeof *t);
        return -1;
    }
    int rc = read_body(f, path, itemsize, bf16, t, numel, err, errlen);
    if (!rc && fortran && fortran_to_c(t) != 0) {
        set_err(err, errlen, "%s: out of memory reordering %lld Fortran-order elements", path, (long long)numel);
        rc = -1;
    }
    if (rc) {
        tensor_free(t);
        memset(t, 0, sizeof *t);
    }
    return rc;
}

/* allow_fortran: a device's output (a `dir:` file) may come in Fortran order; the files given on
 * the command line are C order, as the harness contract says */
static int read_found(const char *path, tensor_t *t, int wide16, int allow_fortran, const char **found, char *err,
                      size_t errlen)
{
    struct stat st;
    memset(t, 0, sizeof *t);
    FILE *f = fopen_regular(path, err, errlen);
    if (!f) return -1;
    if (fstat(fileno(f), &st) != 0) {
        set_err(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        goto fail;
    }
    /* the size checks below rely on st_size being the real length */
    if (!S_ISREG(st.st_mode)) {
        set_err(err, errlen, "%s: not a regular file", path);
        goto fail;
    }
    const int64_t fsize = (int64_t)st.st_size;
    int64_t prefix, hlen;
    shape_t shape;
    int itemsize = 0, bf16 = 0, fortran = 0;
    if (read_prefix(f, path, fsize, &prefix, &hlen, err, errlen) ||
        read_dict(f, path, hlen, wide16, &shape, &itemsize, &bf16, &fortran, err, errlen))
        goto fail;
    if (fortran && !allow_fortran) {
        set_err(err, errlen, "%s: Fortran order not supported, save C-contiguous", path);
        goto fail;
    }
    *found = itemsize == 8 ? "<f8" : itemsize == 4 ? "<f4" : bf16 ? "<u2" : "<f2";
    if (read_data(f, path, fsize - prefix - hlen, &shape, itemsize, bf16, fortran, t, err, errlen)) goto fail;
    fclose(f);
    return 0;

fail:
    fclose(f);
    return -1;
}

/* ---- writing ---- */

static int write_header(FILE *f, const shape_t *s, const char *descr)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < s->rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, i ? ", %lld" : "%lld", (long long)s->dims[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, s->rank == 1 ? ",), }" : "), }");
    /* 8 dims of at most 11 digits fit easily, so no truncation is possible here */
    size_t total = 10 + (size_t)n + 1; /* magic+version+len, dict, '\n' */
    size_t padded = (total + 63) / 64 * 64;
    size_t hlen = padded - 10;
    unsigned char pre[10];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = 1;
    pre[7] = 0;
    store_le(pre + 8, hlen, 2);
    if (fwrite(pre, 1, 10, f) != 10) return -1;
    if (fwrite(dict, 1, (size_t)n, f) != (size_t)n) return -1;
    for (size_t k = (size_t)n; k + 1 < hlen; k++)
        if (fputc(' ', f) == EOF) return -1;
    return fputc('\n', f) == EOF ? -1 : 0;
}

/* data is double (from_f32 0) or float, stored as the file dtype dt */
static int write_any(const char *path, const shape_t *s, const void *data, int from_f32, const dtype_desc *dt, char *err,
                     size_t errlen)
{
    int itemsize = dt->itemsize;
    double vals[NPY_CHUNK];
    int64_t numel = shape_numel(s);
    if (numel < 0) {
        set_err(err, errlen, "%s: cannot write: invalid shape", path);
        return -1;
    }
    if (numel > 0 && !data) {
        set_err(err, errlen, "%s: cannot write: no data", path);
        return -1;
    }
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    unsigned char *buf = malloc((size_t)NPY_CHUNK * (size_t)itemsize);
    FILE *f = NULL;
    if (!tmp || !buf) {
        set_err(err, errlen, "%s: out of memory", path);
        goto fail_nofile;
    }
    snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    f = fopen(tmp, "wb");
    if (!f) {
        set_err(err, errlen, "%s: cannot create temporary file '%s': %s", path, tmp, strerror(errno));
        goto fail_nofile;
    }
    if (write_header(f, s, dt->npy_descr) != 0) goto fail_io;
    for (int64_t done = 0; done < numel;) {
        size_t n = (size_t)(numel - done < NPY_CHUNK ? numel - done : NPY_CHUNK);
        for (size_t k = 0; k < n; k++)
            vals[k] = from_f32 ? (double)((const float *)data)[done + (int64_t)k] : ((const double *)data)[done + (int64_t)k];
        dtype_encode(dt->id, vals, buf, (int64_t)n); /* little-endian: see dtype.c */
        if (fwrite(buf, (size_t)itemsize, n, f) != n) goto fail_io;
        done += (int64_t)n;
    }
    /* buffered write errors (e.g. disk full) only surface at flush/close */
    if (fflush(f) != 0) goto fail_io;
    {
        FILE *g = f;
        f = NULL;
        if (fclose(g) != 0) goto fail_io;
    }
    if (rename(tmp, path) != 0) {
        set_err(err, errlen, "%s: cannot rename '%s' into place: %s", path, tmp, strerror(errno));
        remove(tmp);
        goto fail_nofile;
    }
    free(tmp);
    free(buf);
    return 0;

fail_io:
    set_err(err, errlen, "%s: write error on '%s': %s", path, tmp, strerror(errno));
    if (f) fclose(f);
    remove(tmp);
fail_nofile:
    free(tmp);
    free(buf);
    return -1;
}

int npy_write_f64(const char *path, const shape_t *s, const double *data, char *err, size_t errlen)
{
    return write_any(path, s, data, 0, dtype_get(CONFORM_DTYPE_FLOAT64), err, errlen);
}

int npy_write_dtype(const char *path, const shape_t *s, const dtype_desc *dt, const double *data, char *err, size_t errlen)
{
    return write_any(path, s, data, 0, dt, err, errlen);
}

int npy_write_f32(const char *path, const shape_t *s, const float *data, char *err, size_t errlen)
{
    return write_any(path, s, data, 1, dtype_get(CONFORM_DTYPE_FLOAT32), err, errlen);
}

int file_fnv1a64(const char *path, uint64_t *hash, char *err, size_t errlen)
{
    FILE *f = fopen_regular(path, err, errlen);
    if (!f) return -1;
    unsigned char buf[65536];
    uint64_t h = FNV1A64_INIT;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = fnv1a64(h, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        set_err(err, errlen, "%s: read error", path);
        return -1;
    }
    *hash = h;
    return 0;
}

const char *npy_strip_path(const char *err, const char *path)
{
    size_t n = strlen(path);
    return !strncmp(err, path, n) && err[n] == ':' && err[n + 1] == ' ' ? err + n + 2 : err;
}
