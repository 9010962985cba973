/* Which cases a run (or an export) takes: --filter, --op, --rerun and --shard. */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "status.h"
#include "fsio.h"
#include "version.h"

/* ---- shards: a deterministic partition of the cases by id ---------------------------------- */

int parse_shard(const char *v, int *index, int *count)
{
    int i, n;
    char tail;
    if (!v || sscanf(v, "%d/%d%c", &i, &n, &tail) != 2 || n < 1 || i < 1 || i > n)
        return usage_error("--shard takes I/N with 1 <= I <= N, got '%s'", v ? v : "");
    *index = i;
    *count = n;
    return 0;
}

/* GitLab's parallel jobs and Slurm job arrays say which shard this is. */
int shard_from_environment(int *index, int *count)
{
    const char *gi = getenv("CI_NODE_INDEX"), *gt = getenv("CI_NODE_TOTAL");
    if (gi && gt) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s/%s", gi, gt);
        return parse_shard(buf, index, count);
    }
    const char *si = getenv("SLURM_ARRAY_TASK_ID"), *sc = getenv("SLURM_ARRAY_TASK_COUNT"), *sm = getenv("SLURM_ARRAY_TASK_MIN");
    if (si && sc) {
        char buf[64];
        snprintf(buf, sizeof buf, "%d/%s", atoi(si) - (sm ? atoi(sm) : 0) + 1, sc);
        return parse_shard(buf, index, count);
    }
    return 0;
}

static int in_shard(const char *id, int index, int count)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = id; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (int)(h % (uint64_t)count) == index - 1;
}

/* ---- selection ----------------------------------------------------------------------------- */

int selected(const selection *s, const case_t *c)
{
    if (!case_matches(c, s->filter)) return 0;
    if (s->n_ops) {
        int ok = 0;
        for (int i = 0; i < s->n_ops; i++) ok |= !strcmp(s->ops[i], c->op->name);
        if (!ok) return 0;
    }
    if (s->rerun && !cJSON_GetObjectItemCaseSensitive(s->rerun, c->id)) return 0;
    return s->shard_count <= 1 || in_shard(c->id, s->shard_index, s->shard_count);
}

/* --rerun REPORT [--status S,...]: the ids whose status is one of S in that report */
int load_rerun(const char *path, const char *statuses, selection *s)
{
    char err[CONFORM_ERR_LEN], names[256] = "", word[64];
    for (const char *p = statuses; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        snprintf(word, sizeof word, "%.*s", (int)strcspn(p, ","), p);
        if (status_known(word)) continue;
        for (int i = 0; i < CASE_N_STATUS; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", status_name((case_status)i));
        return usage_error("--status: '%s' is not one of %s", word, names);
    }
    cJSON *r = read_json_file(path, err, sizeof err);
    if (!r) return usage_error("--rerun %s", err);
    /* another JSON (a bench file, a manifest) would select nothing: say what it is not */
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CONFORM_REPORT_SCHEMA) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "cases"))) {
        int rc = usage_error("--rerun %s: not a conform report (schema \"%s\" with a \"cases\" list; found %s%s%s)", path,
                             CONFORM_REPORT_SCHEMA, cJSON_IsString(schema) ? "schema \"" : "no schema",
                             cJSON_IsString(schema) ? schema->valuestring : "", cJSON_IsString(schema) ? "\"" : "");
        cJSON_Delete(r);
        return rc;
    }
    s->rerun = cJSON_CreateObject();
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "cases")) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id"), *st = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (!cJSON_IsString(id) || !cJSON_IsString(st)) continue;
        char list[256];
        snprintf(list, sizeof list, ",%s,", statuses);
        char needle[40];
        snprintf(needle, sizeof needle, ",%s,", st->valuestring);
        if (strstr(list, needle) && !cJSON_GetObjectItemCaseSensitive(s->rerun, id->valuestring))
            cJSON_AddTrueToObject(s->rerun, id->valuestring);
    }
    cJSON_Delete(r);
    return 0;
}

