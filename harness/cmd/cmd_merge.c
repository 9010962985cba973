/* conform merge: shard reports combined into one, in every format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "report.h"

/* The kind of implementation a report judged ("optimized", "plugin", "dir"): shards of one run
 * may hold its directory or plugin at different paths on different machines. */
static void impl_kind(const cJSON *r, char *kind, size_t n)
{
    const cJSON *impl = cJSON_GetObjectItemCaseSensitive(r, "impl");
    const char *s = cJSON_IsString(impl) ? impl->valuestring : "optimized";
    size_t len = strcspn(s, ":");
    snprintf(kind, n, "%.*s", (int)(len < n ? len : n - 1), s);
}

/* Shards of one run agree on what was judged and how: the dtype, the seed, the suites, the kind
 * of implementation and the verdict that gates. Returns the key they differ on, or NULL. */
static const char *different_run(const cJSON *first, const cJSON *r)
{
    static const char *keys[] = {"dtype", "seed", "suites", "gated_on"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(first, keys[k]), *b = cJSON_GetObjectItemCaseSensitive(r, keys[k]);
        if ((a || b) && !(a && b && cJSON_Compare(a, b, 1))) return keys[k];
    }
    char ka[64], kb[64];
    impl_kind(first, ka, sizeof ka);
    impl_kind(r, kb, sizeof kb);
    return strcmp(ka, kb) ? "impl" : NULL;
}

static char *item_text(const cJSON *r, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
    return v ? cJSON_PrintUnformatted(v) : strdup("(none)");
}

/* What the merge has gathered so far */
typedef struct {
    cJSON *merged;      /* the first shard's header with every shard's lists */
    cJSON *seen;        /* case ids */
    cJSON *proofs_seen; /* "op|what" of the proofs */
    cJSON *stale;       /* pattern -> {count: shards that call it stale, waiver} */
    double duration;
    int shard_count;         /* N of the shards' I/N (0: none recorded one yet) */
    const char *shard_dir[256]; /* index I-1 -> the directory that holds shard I */
    int unsharded;           /* reports that record no shard */
    const char *first_unsharded, *first_sharded;
} merge_state;

/* DIR/report.json of shard i, if it is a conform report of the same run as the shards before it;
 * else NULL with *rc set (the message names the file and what differs) */
static cJSON *read_shard(const merge_state *m, const char *const *dirs, int i, int *rc)
{
    char path[1100], err[CONFORM_ERR_LEN];
    snprintf(path, sizeof path, "%s/report.json", dirs[i]);
    cJSON *r = read_json_file(path, err, sizeof err);
    const cJSON *schema = r ? cJSON_GetObjectItemCaseSensitive(r, "schema") : NULL;
    if (!r || !cJSON_IsString(schema) || strcmp(schema->valuestring, CONFORM_REPORT_SCHEMA)) {
        *rc = usage_error("merge: %s", r ? "not a conform report" : err);
        cJSON_Delete(r);
        return NULL;
    }
    const char *differs = m->merged ? different_run(m->merged, r) : NULL;
    if (differs) {
        char *a = item_text(m->merged, differs), *b = item_text(r, differs);
        *rc = usage_error("merge: %s/report.json is another run than %s/report.json: %s %s, not %s "
                          "(only shards of one run merge)", dirs[i], dirs[0], differs, b, a);
        free(a);
        free(b);
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* The cases of shard r, each id once over all shards */
static int add_cases(merge_state *m, const cJSON *r)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "cases")) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (!cJSON_IsString(id)) continue;
        if (cJSON_GetObjectItemCaseSensitive(m->seen, id->valuestring))
            return usage_error("merge: case %s appears in more than one report (overlapping shards?)", id->valuestring);
        cJSON_AddTrueToObject(m->seen, id->valuestring);
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(m->merged, "cases"), cJSON_Duplicate(c, 1));
    }
    return EXIT_OK;
}

/* The proofs of shard r (each op and claim once) and its stale waivers (counted) */
static void add_proofs_and_waivers(merge_state *m, const cJSON *r)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "proofs")) {
        char key[512];
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(p, "op"), *what = cJSON_GetObjectItemCaseSensitive(p, "what");
        snprintf(key, sizeof key, "%s|%s", cJSON_IsString(op) ? op->valuestring : "", cJSON_IsString(what) ? what->valuestring : "");
        if (cJSON_GetObjectItemCaseSensitive(m->proofs_seen, key)) continue;
        cJSON_AddTrueToObject(m->proofs_seen, key);
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(m->merged, "proofs"), cJSON_Duplicate(p, 1));
    }
    /* a waiver is stale only if no shard used it: count the shards that call it stale */
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(r, "stale_waivers")) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(w, "pattern");
        if (!cJSON_IsString(pat)) continue;
        cJSON *entry = cJSON_GetObjectItemCaseSensitive(m->stale, pat->valuestring);
        if (!entry) {
            entry = cJSON_AddObjectToObject(m->stale, pat->valuestring);
            cJSON_AddNumberToObject(entry, "count", 0);
            cJSON_AddItemToObject(entry, "waiver", cJSON_Duplicate(w, 1));
        }
        cJSON *count = cJSON_GetObjectItemCaseSensitive(entry, "count");
        cJSON_SetNumberValue(count, count->valuedouble + 1);
    }
}

/* The I/N shard r records (from dir), or none: two reports of one shard, or shards of different
   N, are refused naming them */
static int note_shard(merge_state *m, const cJSON *r, const char *dir)
{
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(r, "shard");
    int i, n;
    char tail;
    if (!cJSON_IsString(sh)) {
        if (!m->unsharded++) m->first_unsharded = dir;
        return EXIT_OK;
    }
    if (sscanf(sh->valuestring, "%d/%d%c", &i, &n, &tail) != 2 || n < 1 || i < 1 || i > n || n > 256)
        return usage_error("merge: %s/report.json records shard '%s', not I/N", dir, sh->valuestring);
    if (!m->first_sharded) m->first_sharded = dir;
    if (m->shard_count && n != m->shard_count)
        return usage_error("merge: %s holds shard %s, %s one of %d shards (only shards of one run merge)", dir,
                           sh->valuestring, m->first_sharded, m->shard_count);
    m->shard_count = n;
    if (m->shard_dir[i - 1])
        return usage_error("merge: shard %d/%d given twice: %s and %s", i, n, m->shard_dir[i - 1], dir);
    m->shard_dir[i - 1] = dir;
    return EXIT_OK;
}

/* Every shard of 1..N there, and no whole run beside them; else a usage error naming the missing */
static int check_shards(const merge_state *m)
{
    if (!m->shard_count) return EXIT_OK;
    if (m->unsharded)
        return usage_error("merge: %s records no shard, %s is shard of %d: a whole run does not merge with shards",
                           m->first_unsharded, m->first_sharded, m->shard_count);
    char missing[1024] = "";
    int n_missing = 0;
    for (int i = 0; i < m->shard_count; i++)
        if (!m->shard_dir[i] && strlen(missing) + 16 < sizeof missing) {
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%d/%d", n_missing ? ", " : "", i + 1,
                     m->shard_count);
            n_missing++;
        }
    if (n_missing)
        return usage_error("merge: shard%s %s missing (%d of %d given): merge every shard of the run", n_missing > 1 ? "s" : "",
                           missing, m->shard_count - n_missing, m->shard_count);
    return EXIT_OK;
}

/* Shard r (from dir) into the merge: the first gives the run's header */
static int add_shard(merge_state *m, const cJSON *r, const char *dir)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(r, "duration_s");
    if (cJSON_IsNumber(d)) m->duration += d->valuedouble;
    if (!m->merged) {
        /* the first report gives the run's header; its lists are refilled from all of them */
        m->merged = cJSON_Duplicate(r, 1);
        cJSON_ReplaceItemInObject(m->merged, "cases", cJSON_CreateArray());
        cJSON_ReplaceItemInObject(m->merged, "proofs", cJSON_CreateArray());
        cJSON_ReplaceItemInObject(m->merged, "stale_waivers", cJSON_CreateArray());
        cJSON_DeleteItemFromObject(m->merged, "shard");
        cJSON_AddArrayToObject(m->merged, "merged_from");
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(m->merged, "merged_from"), cJSON_CreateString(dir));
    int rc = note_shard(m, r, dir);
    if (rc) return rc;
    rc = add_cases(m, r);
    add_proofs_and_waivers(m, r);
    return rc;
}

/* The merged report of n shards, summarized and written in every format */
static int write_merged(merge_state *m, int n, const char *out_dir)
{
    char err[CONFORM_ERR_LEN];
    const cJSON *e;
    cJSON_ArrayForEach(e, m->stale)
        if (cJSON_GetObjectItemCaseSensitive(e, "count")->valuedouble == n)
            cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(m->merged, "stale_waivers"),
                                 cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(e, "waiver"), 1));
    cJSON_ReplaceItemInObject(m->merged, "duration_s", cJSON_CreateNumber(m->duration));
    report_summarize(m->merged);
    if (mkdir_p(out_dir, err, sizeof err) || report_write_all(m->merged, out_dir, err, sizeof err))
        return usage_error("merge: %s: no report was written (the previous one in %s, if any, is unchanged)", err, out_dir);
    report_print_summary(m->merged, stdout);
    printf("merged %d reports into %s\n", n, out_dir);
    return report_all_passed(m->merged) ? EXIT_OK : EXIT_FAIL;
}

int cmd_merge(int argc, char **argv)
{
    const char *out_dir = NULL, *dirs[256];
    int n = 0;
    if (cli_once("merge", argc, argv)) return EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--report-dir") && i + 1 < argc) out_dir = argv[++i];
        else if (argv[i][0] == '-') return cli_unknown_option("merge", argv[i], NULL);
        else if (n == 256) return usage_error("merge: at most 256 reports");
        else dirs[n++] = argv[i];
    }
    if (!out_dir || !n) return usage_error("merge: usage: conform merge --report-dir OUT DIR...");
    char err[CONFORM_ERR_LEN];
    if (dir_usable(out_dir, err, sizeof err)) return usage_error("--report-dir %s: %s", out_dir, err);
    merge_state m = {NULL, cJSON_CreateObject(), cJSON_CreateObject(), cJSON_CreateObject(), 0, 0, {0}, 0, NULL, NULL};
    int rc = EXIT_OK;
    for (int i = 0; i < n && rc == EXIT_OK; i++) {
        cJSON *r = read_shard(&m, dirs, i, &rc);
        if (!r) break;
        rc = add_shard(&m, r, dirs[i]);
        cJSON_Delete(r);
    }
    if (rc == EXIT_OK) rc = check_shards(&m);
    if (rc == EXIT_OK) rc = write_merged(&m, n, out_dir);
    cJSON_Delete(m.merged);
    cJSON_Delete(m.seen);
    cJSON_Delete(m.proofs_seen);
    cJSON_Delete(m.stale);
    return rc;
}
