/* Files: written whole or not at all (temporary file, then rename), JSON read back, command lines
 * quoted for the shell. */
#ifndef CONFORM_FSIO_H
#define CONFORM_FSIO_H

#include <cJSON.h>
#include <stddef.h>

int mkdir_p(const char *dir, char *err, size_t errlen);
/* Whether dir is a folder conform can write in, or one mkdir_p could create (its nearest existing
 * ancestor a writable folder): 0, or -1 with the rule broken in err. Creates nothing. */
int dir_usable(const char *dir, char *err, size_t errlen);
int write_text_atomic(const char *path, const char *text, char *err, size_t errlen);
int write_json_atomic(const char *path, const cJSON *j, char *err, size_t errlen);
/* n files as one: every text is written and synced beside its path before any is renamed into
 * place, so a full disk (or a file-size limit) leaves the previous files whole. 0, or -1 with err
 * naming the file and the reason, and no temporary file left. */
#define WRITE_MAX_FILES 8
int write_texts_atomic(int n, const char *const *paths, const char *const *texts, char *err, size_t errlen);
/* cJSON_Print with a final newline (malloc'd), or NULL when out of memory */
char *json_text(const cJSON *j);
/* Parses a JSON file; NULL with err set. */
cJSON *read_json_file(const char *path, char *err, size_t errlen);
/* A command line as one shell-safe string. */
void command_line(int argc, char **argv, char *buf, size_t len);
/* A single shell word, quoted when it needs to be. */
const char *shell_quote(const char *s, char *buf, size_t len);

#endif
