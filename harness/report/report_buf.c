/* A growing string for the report documents: printf onto the end and the escapes of each format. */
#include "report_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void put(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->s && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) return;
        b->s = s;
        b->cap = cap;
    }
}

void put_esc(buf_t *b, const char *t)
{
    for (; t && *t; t++) {
        switch (*t) {
        case '&': put(b, "&amp;"); break;
        case '<': put(b, "&lt;"); break;
        case '>': put(b, "&gt;"); break;
        case '"': put(b, "&quot;"); break;
        default:
            if ((unsigned char)*t < 0x20 && *t != '\n' && *t != '\t') put(b, "?");
            else put(b, "%c", *t);
        }
    }
}

/* a section another file wrote (NULL: none), freed */
void put_owned(buf_t *b, char *t)
{
    put(b, "%s", t ? t : "");
    free(t);
}

/* text for a Markdown table cell, inside a code span (`...`): Markdown shows it as it is, save the
   cell's bar and a line break */
void put_code(buf_t *b, const char *t)
{
    for (; t && *t; t++) {
        if (*t == '|') put(b, "\\|");
        else if (*t == '\n') put(b, " ");
        else put(b, "%c", *t);
    }
}

/* free text for Markdown (a cell or a line): a message quotes paths and names a device chose, and
   a renderer would take their <, > and & as HTML */
void put_md(buf_t *b, const char *t)
{
    for (; t && *t; t++) {
        if (*t == '<') put(b, "&lt;");
        else if (*t == '>') put(b, "&gt;");
        else if (*t == '&') put(b, "&amp;");
        else put_code(b, (char[2]){*t, 0});
    }
}
