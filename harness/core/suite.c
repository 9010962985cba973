#include "datadir.h"
#include "suite.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"

static char *read_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: cannot open suite", path); return NULL; }
    if (fseek(f, 0, SEEK_END) || ftell(f) < 0) { fclose(f); snprintf(err, errlen, "%s: cannot read", path); return NULL; }
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        snprintf(err, errlen, "%s: cannot read", path);
        return NULL;
    }
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *c = text; c < at && *c; c++) line += *c == '\n';
    return line;
}

/* The value of a case key, the grid point taking precedence. */
static const cJSON *case_value(const case_t *c, const char *key)
{
    const cJSON *v = c->point ? cJSON_GetObjectItemCaseSensitive(c->point, key) : NULL;
    return v ? v : NULL;
}

int case_setup(const case_t *c, problem_t *p, char *err, size_t errlen)
{
    const op_desc *op = c->op;
    problem_init(p, op);
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(c->spec, "attrs"), *a;
    cJSON_ArrayForEach(a, attrs) {
        if (case_value(c, a->string)) continue;
        if (problem_set_attr_json(p, a->string, a, err, errlen)) return -1;
    }
    const cJSON *pt;
    cJSON_ArrayForEach(pt, c->point) {
        if (!strncmp(pt->string, "shape.", 6)) continue;
        if (problem_set_attr_json(p, pt->string, pt, err, errlen)) return -1;
    }
    if (problem_finish_attrs(p, err, errlen)) return -1;

    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(c->spec, "shapes");
    for (int i = 0; i < op->n_inputs; i++) {
        char key[80];
        snprintf(key, sizeof key, "shape.%s", op->inputs[i].name);
        const cJSON *sh = case_value(c, key);
        if (!sh) sh = cJSON_GetObjectItemCaseSensitive(shapes, op->inputs[i].name);
        if (!cJSON_IsArray(sh))
            FAIL("%s: shapes.%s is missing (expected a list of dims: %s)", op->name, op->inputs[i].name,
                 op->inputs[i].doc);
        int rank = cJSON_GetArraySize(sh);
        if (rank > CONFORM_MAX_RANK) FAIL("%s: shapes.%s has rank %d (at most %d)", op->name, op->inputs[i].name,
                                          rank, CONFORM_MAX_RANK);
        shape_t s = {0, {0}};
        s.rank = rank;
        for (int d = 0; d < rank; d++) {
            const cJSON *e = cJSON_GetArrayItem(sh, d);
            if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= 9e15) || e->valuedouble != floor(e->valuedouble))
                FAIL("%s: shapes.%s[%d] must be a non-negative integer", op->name, op->inputs[i].name, d);
            s.dims[d] = (int64_t)e->valuedouble;
        }
        if (shape_numel(&s) < 0) FAIL("%s: shapes.%s is too large", op->name, op->inputs[i].name);
        p->in[i].shape = s;
    }
    return 0;
}

uint64_t case_seed(const case_t *c, uint64_t run_seed)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the id, mixed with the run seed */
    for (const char *s = c->id; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h ^= run_seed + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h & 0xffffffffULL; /* GSL seeds are unsigned long; keep them printable and portable */
}

int case_inputs_overflow(const problem_t *p, const dtype_desc *dt, char *why, size_t len)
{
    int bad = 0;
    for (int i = 0; i < p->op->n_inputs; i++) {
        int64_t n = tensor_numel(&p->in[i]), first = -1, count = 0;
        const double *x = p->in[i].data;
        if (dt->id == CONFORM_DTYPE_FLOAT32) { /* dtype_round's float32 case written in: the common one */
            for (int64_t k = 0; k < n; k++)
                if (isfinite(x[k]) && !isfinite((double)(float)x[k]) && count++ == 0) first = k;
        } else
            for (int64_t k = 0; k < n; k++)
                if (isfinite(x[k]) && !isfinite(dtype_round(dt->id, x[k])) && count++ == 0) first = k;
        if (!count || bad++) continue; /* the first input that overflows names the case's reason */
        snprintf(why, len,
                 "not applicable at %s: input %s holds %lld finite values beyond %s's range (element %lld is %.9g), "
                 "which round to infinity: the case is about finite values, and a device would read infinite ones",
                 dt->name, p->op->inputs[i].name, (long long)count, dt->name, (long long)first, p->in[i].data[first]);
    }
    return bad > 0;
}

int case_build(const case_t *c, uint64_t seed, problem_t *p, char *err, size_t errlen)
{
    if (case_setup(c, p, err, errlen)) return -1;
    /* shapes and attributes first: generators may rely on valid shapes */
    if (c->op->validate(p, err, errlen)) return -1;
    if (problem_check_budget(p, err, errlen)) return -1;
    for (int i = 0; i < c->op->n_inputs; i++)
        if (tensor_alloc(&p->in[i], &p->in[i].shape)) FAIL("%s: no memory for input %s", c->op->name, c->op->inputs[i].name);
    gsl_rng *rng = conform_rng((unsigned long)seed);
    if (!rng) FAIL("no memory for the random generator");
    int rc = problem_fill(p, cJSON_GetObjectItemCaseSensitive(c->spec, "gen"), rng, err, errlen);
    gsl_rng_free(rng);
    return rc;
}

const char *case_expect_error(const case_t *c)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(c->spec, "expect_error");
    return cJSON_IsString(e) ? e->valuestring : NULL;
}

int case_matches(const case_t *c, const char *pattern)
{
    if (!pattern || !*pattern) return 1;
    if (strpbrk(pattern, "*?")) return fnmatch(pattern, c->id, 0) == 0;
    if (!strcmp(pattern, c->op->name)) return 1;
    size_t n = strlen(pattern);
    if (strncmp(c->id, pattern, n)) return 0;
    char next = c->id[n];
    return next == '\0' || next == '/' || next == '#' || next == ',' || pattern[n - 1] == '/';
}

/* ---- loading ------------------------------------------------------------------------------ */

static int add_case(suite_t *s, int *cap, const case_t *c)
{
    if (s->n_cases == *cap) {
        int ncap = *cap ? *cap * 2 : 64;
        case_t *n = realloc(s->cases, (size_t)ncap * sizeof *n);
        if (!n) return -1;
        s->cases = n;
        *cap = ncap;
    }
    s->cases[s->n_cases++] = *c;
    return 0;
}

static void point_suffix(const cJSON *point, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    const cJSON *e;
    cJSON_ArrayForEach(e, point) {
        char *v = cJSON_PrintUnformatted(e);
        if (!v) continue;
        /* ids stay glob-safe and shell-safe: drop brackets, quotes and spaces from values */
        char clean[128];
        size_t k = 0;
        for (const char *q = v; *q && k + 1 < sizeof clean; q++)
            if (!strchr("[]\"' ", *q)) clean[k++] = *q == ',' ? 'x' : *q;
        clean[k] = '\0';
        cJSON_free(v);
        if (used < len) used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "/", e->string, clean);
    }
}

/* Expands the grid of one case into points (cartesian product, keys in file order). */
static int expand(suite_t *s, int *cap, case_t *base, const cJSON *grid, const cJSON *key, cJSON *point,
                  char *err, size_t errlen)
{
    if (!key) {
        int repeat = 1;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(base->spec, "repeat");
        if (r && (!cJSON_IsNumber(r) || !(r->valuedouble >= 1 && r->valuedouble <= 100000) || r->valuedouble != floor(r->valuedouble)))
            FAIL("%s: case %s: repeat must be an integer in [1, 100000]", s->path, base->id);
        if (r) repeat = (int)r->valuedouble;
        if (repeat < 1 || repeat > 100000) FAIL("%s: case %s: repeat must be in [1, 100000]", s->path, base->id);
        char suffix[160];
        point_suffix(point, suffix, sizeof suffix);
        for (int i = 0; i < repeat; i++) {
            case_t c = *base;
            c.point = point ? cJSON_Duplicate(point, 1) : NULL;
            c.repeat = i;
            if (repeat > 1) snprintf(c.id, sizeof c.id, "%s%s#%d", base->id, suffix, i);
            else snprintf(c.id, sizeof c.id, "%s%s", base->id, suffix);
            if (add_case(s, cap, &c)) { cJSON_Delete(c.point); FAIL("%s: out of memory", s->path); }
        }
        return 0;
    }
    if (!cJSON_IsArray(key) || cJSON_GetArraySize(key) == 0)
        FAIL("%s: case %s: grid.%s must be a non-empty list of values", s->path, base->id, key->string);
    const cJSON *v;
    cJSON_ArrayForEach(v, key) {
        cJSON *next = point ? cJSON_Duplicate(point, 1) : cJSON_CreateObject();
        cJSON_AddItemToObject(next, key->string, cJSON_Duplicate(v, 1));
        int rc = expand(s, cap, base, grid, key->next, next, err, errlen);
        cJSON_Delete(next);
        if (rc) return rc;
    }
    return 0;
}

/* JSON allows repeated keys and cJSON keeps the first: in a suite that hides a typo, so refuse */
static const char *duplicate_key(const cJSON *node)
{
    for (const cJSON *a = node ? node->child : NULL; a; a = a->next) {
        if (cJSON_IsObject(node))
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string && b->string && !strcmp(a->string, b->string)) return a->string;
        const char *d = duplicate_key(a);
        if (d) return d;
    }
    return NULL;
}

/* The suite file's JSON and its header (name, seed) into s; on failure s holds nothing */
static int suite_parse(const char *path, suite_t *s, char *err, size_t errlen)
{
    char *text = read_text(path, err, errlen);
    if (!text) return -1;
    s->root = cJSON_Parse(text);
    if (!s->root) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(err, errlen, "%s: invalid JSON near line %d", path, at ? line_of(text, at) : 0);
        free(text);
        return -1;
    }
    free(text);
    const char *dup = duplicate_key(s->root);
    if (dup) {
        snprintf(err, errlen, "%s: duplicate key '%s'", path, dup);
        suite_free(s);
        return -1;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(s->root, "suite");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(s->root, "seed");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(s->root, "cases");
    if (!cJSON_IsObject(s->root) || !cJSON_IsString(name) || !cJSON_IsArray(cases)) {
        snprintf(err, errlen, "%s: a suite is an object with \"suite\" (a name) and \"cases\" (a list)", path);
        suite_free(s);
        return -1;
    }
    snprintf(s->name, sizeof s->name, "%s", name->valuestring);
    if (seed && (!cJSON_IsNumber(seed) || !(seed->valuedouble >= 0 && seed->valuedouble <= 4294967295.0) ||
                 seed->valuedouble != floor(seed->valuedouble))) {
        snprintf(err, errlen, "%s: \"seed\" must be an integer in [0, 4294967295]", path);
        suite_free(s);
        return -1;
    }
    s->seed = seed ? (uint64_t)seed->valuedouble : 1;
    return 0;
}

/* Entry index c of the suite's "cases", expanded over its grid into s->cases */
static int add_entry(suite_t *s, int *cap, const cJSON *c, int index, const char *path, char *err, size_t errlen)
{
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(c, "name");
    const cJSON *cop = cJSON_GetObjectItemCaseSensitive(c, "op");
    if (!cJSON_IsObject(c) || !cJSON_IsString(cn) || !cJSON_IsString(cop)) {
        snprintf(err, errlen, "%s: cases[%d] needs \"name\" and \"op\" strings", path, index);
        return -1;
    }
    if (strpbrk(cn->valuestring, "*?[]#, '\"")) {
        snprintf(err, errlen, "%s: cases[%d]: name '%s' may not contain * ? [ ] # , quotes or spaces", path,
                 index, cn->valuestring);
        return -1;
    }
    case_t base;
    memset(&base, 0, sizeof base);
    base.spec = c;
    base.suite_path = s->path;
    base.op = op_find(cop->valuestring);
    snprintf(base.id, sizeof base.id, "%s/%s", s->name, cn->valuestring);
    if (!base.op) {
        snprintf(err, errlen, "%s: case %s: unknown op '%s' (see `conform list`)", path, base.id, cop->valuestring);
        return -1;
    }
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(c, "grid");
    if (grid && !cJSON_IsObject(grid)) {
        snprintf(err, errlen, "%s: case %s: grid must be an object of lists", path, base.id);
        return -1;
    }
    return expand(s, cap, &base, grid, grid ? grid->child : NULL, NULL, err, errlen) ? -1 : 0;
}

/* Every case must set up and validate on shapes alone, unless it expects an error; ids are unique */
static int check_cases(const suite_t *s, const char *path, char *err, size_t errlen)
{
    for (int i = 0; i < s->n_cases; i++) {
        problem_t p;
        char e2[CONFORM_ERR_LEN];
        int rc = case_setup(&s->cases[i], &p, e2, sizeof e2);
        if (!rc) rc = s->cases[i].op->validate(&p, e2, sizeof e2);
        problem_free(&p);
        int same = 0;
        for (int j = 0; j < i && !same; j++) same = !strcmp(s->cases[j].id, s->cases[i].id);
        if (same) {
            snprintf(err, errlen, "%s: case %s: duplicate case id", path, s->cases[i].id);
            return -1;
        }
        if (rc && !case_expect_error(&s->cases[i])) {
            snprintf(err, errlen, "%s: case %s: %s", path, s->cases[i].id, e2);
            return -1;
        }
    }
    return 0;
}

int suite_load(const char *path, suite_t *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    char found[4096];
    path = conform_suite_path(path, found, sizeof found); /* cases/... of the data directory from anywhere */
    snprintf(s->path, sizeof s->path, "%s", path);
    if (suite_parse(path, s, err, errlen)) return -1;
    int cap = 0, index = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s->root, "cases")) {
        if (add_entry(s, &cap, c, index++, path, err, errlen)) {
            suite_free(s);
            return -1;
        }
    }
    if (check_cases(s, path, err, errlen)) {
        suite_free(s);
        return -1;
    }
    return 0;
}

static int by_id(const void *a, const void *b)
{
    return strcmp((*(const case_t *const *)a)->id, (*(const case_t *const *)b)->id);
}

int suites_distinct(const suite_t *suites, int n, char *err, size_t errlen)
{
    int total = 0, k = 0, rc = 0;
    for (int s = 0; s < n; s++) total += suites[s].n_cases;
    const case_t **all = malloc((size_t)(total ? total : 1) * sizeof *all);
    if (!all) {
        snprintf(err, errlen, "out of memory checking the case ids of %d suites", n);
        return -1;
    }
    for (int s = 0; s < n; s++)
        for (int c = 0; c < suites[s].n_cases; c++) all[k++] = &suites[s].cases[c];
    qsort(all, (size_t)total, sizeof *all, by_id);
    for (int i = 1; i < total && !rc; i++)
        if (!strcmp(all[i - 1]->id, all[i]->id)) {
            snprintf(err, errlen, "case %s is in %s and in %s: give each suite once (a case id names one case of a "
                     "run, its report and its export)", all[i]->id, all[i - 1]->suite_path, all[i]->suite_path);
            rc = -1;
        }
    free(all);
    return rc;
}

void suite_free(suite_t *s)
{
    for (int i = 0; i < s->n_cases; i++) cJSON_Delete(s->cases[i].point);
    free(s->cases);
    cJSON_Delete(s->root);
    memset(s, 0, sizeof *s);
}
