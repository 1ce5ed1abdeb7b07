// The machine's memory latency by working-set size: what one cache miss costs a packet-hop
// at many flows (docs/performance.md, "Where the time goes now": "Many flows").
//
// For each size, a random cyclic chain through one 8-byte word per 64-byte line is walked
// with dependent loads, so no two loads overlap: ns per load is the latency of a miss at
// that size. With --chains K, K independent chains are walked in turn, so up to K misses
// overlap, as prefetching lets them in the simulator: ns per load falls near 1/K of the
// latency if the memory system takes K misses at once.
//
//   cc -O2 -o out/memory-latency scripts/memory_latency.c
//   out/memory-latency [--chains K] [SIZE_KB ...]    (default sizes 32 KB to 512 MB)

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE 64
#define LOADS 20000000u

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void) {  // xorshift64*: a fixed, portable sequence
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// ns per load over a working set of `bytes`, `chains` independent chains walked in turn.
static double ns_per_load(size_t bytes, unsigned chains) {
    size_t lines = bytes / LINE, words = LINE / sizeof(uint64_t);
    uint64_t *mem = aligned_alloc(LINE, lines * LINE);
    size_t *order = malloc(lines * sizeof *order);
    if (!mem || !order) {
        fprintf(stderr, "memory-latency: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    for (size_t i = 0; i < lines; i++) order[i] = i;
    for (size_t i = lines - 1; i > 0; i--) {  // Fisher-Yates: one random cycle through every line
        size_t j = next_random() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) mem[order[i] * words] = order[(i + 1) % lines] * words;
    size_t at[64];
    for (unsigned c = 0; c < chains; c++) at[c] = order[c * (lines / chains)] * words;
    for (size_t i = 0; i < lines; i++) at[0] = mem[at[0]];  // warm: every line touched once
    size_t rounds = LOADS / chains;
    double t0 = seconds();
    for (size_t i = 0; i < rounds; i++)
        for (unsigned c = 0; c < chains; c++) at[c] = mem[at[c]];
    double t1 = seconds();
    size_t sink = 0;
    for (unsigned c = 0; c < chains; c++) sink += at[c];
    if (sink == 1) puts("");  // keeps the walk from being optimised away
    free(mem);
    free(order);
    return (t1 - t0) * 1e9 / (double)(rounds * chains);
}

int main(int argc, char **argv) {
    unsigned chains = 1;
    size_t sizes_kb[64], n = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--chains") == 0 && i + 1 < argc) {
            unsigned long k = strtoul(argv[++i], &end, 10);
            if (*end || k < 1 || k > 64) {
                fprintf(stderr, "memory-latency: --chains %s: an integer 1 to 64\n", argv[i]);
                return 2;
            }
            chains = (unsigned)k;
        } else {
            unsigned long long kb = strtoull(argv[i], &end, 10);
            if (*end || kb < 4 || kb > (1ull << 26) || n == 64) {
                fprintf(stderr, "memory-latency: size %s: KB, 4 to 67108864 (at most 64 sizes)\n", argv[i]);
                return 2;
            }
            sizes_kb[n++] = (size_t)kb;
        }
    }
    if (n == 0)
        for (size_t kb = 32; kb <= (1u << 20); kb *= 4) sizes_kb[n++] = kb;
    printf("%12s %8s %12s\n", "working set", "chains", "ns per load");
    for (size_t i = 0; i < n; i++) {
        if (sizes_kb[i] * 1024 / LINE < chains) continue;
        printf("%9zu KB %8u %12.1f\n", sizes_kb[i], chains, ns_per_load(sizes_kb[i] * 1024, chains));
        fflush(stdout);
    }
    return 0;
}
