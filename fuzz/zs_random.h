/*
 * zs_random.h - the harness's seeded PRNG (splitmix64), so that a seed
 * reproduces a random scenario everywhere (zofuzz gen, zofuzz check, zofuzz
 * traces --seeds).
 */
#ifndef ZS_RANDOM_H
#define ZS_RANDOM_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t zs_rand_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** Fills buf[0..n) from *state. */
static inline void zs_rand_bytes(uint64_t *state, uint8_t *buf, size_t n) {
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(zs_rand_next(state) >> 24);
}

/** The random input of trial `trial` of seed `seed`: its length (at most
 *  max) and bytes.  Lengths are spread over [0, max]. */
static inline size_t zs_rand_input(uint64_t seed, uint64_t trial, uint8_t *buf, size_t max) {
    uint64_t st = seed * 0x100000001b3ull + trial;
    size_t n = (size_t)(zs_rand_next(&st) % (max + 1));
    zs_rand_bytes(&st, buf, n);
    return n;
}

#endif /* ZS_RANDOM_H */
