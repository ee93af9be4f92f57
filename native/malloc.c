// The controller's window into glibc's malloc (controller/operator/malloc.ts loads it; scripts/build-native.mjs
// compiles it). glibc returns an arena's free memory to the system only from the arena's top, so after a burst
// the chunks freed between ones still in use stay resident; malloc_trim(0) gives back every whole free page of
// every arena (glibc's malloc/malloc.c, mtrim). Node never calls it. Written against Node-API only, so one build
// serves every Node version the project supports. Built where glibc is absent, both calls say so instead.
#include <node_api.h>
#include <stddef.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/** trim(): whether glibc gave any memory back (false without glibc). */
static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value out;
  if (napi_get_boolean(env, released != 0, &out) != napi_ok) return NULL;
  return out;
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

/** glibc: whether this build calls into glibc's malloc at all. */
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
