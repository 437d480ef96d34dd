/*
 * The least work two phases of `cce allreduce --ranks 8 --dtype bf16 --elems 67108864` cannot
 * skip, on this host's threads, with nothing else around them (docs/performance.md, "End to end"):
 *   - fresh 1 GiB made resident: the kernel zeroes every new page (the engine's W buffers);
 *   - 2 GiB read once: every rank's input and every rank's output (the exact check).
 * Build and run:  cc -O3 -march=native -fopenmp scripts/allreduce_floor.c -o /tmp/floor
 *                 OMP_NUM_THREADS=2 /tmp/floor
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Anonymous memory, huge pages advised as cce's buffers are. */
static uint8_t *fresh(size_t n) {
    void *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    madvise(p, n, MADV_HUGEPAGE);
    return p;
}

int main(void) {
    enum { RANKS = 8 };
    const size_t bytes = (size_t)64 << 21; /* 64 Mi bf16 per rank */
    for (int rep = 0; rep < 3; rep++) {
        uint8_t *in[RANKS], *out[RANKS];
        for (int r = 0; r < RANKS; r++) {
            in[r] = fresh(bytes);
            out[r] = fresh(bytes);
            if (!in[r] || !out[r]) return 1;
            for (size_t i = 0; i < bytes; i += 4096) in[r][i] = (uint8_t)(r + i); /* made, not timed */
        }
        double t0 = now();
        for (int r = 0; r < RANKS; r++) {
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < bytes; i += 4096) out[r][i] = 1;
        }
        double t1 = now();
        uint64_t x = 0;
        for (int r = 0; r < RANKS; r++) {
            const uint64_t *a = (const uint64_t *)in[r], *b = (const uint64_t *)out[r];
#pragma omp parallel for reduction(^ : x) schedule(static)
            for (size_t i = 0; i < bytes / 8; i++) x ^= a[i] ^ b[i];
        }
        double t2 = now();
        printf("zero a fresh 1 GiB %.3f s   read 2 GiB %.3f s   (%llx)\n", t1 - t0, t2 - t1,
               (unsigned long long)x);
        for (int r = 0; r < RANKS; r++) {
            munmap(in[r], bytes);
            munmap(out[r], bytes);
        }
    }
    return 0;
}
