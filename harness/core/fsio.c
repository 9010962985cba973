#include "fsio.h"

#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mkdir_p(const char *dir, char *err, size_t errlen)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; ; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(buf, 0777) && errno != EEXIST) {
                snprintf(err, errlen, "%s: cannot create folder (%s)", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a folder", dir);
        return -1;
    }
    return 0;
}

int dir_usable(const char *dir, char *err, size_t errlen)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    struct stat st;
    /* up to the nearest path that exists: what is missing below it mkdir_p creates */
    while (stat(buf, &st)) {
        if (errno != ENOENT) {
            snprintf(err, errlen, "%s: cannot reach it (%s)", buf, strerror(errno));
            return -1;
        }
        char *slash = strrchr(buf, '/');
        while (slash && slash > buf && slash[1] == '\0') { /* a trailing slash */
            *slash = '\0';
            slash = strrchr(buf, '/');
        }
        if (!slash) snprintf(buf, sizeof buf, ".");
        else if (slash == buf) buf[1] = '\0';
        else *slash = '\0';
    }
    int self = !strcmp(buf, dir);
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, self ? "%s is not a folder" : "%s is not a folder, so nothing can be created under it", buf);
        return -1;
    }
    if (access(buf, W_OK | X_OK)) {
        snprintf(err, errlen, "folder %s is not writable (%s)", buf, strerror(errno));
        return -1;
    }
    return 0;
}

/* text into a temporary file beside path: 0 with tmp named, or -1 with nothing left behind. A full
   disk shows at fwrite or fflush (local file systems reserve blocks at write), a network file
   system's at fclose; no fsync: this guards against full disks, not power cuts. */
static int write_temp(const char *path, const char *text, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    snprintf(tmp, tmplen, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write (%s)", path, strerror(errno));
        return -1;
    }
    size_t n = strlen(text);
    int why = 0;
    if (fwrite(text, 1, n, f) != n || fflush(f)) why = errno ? errno : EIO;
    if (fclose(f) && !why) why = errno ? errno : EIO;
    if (why) {
        remove(tmp);
        snprintf(err, errlen, "%s: cannot write (%s)", path, strerror(why));
        return -1;
    }
    return 0;
}

int write_texts_atomic(int n, const char *const *paths, const char *const *texts, char *err, size_t errlen)
{
    char tmp[WRITE_MAX_FILES][1100];
    int made = 0, rc = 0;
    if (n > WRITE_MAX_FILES) {
        snprintf(err, errlen, "%s: %d files at once, at most %d", paths[0], n, WRITE_MAX_FILES);
        return -1;
    }
    while (made < n && !write_temp(paths[made], texts[made], tmp[made], sizeof tmp[made], err, errlen)) made++;
    /* all written before any is renamed: a full disk leaves the previous set whole */
    for (int i = 0; made == n && i < n && !rc; i++)
        if (rename(tmp[i], paths[i])) {
            snprintf(err, errlen, "%s: cannot write (%s)", paths[i], strerror(errno));
            rc = -1;
        }
    for (int i = 0; i < made; i++) remove(tmp[i]); /* the temporary files not renamed */
    return made == n ? rc : -1;
}

int write_text_atomic(const char *path, const char *text, char *err, size_t errlen)
{
    return write_texts_atomic(1, &path, &text, err, errlen);
}

char *json_text(const cJSON *j)
{
    char *text = cJSON_Print(j);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *withnl = malloc(n + 2);
    if (withnl) {
        memcpy(withnl, text, n);
        withnl[n] = '\n';
        withnl[n + 1] = '\0';
    }
    cJSON_free(text);
    return withnl;
}

int write_json_atomic(const char *path, const cJSON *j, char *err, size_t errlen)
{
    char *text = json_text(j);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = write_text_atomic(path, text, err, errlen);
    free(text);
    return rc;
}

cJSON *read_json_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen_regular(path, err, errlen);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        snprintf(err, errlen, "%s: cannot read", path);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    if (!j) snprintf(err, errlen, "%s: invalid JSON", path);
    return j;
}

const char *shell_quote(const char *s, char *buf, size_t len)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *p)) plain = 0;
    if (plain) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    size_t used = 0;
    if (used < len) buf[used++] = '\'';
    for (const char *p = s; *p && used + 5 < len; p++) {
        if (*p == '\'') { memcpy(buf + used, "'\\''", 4); used += 4; }
        else buf[used++] = *p;
    }
    if (used + 1 < len) buf[used++] = '\'';
    buf[used < len ? used : len - 1] = '\0';
    return buf;
}

void command_line(int argc, char **argv, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used < len; i++) {
        char q[1024];
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", shell_quote(argv[i], q, sizeof q));
    }
}
