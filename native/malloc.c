// The controller's window into glibc's malloc (controller/operator/malloc.ts loads it; scripts/build-native.mjs
// compiles it). glibc returns an arena's free memory to the system only from the arena's top, so after a burst
// the chunks freed between ones still in use stay resident; malloc_trim(0) gives back every whole free page of
// every arena (glibc's malloc/malloc.c, mtrim). Node never calls it. Written against Node-API only, so one build
// serves every Node version the project supports. Built where glibc is absent, both calls say so instead.
#include <node_api.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/** One trim on libuv's thread pool: what it found and how long glibc took. */
typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int released;
  double seconds;
} TrimJob;

/** On a pool thread, never the event loop: glibc locks each arena in turn while it walks its free chunks. */
static void TrimExecute(napi_env env, void *data) {
  (void)env;
  TrimJob *job = data;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
#if defined(__GLIBC__)
  job->released = malloc_trim(0);
#endif
  clock_gettime(CLOCK_MONOTONIC, &b);
  job->seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/** Back on the event loop: settles the promise with { released, seconds } and frees the job. */
static void TrimComplete(napi_env env, napi_status status, void *data) {
  TrimJob *job = data;
  napi_value out = NULL, released, seconds;
  if (status == napi_ok && napi_create_object(env, &out) == napi_ok &&
      napi_get_boolean(env, job->released != 0, &released) == napi_ok &&
      napi_set_named_property(env, out, "released", released) == napi_ok &&
      napi_create_double(env, job->seconds, &seconds) == napi_ok &&
      napi_set_named_property(env, out, "seconds", seconds) == napi_ok) {
    napi_resolve_deferred(env, job->deferred, out);
  } else {
    napi_value msg, err;
    napi_create_string_utf8(env, "malloc_trim: the trim's result could not be reported", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &err);
    napi_reject_deferred(env, job->deferred, err);
  }
  napi_delete_async_work(env, job->work);
  free(job);
}

/**
 * trim(): a promise of { released, seconds }: whether glibc gave any memory back (false without glibc) and how long
 * malloc_trim(0) took. It runs on libuv's thread pool: a trim after a burst walks thousands of free chunks and
 * madvises each, tens of milliseconds the event loop does not wait for.
 */
static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  TrimJob *job = calloc(1, sizeof *job);
  if (job == NULL) {
    napi_throw_error(env, NULL, "malloc_trim: out of memory");
    return NULL;
  }
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "malloc_trim", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, TrimExecute, TrimComplete, job, &job->work) != napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    free(job);
    napi_throw_error(env, NULL, "malloc_trim: could not queue the trim");
    return NULL;
  }
  return promise;
}

static napi_status set_number(napi_env env, napi_value obj, const char *name, double v) {
  napi_value n;
  napi_status s = napi_create_double(env, v, &n);
  if (s != napi_ok) return s;
  return napi_set_named_property(env, obj, name, n);
}

/**
 * stats(): the arenas' bytes as glibc counts them (mallinfo2, every arena summed), or null without glibc 2.33+:
 * arenaBytes taken from the system by brk/heaps, inUseBytes of it allocated, freeBytes of it free, mmapBytes in
 * blocks with pages of their own. Not resident memory: free bytes may or may not be backed by pages.
 */
static napi_value Stats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 m = mallinfo2();
  if (napi_create_object(env, &out) != napi_ok) return NULL;
  if (set_number(env, out, "arenaBytes", (double)m.arena) != napi_ok) return NULL;
  if (set_number(env, out, "inUseBytes", (double)m.uordblks) != napi_ok) return NULL;
  if (set_number(env, out, "freeBytes", (double)m.fordblks) != napi_ok) return NULL;
  if (set_number(env, out, "mmapBytes", (double)m.hblkhd) != napi_ok) return NULL;
#else
  if (napi_get_null(env, &out) != napi_ok) return NULL;
#endif
  return out;
}

/** The module's exports: trim, stats, and glibc (whether this build calls into glibc's malloc at all). */
static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"trim", NULL, Trim, NULL, NULL, NULL, napi_enumerable, NULL},
      {"stats", NULL, Stats, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, 2, props) != napi_ok) return NULL;
  napi_value glibc;
#if defined(__GLIBC__)
  if (napi_get_boolean(env, 1, &glibc) != napi_ok) return NULL;
#else
  if (napi_get_boolean(env, 0, &glibc) != napi_ok) return NULL;
#endif
  if (napi_set_named_property(env, exports, "glibc", glibc) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
