/* The C thread pool of the native steps (threadpool.h): a split op runs its slices on
 * ``threads - 1`` pthread workers and the calling thread, inside one native step, so the run
 * loop never leaves C for it (parallel.py's Python pool costs a queue, a wake-up and an
 * Event per slice, plus the GIL between ops).
 *
 * The same rules as parallel.py, which DESIGN.md ("Threads") sets for every pool here:
 * - no spinning: an idle worker sleeps on a condition variable (a futex wait: no CPU), and
 *   a caller waiting for a worker's last task sleeps on another; nothing busy-waits;
 * - the caller works too: tasks are taken from one atomic counter by the caller and the
 *   woken workers alike, so when the CPU is busy and a worker is not scheduled soon, the
 *   caller runs its tasks and waits only for tasks a worker already started (kernels cut
 *   their work into a few tasks per thread, so that wait is short);
 * - a pool in use by another caller (two interpreters invoking at once from two Python
 *   threads) is not waited for: the second caller runs all its tasks itself;
 * - fork: the child of a fork has none of the parent's workers; pthread_atfork drops the
 *   pools in the child (their memory is left alone: the mutexes may be held) so the child's
 *   first split run starts new ones.
 *
 * A run: the caller publishes (fn, ctx, n_tasks), resets the counter, opens the run and
 * bumps the generation (under the lock), and broadcasts. A woken worker checks in (active++
 * under the lock) only while the run is open; the caller, once the counter is past the last
 * task, closes the run and sleeps until active is 0. So a worker that wakes after the close
 * touches nothing of the run, and a worker that checked in is always waited for. */
#if !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__)) && \
    !defined(__STDC_NO_ATOMICS__) && !defined(EL_NO_THREADS)
#define _GNU_SOURCE /* pthread_setname_np */
#define EL_POOL_THREADS 1
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#else
#define EL_POOL_THREADS 0
#endif
#include <stdint.h>

#include "threadpool.h"

static void run_alone(int64_t n_tasks, el_task_fn fn, void *ctx)
{
    for (int64_t t = 0; t < n_tasks; t++) fn(ctx, t, 0);
}

#if EL_POOL_THREADS

struct pool;

struct worker {
    struct pool *pool;
    int id;          /* 1 .. size - 1 */
    uint64_t seen;   /* the generation this worker last woke for */
    pthread_t thread;
    int started;
};

struct pool {
    int size;                  /* threads, the caller included */
    atomic_flag busy;          /* a caller is running tasks through the pool */
    pthread_mutex_t lock;      /* everything below but next */
    pthread_cond_t wake;       /* workers wait here for a new generation */
    pthread_cond_t idle;       /* the caller waits here for active == 0 */
    uint64_t generation;
    int open, active, stop;
    el_task_fn fn;
    void *ctx;
    int64_t n_tasks;
    atomic_llong next;         /* the next task to take */
    struct worker workers[EL_POOL_MAX_THREADS];
};

static struct pool *pools[EL_POOL_MAX_THREADS + 1]; /* by size; NULL: not started */
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int running_workers;

/* Tasks from the shared counter until none is left. */
static void take_tasks(struct pool *p, el_task_fn fn, void *ctx, int64_t n, int worker)
{
    for (;;) {
        const int64_t t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (t >= n) return;
        fn(ctx, t, worker);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pool *p = w->pool;
#if defined(__linux__)
    pthread_setname_np(pthread_self(), "edgelite-pool");
#endif
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == w->seen && !p->stop)
            pthread_cond_wait(&p->wake, &p->lock); /* asleep: no CPU */
        if (p->stop) break;
        w->seen = p->generation;
        if (!p->open) continue; /* the caller finished this run alone */
        el_task_fn fn = p->fn;
        void *ctx = p->ctx;
        const int64_t n = p->n_tasks;
        p->active++;
        pthread_mutex_unlock(&p->lock);
        take_tasks(p, fn, ctx, n, w->id);
        pthread_mutex_lock(&p->lock);
        if (--p->active == 0) pthread_cond_signal(&p->idle);
    }
    pthread_mutex_unlock(&p->lock);
    atomic_fetch_sub(&running_workers, 1);
    return NULL;
}

static struct pool *pool_new(int size)
{
    struct pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->size = size;
    atomic_flag_clear(&p->busy);
    atomic_init(&p->next, 0);
    if (pthread_mutex_init(&p->lock, NULL)) goto fail;
    if (pthread_cond_init(&p->wake, NULL)) goto fail_lock;
    if (pthread_cond_init(&p->idle, NULL)) goto fail_wake;
    return p;
fail_wake:
    pthread_cond_destroy(&p->wake);
fail_lock:
    pthread_mutex_destroy(&p->lock);
fail:
    free(p);
    return NULL;
}

/* The workers not running yet, started with every signal blocked (signals stay with the
 * Python threads). A worker that cannot be started is left out: the caller runs more. */
static void start_workers(struct pool *p)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 1; i < p->size; i++) {
        struct worker *w = &p->workers[i];
        if (w->started) continue;
        *w = (struct worker){.pool = p, .id = i, .seen = p->generation};
        if (pthread_create(&w->thread, NULL, worker_main, w) == 0) {
            w->started = 1;
            atomic_fetch_add(&running_workers, 1);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static struct pool *pool_of(int size)
{
    pthread_mutex_lock(&pools_lock);
    struct pool *p = pools[size];
    if (!p) p = pools[size] = pool_new(size);
    pthread_mutex_unlock(&pools_lock);
    return p;
}

void el_pool_run(int threads, int64_t n_tasks, el_task_fn fn, void *ctx)
{
    if (threads > EL_POOL_MAX_THREADS) threads = EL_POOL_MAX_THREADS;
    if (threads <= 1 || n_tasks <= 1) {
        run_alone(n_tasks, fn, ctx);
        return;
    }
    struct pool *p = pool_of(threads);
    if (!p || atomic_flag_test_and_set_explicit(&p->busy, memory_order_acquire)) {
        run_alone(n_tasks, fn, ctx); /* another caller has it: do not wait */
        return;
    }
    pthread_mutex_lock(&p->lock);
    start_workers(p);
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->open = 1;
    p->generation++;
    pthread_mutex_unlock(&p->lock);
    pthread_cond_broadcast(&p->wake); /* after the unlock: a woken worker finds it free */

    take_tasks(p, fn, ctx, n_tasks, 0);

    pthread_mutex_lock(&p->lock);
    p->open = 0; /* late wakers take nothing */
    while (p->active) pthread_cond_wait(&p->idle, &p->lock);
    pthread_mutex_unlock(&p->lock);
    atomic_flag_clear_explicit(&p->busy, memory_order_release);
}

static void pool_free(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 1; i < p->size; i++)
        if (p->workers[i].started) pthread_join(p->workers[i].thread, NULL);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void el_pool_shutdown(void)
{
    pthread_mutex_lock(&pools_lock);
    for (int i = 0; i <= EL_POOL_MAX_THREADS; i++) {
        /* a pool some (daemon) thread is still running tasks through is left alone */
        if (pools[i] && !atomic_flag_test_and_set(&pools[i]->busy)) pool_free(pools[i]);
        pools[i] = NULL;
    }
    pthread_mutex_unlock(&pools_lock);
}

static void before_fork(void) { pthread_mutex_lock(&pools_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&pools_lock); }

/* The child has only the forking thread: forget the pools (not freed -- their locks may be
 * held by threads that do not exist here) so the next run starts fresh ones. */
static void after_fork_child(void)
{
    for (int i = 0; i <= EL_POOL_MAX_THREADS; i++) pools[i] = NULL;
    atomic_store(&running_workers, 0);
    pthread_mutex_init(&pools_lock, NULL);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_status;

static void install_fork_handler(void)
{
    fork_status = pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

int el_pool_init(void)
{
    pthread_once(&fork_once, install_fork_handler);
    return fork_status ? -1 : 0;
}

int el_pool_workers(void) { return atomic_load(&running_workers); }

#else /* no pthreads: every run on the caller */

void el_pool_run(int threads, int64_t n_tasks, el_task_fn fn, void *ctx)
{
    (void)threads;
    run_alone(n_tasks, fn, ctx);
}

int el_pool_init(void) { return -1; }
void el_pool_shutdown(void) {}
int el_pool_workers(void) { return 0; }
#endif
