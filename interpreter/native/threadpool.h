/* edgelite's C thread pool (threadpool.c): the work of one native step split over the
 * Interpreter's num_threads without leaving C (no Python, no GIL between the slices). */
#ifndef EDGELITE_THREADPOOL_H
#define EDGELITE_THREADPOOL_H
#include <stdint.h>

#define EL_POOL_MAX_THREADS 64

/* One task of a run: task in [0, n_tasks); worker in [0, threads) names the thread running
 * it (0: the caller), so a kernel gives each thread its own scratch. */
typedef void (*el_task_fn)(void *ctx, int64_t task, int worker);

/* fn(ctx, t, worker) for every t in [0, n_tasks), on the process's shared pool of
 * ``threads`` threads (the caller and threads - 1 sleeping workers, started on first use).
 * The caller takes tasks too, from the same counter: where a worker does not wake soon
 * (a busy CPU), the caller runs its tasks. A pool already running another caller's tasks
 * is not waited for: the caller runs every task itself (worker 0). Returns when all are
 * done. Without pthreads (Windows builds) every task runs on the caller. */
void el_pool_run(int threads, int64_t n_tasks, el_task_fn fn, void *ctx);

/* Part i of ``parts`` near-equal parts of [begin, end): its start (i = parts: end), inner
 * bounds rounded down to a multiple of ``align`` from begin (so that a GEMM's tasks hold
 * whole tiles). */
static inline int64_t el_part(int64_t begin, int64_t end, int64_t parts, int64_t i,
                              int64_t align)
{
    if (i >= parts) return end;
    const int64_t at = (end - begin) * i / parts;
    return begin + at / align * align;
}

/* 0 where the pool is built (pthreads), else -1; installs the fork handler once. */
int el_pool_init(void);
/* Stops and joins every pool's workers and frees the pools (module teardown, tests); the
 * next run starts new ones. Not to be called while a run is in progress. */
void el_pool_shutdown(void);
/* How many worker threads are running now (all pools). */
int el_pool_workers(void);
#endif
