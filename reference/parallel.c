/* The reference's threads: plain pthreads, started and joined by each parallel loop. No thread
 * outlives a call, so a process may fork after the reference ran and use OpenMP in the child (a
 * forked libgomp team that had run hangs there: the harness runs the golden, then forks the
 * implementation under test). Items are taken one at a time from a shared counter: a thread on a
 * core another process holds simply takes fewer. */
#include "ref_internal.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int ref_threads = 1;

void ref_set_threads(int n) { atomic_store(&ref_threads, n > 1 ? n : 1); }

int ref_get_threads(void) { return atomic_load(&ref_threads); }

typedef struct {
    atomic_llong next;
    int64_t n;
    ref_item_fn body;
    void *ctx;
} loop;

static void *worker(void *arg)
{
    loop *l = arg;
    for (int64_t i; (i = (int64_t)atomic_fetch_add(&l->next, 1)) < l->n;) l->body(l->ctx, i);
    return NULL;
}

void ref_parallel_for(int64_t n, ref_item_fn body, void *ctx)
{
    enum { MAX_THREADS = 256 };
    int64_t nt = ref_get_threads();
    if (nt > n) nt = n;
    if (nt > MAX_THREADS) nt = MAX_THREADS;
    loop l = {0, n, body, ctx};
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int64_t t = 1; t < nt; t++) {
        if (pthread_create(&tid[started], NULL, worker, &l)) break; /* fewer threads: same numbers */
        started++;
    }
    worker(&l);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
}
