/* A growing string for the report documents (report_formats.c, report_runner.c, report_standards.c). */
#ifndef CONFORM_REPORT_BUF_H
#define CONFORM_REPORT_BUF_H

#include <stddef.h>

typedef struct {
    char *s;
    size_t n, cap;
} buf_t;

/* printf onto the end (nothing on allocation failure) */
void put(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text escaped for XML/HTML (quot included: also fine in attributes) */
void put_esc(buf_t *b, const char *t);
/* a section another file wrote (NULL: none), then freed */
void put_owned(buf_t *b, char *t);
/* text for a Markdown table cell inside a code span: the cell's bar escaped, line breaks as spaces */
void put_code(buf_t *b, const char *t);
/* free text for a Markdown cell or line: <, > and & as entities (a device's paths and names are
   never HTML), the cell's bar escaped, line breaks as spaces */
void put_md(buf_t *b, const char *t);

#endif
