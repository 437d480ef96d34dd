/*
 * The C library against the study, from C: every exported encoder and helper against the
 * shared vector table (crates/cce-format/tests/data/encoder-vectors.txt, the one the Rust
 * tests read), the study's worked examples 9.1-9.3 end to end (build, the descriptor bytes,
 * run over this program's buffers, the results against values computed here), and the error
 * paths with their codes and messages.
 *
 * Usage: test_cce VECTOR_TABLE. Prints one line per section; exits 0 when every check holds.
 * Built by scripts/c-test with -std=c99 -Wall -Wextra -Werror, linked statically and
 * dynamically, and run under valgrind.
 */
#include "cce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static int checks;

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        checks++;                                                                               \
        if (!(cond)) {                                                                          \
            failures++;                                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
        }                                                                                       \
    } while (0)

/* ---- little-endian words and bf16 / fp8 arithmetic done here, independently ---- */

static uint32_t word_at(const uint8_t *b, size_t i) {
    return (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
           (uint32_t)b[4 * i + 3] << 24;
}

static float f32_of_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of_f32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bf16_to_f32(uint16_t h) { return f32_of_bits((uint32_t)h << 16); }

/* Round to nearest, ties to even, from binary32 to bfloat16 (finite inputs). */
static uint16_t f32_to_bf16_rne(float f) {
    uint32_t u = bits_of_f32(f);
    uint32_t lsb = (u >> 16) & 1;
    return (uint16_t)((u + 0x7FFF + lsb) >> 16);
}

static uint16_t get16(const uint8_t *b, size_t i) { return (uint16_t)(b[2 * i] | b[2 * i + 1] << 8); }

static void put16(uint8_t *b, size_t i, uint16_t v) {
    b[2 * i] = (uint8_t)v;
    b[2 * i + 1] = (uint8_t)(v >> 8);
}

/* A bf16 test value, different per source and per element: (k*37 + 11*s) mod 97, centred and
 * scaled into [-3, 3], rounded to bf16. */
static uint16_t sample(int s, size_t k) {
    int v = (int)((k * 37 + 11 * (size_t)s) % 97) - 48;
    return f32_to_bf16_rne((float)v / 16.0f + (float)s / 64.0f);
}

/* ---- the vector table ---- */

#define MAX_ARGS 12

struct row {
    int line;
    char function[64];
    int nargs;
    char names[MAX_ARGS][24];
    uint64_t values[MAX_ARGS];
    char expected[160];
};

static uint32_t arg(const struct row *r, const char *name) {
    for (int i = 0; i < r->nargs; i++)
        if (strcmp(r->names[i], name) == 0) return (uint32_t)r->values[i];
    fprintf(stderr, "line %d: %s has no argument %s\n", r->line, r->function, name);
    exit(2);
}

static uint64_t arg64(const struct row *r, const char *name) {
    for (int i = 0; i < r->nargs; i++)
        if (strcmp(r->names[i], name) == 0) return r->values[i];
    fprintf(stderr, "line %d: %s has no argument %s\n", r->line, r->function, name);
    exit(2);
}

/* Checks a status-returning lookup against the row: a value, or "! message" with `code`. */
static void check_lookup(const struct row *r, cce_status st, uint64_t got, cce_status code) {
    if (r->expected[0] == '!') {
        const char *want = r->expected + 1;
        while (*want == ' ') want++;
        CHECK(st == code, "line %d: %s: status %d, expected %d", r->line, r->function, (int)st, (int)code);
        CHECK(strcmp(cce_last_error(), want) == 0, "line %d: %s: message '%s', expected '%s'", r->line,
              r->function, cce_last_error(), want);
    } else {
        uint64_t want = strtoull(r->expected, NULL, 0);
        CHECK(st == CCE_OK, "line %d: %s: status %d (%s)", r->line, r->function, (int)st, cce_last_error());
        CHECK(got == want, "line %d: %s: %llu, expected %llu", r->line, r->function, (unsigned long long)got,
              (unsigned long long)want);
    }
}

/* Checks a builder's words against the row's hex words. */
static void check_words(const struct row *r, const uint32_t *words, int n) {
    char copy[160];
    strcpy(copy, r->expected);
    int i = 0;
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " "), i++) {
        uint32_t want = (uint32_t)strtoul(tok, NULL, 16);
        CHECK(i < n && words[i] == want, "line %d: %s: W%d = 0x%08X, expected 0x%08X", r->line, r->function, i,
              i < n ? words[i] : 0, want);
    }
    CHECK(i == n, "line %d: %s: %d words expected, the builder gives %d", r->line, r->function, i, n);
}

static void check_descriptor(const struct row *r, cce_status st, const uint8_t *d) {
    uint32_t w[4];
    for (int i = 0; i < 4; i++) w[i] = word_at(d, i);
    CHECK(st == CCE_OK, "line %d: %s: status %d", r->line, r->function, (int)st);
    check_words(r, w, 4);
}

static int run_row(const struct row *r) {
    const char *f = r->function;
    uint8_t d[16];
    uint32_t w, v32 = 0;
    uint64_t v64 = 0;
    cce_status st;
    if (strcmp(f, "al_sdma_m2s_build_fma_meta_ctrl") == 0) {
        w = al_sdma_m2s_build_fma_meta_ctrl(arg(r, "sub"), arg(r, "in_dt"), arg(r, "scale_dt"), arg(r, "accum_dt"),
                                            arg(r, "f5"), arg(r, "f6"), arg(r, "f4"));
        check_words(r, &w, 1);
    } else if (strcmp(f, "al_sdma_m2s_build_min_max_meta_ctrl") == 0) {
        w = al_sdma_m2s_build_min_max_meta_ctrl(arg(r, "sub"), arg(r, "const_dt"), arg(r, "in_dt"), arg(r, "out_dt"),
                                                arg(r, "accum_dt"), arg(r, "notif"), arg(r, "wrbar"),
                                                arg(r, "use_const"), arg(r, "last"));
        check_words(r, &w, 1);
    } else if (strcmp(f, "al_sdma_m2s_build_add_meta_ctrl") == 0) {
        w = al_sdma_m2s_build_add_meta_ctrl(arg(r, "sub"), arg(r, "out_dt"), arg(r, "accum_dt"), arg(r, "last"),
                                            arg(r, "wrbar"), arg(r, "f"));
        check_words(r, &w, 1);
    } else if (strcmp(f, "al_sdma_m2s_build_gradient_meta_ctrl") == 0) {
        w = al_sdma_m2s_build_gradient_meta_ctrl(arg(r, "sub"), arg(r, "in_dt"), arg(r, "scale_dt"),
                                                 arg(r, "accum_dt"), arg(r, "wrbar"), arg(r, "f"), arg(r, "last"));
        check_words(r, &w, 1);
    } else if (strcmp(f, "al_sdma_m2s_build_cce_ext_meta_ctrl") == 0) {
        w = al_sdma_m2s_build_cce_ext_meta_ctrl(arg(r, "sub"), arg(r, "mid_dt"), arg(r, "accum_dt"));
        check_words(r, &w, 1);
    } else if (strcmp(f, "al_sdma_m2s_build_replication_meta_ctrl") == 0) {
        w = al_sdma_m2s_build_replication_meta_ctrl(arg(r, "mode"), arg(r, "count"));
        check_words(r, &w, 1);
    } else if (strcmp(f, "al_sdma_m2s_build_fma_descriptor") == 0) {
        st = al_sdma_m2s_build_fma_descriptor(d, arg(r, "meta_idx"), arg(r, "a_sel"), arg(r, "b_sel"),
                                              arg(r, "c_sel"), f32_of_bits(arg(r, "scale")), arg(r, "sema"),
                                              arg(r, "a8"), arg(r, "wb"), arg(r, "sub"), arg(r, "last"));
        check_descriptor(r, st, d);
    } else if (strcmp(f, "al_sdma_m2s_build_min_max_descriptor") == 0) {
        st = al_sdma_m2s_build_min_max_descriptor(d, arg(r, "meta_idx"), arg(r, "constant"), arg(r, "length"),
                                                  arg(r, "use_const"), arg(r, "const_dt"), arg(r, "wb"));
        check_descriptor(r, st, d);
    } else if (strcmp(f, "al_sdma_m2s_build_seed_init_descriptor") == 0) {
        st = al_sdma_m2s_build_seed_init_descriptor(d, arg(r, "seed_en"));
        check_descriptor(r, st, d);
    } else if (strcmp(f, "al_sdma_m2s_build_replication_descriptor") == 0) {
        st = al_sdma_m2s_build_replication_descriptor(d, arg(r, "meta_idx"), arg(r, "wb"), arg(r, "mode"),
                                                      arg(r, "count"), arg(r, "more"), arg(r, "ext_meta"));
        check_descriptor(r, st, d);
    } else if (strcmp(f, "al_sdma_m2s_build_gradient_descriptor") == 0) {
        st = al_sdma_m2s_build_gradient_descriptor(d, arg(r, "meta_idx"), arg(r, "wb"), arg(r, "mode"),
                                                   arg(r, "length"), arg(r, "more"), arg(r, "header"));
        check_descriptor(r, st, d);
    } else if (strcmp(f, "kbin_cce_op_to_sdma_cce_op") == 0) {
        st = kbin_cce_op_to_sdma_cce_op(arg(r, "op"), &v32);
        check_lookup(r, st, v32, CCE_ERR_UNSUPPORTED_OP);
    } else if (strcmp(f, "kbin_dtype_to_sdma_dtype") == 0) {
        st = kbin_dtype_to_sdma_dtype(arg(r, "dtype"), &v32);
        check_lookup(r, st, v32, CCE_ERR_UNSUPPORTED_DTYPE);
    } else if (strcmp(f, "kbin_get_dtype_size") == 0) {
        check_lookup(r, CCE_OK, kbin_get_dtype_size(arg(r, "dtype")), CCE_OK);
    } else if (strcmp(f, "sdma_data_type_size") == 0) {
        st = cce_sdma_data_type_size(arg(r, "sdma_dtype"), &v32);
        check_lookup(r, st, v32, CCE_ERR_UNSUPPORTED_DTYPE);
    } else if (strcmp(f, "encd_get_cce_reduce_packet_size") == 0) {
        st = encd_get_cce_reduce_packet_size(arg(r, "priority_class"), arg(r, "prio_pkt_size"),
                                             arg64(r, "elem_count"), arg(r, "sdma_dtype"), &v64);
        check_lookup(r, st, v64, CCE_ERR_RUNTIME_ASSERT);
    } else if (strcmp(f, "has_valid_dma_cce_inout_dtype_nc_v1") == 0) {
        bool ok = has_valid_dma_cce_inout_dtype_nc_v1(arg(r, "compute_op") != 0, (int32_t)arg(r, "in_dt"),
                                                      (int32_t)arg(r, "out_dt"));
        check_lookup(r, CCE_OK, ok ? 1 : 0, CCE_OK);
    } else if (strcmp(f, "aws_hal_get_sdma_max_cce_elements") == 0) {
        st = aws_hal_get_sdma_max_cce_elements(arg(r, "arch"), &v32);
        check_lookup(r, st, v32, CCE_ERR_RUNTIME_ASSERT);
    } else {
        fprintf(stderr, "line %d: no C function for %s\n", r->line, f);
        return 0;
    }
    return 1;
}

static void vector_table(const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    char line[512];
    int line_no = 0, rows = 0, before = failures;
    while (fgets(line, sizeof line, fp)) {
        line_no++;
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 0 || line[0] == '#') continue;
        char *arrow = strstr(line, "=>");
        if (!arrow) {
            fprintf(stderr, "line %d: no =>\n", line_no);
            exit(2);
        }
        *arrow = 0;
        struct row r;
        memset(&r, 0, sizeof r);
        r.line = line_no;
        const char *exp = arrow + 2;
        while (*exp == ' ') exp++;
        snprintf(r.expected, sizeof r.expected, "%s", exp);
        char *tok = strtok(line, " ");
        snprintf(r.function, sizeof r.function, "%s", tok);
        while ((tok = strtok(NULL, " ")) != NULL && r.nargs < MAX_ARGS) {
            char *eq = strchr(tok, '=');
            if (!eq) {
                fprintf(stderr, "line %d: %s is not name=value\n", line_no, tok);
                exit(2);
            }
            *eq = 0;
            snprintf(r.names[r.nargs], sizeof r.names[0], "%s", tok);
            r.values[r.nargs] = strtoull(eq + 1, NULL, 0);
            r.nargs++;
        }
        if (!run_row(&r)) failures++;
        rows++;
    }
    fclose(fp);
    CHECK(rows >= 90, "only %d rows read from %s", rows, path);
    printf("vector table: %d rows, %d failed\n", rows, failures - before);
}

/* ---- the study's worked examples, end to end ---- */

#define ELEMS 1024

static const uint64_t SRC_ADDR[3] = {0x10000000, 0x20000000, 0x30000000};
static const uint64_t DST_ADDR = 0xD0000000;

/* The tx descriptor `i` of `rings`, as words. */
static void tx_words(const cce_rings *rings, size_t i, uint32_t w[4]) {
    size_t len = 0;
    const uint8_t *tx = cce_rings_tx(rings, &len);
    CHECK(tx && (i + 1) * 16 <= len, "tx descriptor %zu missing (%zu bytes)", i, len);
    for (int k = 0; k < 4; k++) w[k] = (tx && (i + 1) * 16 <= len) ? word_at(tx + 16 * i, (size_t)k) : 0;
}

static void fill_sources(uint8_t src[3][2 * ELEMS], int n) {
    for (int s = 0; s < n; s++)
        for (size_t k = 0; k < ELEMS; k++) put16(src[s], k, sample(s, k));
}

/* Runs the rings' dump over the sources and a destination; returns the run's status. */
static cce_status run_over(const cce_rings *rings, uint8_t src[3][2 * ELEMS], int n, uint8_t *dst, size_t dst_len,
                           cce_run_report *report) {
    cce_region regions[4];
    for (int s = 0; s < n; s++) regions[s] = (cce_region){SRC_ADDR[s], src[s], 2 * ELEMS};
    regions[n] = (cce_region){DST_ADDR, dst, dst_len};
    size_t len = 0;
    const uint8_t *dump = cce_rings_dump(rings, &len);
    return cce_run(dump, len, regions, (size_t)n + 1, 2, report);
}

static void example_9_1(void) {
    int before = failures;
    cce_build_request req = cce_build_request_default();
    req.op = CCE_OP_ADD; /* in bf16 (6), accum fp32 (10), out bf16: the defaults */
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 3;
    req.dsts = &DST_ADDR;
    req.num_dsts = 1;
    cce_rings *rings = NULL;
    cce_status st = cce_build(&req, &rings);
    CHECK(st == CCE_OK && rings, "9.1 build: %d %s", (int)st, cce_last_error());
    if (!rings) return;
    cce_rings_info info;
    CHECK(cce_rings_get_info(rings, &info) == CCE_OK, "9.1 info");
    CHECK(info.packets == 1 && info.tx_descriptors == 3 && info.rx_descriptors == 1,
          "9.1: %llu packets, %u tx, %u rx", (unsigned long long)info.packets, info.tx_descriptors,
          info.rx_descriptors);
    /* BD[0], BD[1]: add_meta_ctrl(out bf16, accum fp32, last 0); BD[2]: last set (bit 7). */
    for (size_t i = 0; i < 3; i++) {
        uint32_t w[4];
        tx_words(rings, i, w);
        uint32_t mc = al_sdma_m2s_build_add_meta_ctrl(0, 6, 10, i == 2, 0, 0);
        CHECK(w[1] == mc, "9.1 BD[%zu] meta-ctrl 0x%08X, expected 0x%08X", i, w[1], mc);
        /* By hand, study 2.6: 0x2000000 + out bf16 (6 << 12) + accum fp32 (10 << 16), + bit 7 last. */
        CHECK(w[1] == (i == 2 ? 0x020A6080u : 0x020A6000u), "9.1 BD[%zu] meta-ctrl 0x%08X by hand", i, w[1]);
        CHECK(w[2] == (uint32_t)SRC_ADDR[i], "9.1 BD[%zu] source 0x%08X", i, w[2]);
    }
    /* Run it over this program's memory; dst = bf16((fp32)s0 + (fp32)s1 + (fp32)s2). */
    static uint8_t src[3][2 * ELEMS];
    static uint8_t dst[2 * ELEMS], via_reduce[2 * ELEMS];
    fill_sources(src, 3);
    cce_run_report report;
    st = run_over(rings, src, 3, dst, sizeof dst, &report);
    CHECK(st == CCE_OK, "9.1 run: %d %s", (int)st, cce_last_error());
    CHECK(report.queues == 1 && report.faulted == 0 && report.packets == 1, "9.1 report");
    cce_rings_free(rings);

    cce_reduce_request rr = cce_reduce_request_default();
    const uint8_t *srcs[3] = {src[0], src[1], src[2]};
    uint8_t *outs[1] = {via_reduce};
    st = cce_reduce(&rr, srcs, 3, 2 * ELEMS, outs, 1, sizeof via_reduce);
    CHECK(st == CCE_OK, "9.1 reduce: %d %s", (int)st, cce_last_error());

    int wrong = 0;
    for (size_t k = 0; k < ELEMS; k++) {
        float acc = bf16_to_f32(get16(src[0], k));
        acc = acc + bf16_to_f32(get16(src[1], k));
        acc = acc + bf16_to_f32(get16(src[2], k));
        uint16_t want = f32_to_bf16_rne(acc);
        wrong += get16(dst, k) != want;
        wrong += get16(via_reduce, k) != want;
    }
    CHECK(wrong == 0, "9.1: %d elements differ from bf16((fp32)s0 + s1 + s2)", wrong);
    printf("study 9.1 (3-source bf16 ADD, fp32 accumulate): %s\n", failures == before ? "ok" : "FAILED");
}

static void example_9_2(void) {
    int before = failures;
    const float scales[2] = {0.5f, 0.5f};
    cce_build_request req = cce_build_request_default();
    req.op = CCE_OP_FMA;
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 2;
    req.dsts = &DST_ADDR;
    req.num_dsts = 1;
    req.scales = scales;
    req.num_scales = 2;
    cce_rings *rings = NULL;
    cce_status st = cce_build(&req, &rings);
    CHECK(st == CCE_OK && rings, "9.2 build: %d %s", (int)st, cce_last_error());
    if (!rings) return;
    /* BD order: FMA descriptor, data, FMA descriptor, data. Each FMA descriptor: W3 =
     * 0x3F000000 (0.5f), W2 selectors a=1 b=2 c=0, as al_sdma_m2s_build_fma_descriptor
     * makes them; the data descriptors carry the FMA meta-control word, f4 on the last. */
    for (size_t s = 0; s < 2; s++) {
        uint32_t w[4], d[4];
        uint8_t built[16];
        tx_words(rings, 2 * s, w);
        CHECK(al_sdma_m2s_build_fma_descriptor(built, (uint32_t)s, CCE_FMA_INPUT, CCE_FMA_SCALE, CCE_FMA_STORED,
                                               0.5f, 0, 0, 0, 1, 0) == CCE_OK,
              "9.2 builder");
        for (int k = 0; k < 4; k++) d[k] = word_at(built, (size_t)k);
        CHECK(memcmp(w, d, sizeof w) == 0, "9.2 FMA BD[%zu] %08X %08X %08X %08X", s, w[0], w[1], w[2], w[3]);
        CHECK(w[3] == 0x3F000000 && w[2] == 0x09000000, "9.2 BD[%zu] scale / selectors", s);
        CHECK(w[0] == (0x00800000u | (uint32_t)s << 24) && w[1] == 0x02100001, "9.2 BD[%zu] W0 / W1", s);
        tx_words(rings, 2 * s + 1, w);
        uint32_t mc = al_sdma_m2s_build_fma_meta_ctrl(1, 6, 10, 10, 0, 0, s == 1);
        CHECK(w[1] == mc, "9.2 data BD[%zu] meta-ctrl 0x%08X, expected 0x%08X", s, w[1], mc);
        /* By hand: 0x2100000 + accum (10 << 16) + scale (10 << 12) + in (6 << 8) + sub 1, + f4 (bit 7). */
        CHECK(w[1] == (s == 1 ? 0x021AA681u : 0x021AA601u), "9.2 data BD[%zu] meta-ctrl 0x%08X by hand", s, w[1]);
    }
    static uint8_t src[3][2 * ELEMS];
    static uint8_t dst[2 * ELEMS], via_reduce[2 * ELEMS];
    fill_sources(src, 2);
    st = run_over(rings, src, 2, dst, sizeof dst, NULL);
    CHECK(st == CCE_OK, "9.2 run: %d %s", (int)st, cce_last_error());
    cce_rings_free(rings);

    cce_reduce_request rr = cce_reduce_request_default();
    rr.op = CCE_OP_FMA;
    rr.scales = scales;
    rr.num_scales = 2;
    const uint8_t *srcs[2] = {src[0], src[1]};
    uint8_t *outs[1] = {via_reduce};
    st = cce_reduce(&rr, srcs, 2, 2 * ELEMS, outs, 1, sizeof via_reduce);
    CHECK(st == CCE_OK, "9.2 reduce: %d %s", (int)st, cce_last_error());
    int wrong = 0;
    for (size_t k = 0; k < ELEMS; k++) {
        /* acc = s0 * 0.5 + 0; acc = s1 * 0.5 + acc (the halving is exact). */
        float acc = bf16_to_f32(get16(src[0], k)) * 0.5f;
        acc = bf16_to_f32(get16(src[1], k)) * 0.5f + acc;
        uint16_t want = f32_to_bf16_rne(acc);
        wrong += get16(dst, k) != want;
        wrong += get16(via_reduce, k) != want;
    }
    CHECK(wrong == 0, "9.2: %d elements differ from bf16(0.5 s0 + 0.5 s1)", wrong);
    printf("study 9.2 (weighted average FMA, dst = 0.5 s0 + 0.5 s1): %s\n", failures == before ? "ok" : "FAILED");
}

static void example_9_3(void) {
    int before = failures;
    const uint64_t header = 0x58000000, out_addr = 0x60000000;
    /* The rank's EXT combo: ADD x 3 accumulated in fp32, rounded stochastically to the fp32 mid
     * dtype and compressed by GCE into e5m2 codes at DST_ADDR (the codec is MODEL). */
    cce_build_request req = cce_build_request_default();
    req.op = CCE_OP_ADD;
    req.out_dtype = 10; /* fp32: the mid dtype GCE compresses */
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 3;
    req.dsts = &DST_ADDR;
    req.num_dsts = 1;
    req.rounding = CCE_ROUND_SR;
    req.seed = 0x93;
    req.header = (int64_t)header;
    cce_rings *rings = NULL;
    cce_status st = cce_build(&req, &rings);
    CHECK(st == CCE_OK && rings, "9.3 build: %d %s", (int)st, cce_last_error());
    if (!rings) return;
    /* [ seed_init | 3 ADD data BDs, last on the final | GCE compress | replication tagged EXT ],
     * chained by the 0x40000000 more-bit. */
    uint32_t w[4], d[4];
    uint8_t built[16];
    tx_words(rings, 0, w);
    CHECK(w[0] == 0x00800000 && w[1] == 0x06000000, "9.3 seed_init %08X %08X", w[0], w[1]);
    CHECK((w[2] & 0x40000000) != 0, "9.3 seed_init without the more-bit");
    for (size_t i = 1; i <= 3; i++) {
        tx_words(rings, i, w);
        CHECK((w[1] & 0x03F00000) == 0x02000000 && (w[1] & 0x80) == (i == 3 ? 0x80u : 0u),
              "9.3 ADD BD[%zu] meta-ctrl 0x%08X", i, w[1]);
    }
    tx_words(rings, 4, w);
    al_sdma_m2s_build_gradient_descriptor(built, 0, 0, 1, ELEMS, 1, (uint32_t)header);
    for (int k = 0; k < 4; k++) d[k] = word_at(built, (size_t)k);
    CHECK(memcmp(w, d, sizeof w) == 0, "9.3 GCE BD %08X %08X %08X %08X", w[0], w[1], w[2], w[3]);
    /* By hand: W1 = mode 1 << 29 | 0x6500001; W2 = more (1 << 30) | length 1024; W3 = the header. */
    CHECK(w[0] == 0x00800000 && w[1] == 0x26500001 && w[2] == 0x40000400 && w[3] == 0x58000000, "9.3 GCE by hand");
    tx_words(rings, 5, w);
    uint32_t ext = al_sdma_m2s_build_cce_ext_meta_ctrl(0, 10, 10);
    CHECK(ext == 0x024AA000, "9.3 EXT word 0x%08X", ext);
    al_sdma_m2s_build_replication_descriptor(built, 0, 0, 1, 1, 0, ext);
    for (int k = 0; k < 4; k++) d[k] = word_at(built, (size_t)k);
    CHECK(memcmp(w, d, sizeof w) == 0, "9.3 replication BD %08X %08X %08X %08X", w[0], w[1], w[2], w[3]);
    /* By hand: W1 = 0xA00000 | count 1 | 0x4A00000 | mode 1 << 29; W3 = the EXT word. */
    CHECK(w[0] == 0x00800000 && w[1] == 0x24A00001 && w[2] == 0 && w[3] == 0x024AA000, "9.3 replication by hand");

    /* Run the combo over the sources, the payload and room for the compression headers. */
    static uint8_t src[3][2 * ELEMS];
    static uint8_t payload[ELEMS], out[2 * ELEMS];
    static uint8_t gce[64 * 1024];
    fill_sources(src, 3);
    cce_region regions[5];
    for (int s = 0; s < 3; s++) regions[s] = (cce_region){SRC_ADDR[s], src[s], 2 * ELEMS};
    regions[3] = (cce_region){DST_ADDR, payload, sizeof payload};
    regions[4] = (cce_region){header, gce, sizeof gce};
    size_t len = 0;
    const uint8_t *dump = cce_rings_dump(rings, &len);
    cce_run_report report;
    st = cce_run(dump, len, regions, 5, 1, &report);
    CHECK(st == CCE_OK, "9.3 run: %d %s", (int)st, cce_last_error());
    CHECK(report.packets == 1 && report.faulted == 0, "9.3 report");
    cce_rings_free(rings);

    /* The peer's leg: GCE decompress of the payload to bf16. */
    req = cce_build_request_default();
    req.op = CCE_OP_GCE_DECOMPRESS;
    req.out_dtype = 6;
    req.elems = ELEMS;
    req.srcs = &DST_ADDR;
    req.num_srcs = 1;
    req.dsts = &out_addr;
    req.num_dsts = 1;
    req.header = (int64_t)header;
    rings = NULL;
    st = cce_build(&req, &rings);
    CHECK(st == CCE_OK && rings, "9.3 decompress build: %d %s", (int)st, cce_last_error());
    if (!rings) return;
    cce_region peer[3] = {{DST_ADDR, payload, sizeof payload}, {header, gce, sizeof gce}, {out_addr, out, sizeof out}};
    dump = cce_rings_dump(rings, &len);
    st = cce_run(dump, len, peer, 3, 1, NULL);
    CHECK(st == CCE_OK, "9.3 decompress run: %d %s", (int)st, cce_last_error());
    cce_rings_free(rings);

    /* e5m2 keeps 2 mantissa bits under a per-block power-of-two scale, and stochastic
     * rounding moves a value by less than one step: each expanded element is within a quarter
     * of the fp32 sum (plus bf16's own rounding), with its sign. */
    int wrong = 0;
    float max_abs = 0;
    for (size_t k = 0; k < ELEMS; k++) {
        float acc = bf16_to_f32(get16(src[0], k));
        acc = acc + bf16_to_f32(get16(src[1], k));
        acc = acc + bf16_to_f32(get16(src[2], k));
        max_abs = fmaxf(max_abs, fabsf(acc));
    }
    for (size_t k = 0; k < ELEMS; k++) {
        float acc = bf16_to_f32(get16(src[0], k));
        acc = acc + bf16_to_f32(get16(src[1], k));
        acc = acc + bf16_to_f32(get16(src[2], k));
        float got = bf16_to_f32(get16(out, k));
        wrong += !(fabsf(got - acc) <= 0.26f * fabsf(acc) + 1e-6f * max_abs);
    }
    CHECK(wrong == 0, "9.3: %d expanded elements are not within a quarter of the fp32 sum", wrong);
    printf("study 9.3 (EXT combo: seed_init, 3-source ADD, GCE compress; the peer's decompress): %s\n",
           failures == before ? "ok" : "FAILED");
}

/* ---- error paths: each code with its message, and nothing written ---- */

static void error_paths(void) {
    int before = failures;
    uint32_t v = 7;

    /* Bad dtypes. */
    CHECK(kbin_dtype_to_sdma_dtype(0, &v) == CCE_ERR_UNSUPPORTED_DTYPE && v == 7, "kbin dtype 0");
    CHECK(strcmp(cce_last_error(), "Unsupported data type!: 0") == 0, "message: %s", cce_last_error());
    cce_build_request req = cce_build_request_default();
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 2;
    req.dsts = &DST_ADDR;
    req.num_dsts = 1;
    req.in_dtype = 16;
    cce_rings *rings = NULL;
    CHECK(cce_build(&req, &rings) == CCE_ERR_UNSUPPORTED_DTYPE && rings == NULL, "build in_dtype 16");
    CHECK(strcmp(cce_last_error(), "in_dtype: 16 is not an SDMA dtype (0..=15)") == 0, "message: %s",
          cce_last_error());

    /* FMA without cce_info: the runtime's assert at vring.c:0x3B8. */
    req.in_dtype = 6;
    req.op = CCE_OP_FMA;
    req.no_cce_info = true;
    CHECK(cce_build(&req, &rings) == CCE_ERR_RUNTIME_ASSERT && rings == NULL, "FMA without cce_info");
    CHECK(strncmp(cce_last_error(), "cce_info != NULL (vring.c:0x3B8)", 32) == 0, "message: %s", cce_last_error());

    /* fp32r packet size: sdma_data_type_size[fp32r] is 0 (line 0x1204). */
    uint64_t size = 99;
    CHECK(encd_get_cce_reduce_packet_size(0, 65536, 10, 11, &size) == CCE_ERR_RUNTIME_ASSERT && size == 99,
          "fp32r packet size");
    CHECK(strstr(cce_last_error(), "fp32r") != NULL, "message: %s", cce_last_error());

    /* Unsupported op. */
    CHECK(kbin_cce_op_to_sdma_cce_op(5, &v) == CCE_ERR_UNSUPPORTED_OP && v == 7, "kbin op 5");
    CHECK(strcmp(cce_last_error(), "Unsupported CCE Op! 5") == 0, "message: %s", cce_last_error());

    /* NULL pointers. */
    CHECK(al_sdma_m2s_build_seed_init_descriptor(NULL, 1) == CCE_ERR_NULL, "NULL dst");
    CHECK(strcmp(cce_last_error(), "dst is NULL") == 0, "message: %s", cce_last_error());
    CHECK(kbin_dtype_to_sdma_dtype(1, NULL) == CCE_ERR_NULL, "NULL out");
    CHECK(cce_build(NULL, &rings) == CCE_ERR_NULL, "NULL request");
    cce_rings_free(NULL);
    CHECK(cce_rings_tx(NULL, NULL) == NULL, "NULL handle");

    /* Replication on arch 2: "CCE replication not supported for v1/v2 archs". */
    const uint64_t two_dsts[2] = {0xD0000000, 0xE0000000};
    req = cce_build_request_default();
    req.arch = 2;
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 2;
    req.dsts = two_dsts;
    req.num_dsts = 2;
    CHECK(cce_build(&req, &rings) == CCE_ERR_RUNTIME_ASSERT && rings == NULL, "replication on arch 2");
    CHECK(strcmp(cce_last_error(), "CCE replication not supported for v1/v2 archs") == 0, "message: %s",
          cce_last_error());

    /* A bad selector and a bad rounding are bad input. */
    req = cce_build_request_default();
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 1;
    req.dsts = &DST_ADDR;
    req.num_dsts = 1;
    req.selectors[0] = 3;
    CHECK(cce_build(&req, &rings) == CCE_ERR_INVALID && rings == NULL, "selector 3");
    req.selectors[0] = CCE_FMA_INPUT;
    req.rounding = 9;
    CHECK(cce_build(&req, &rings) == CCE_ERR_INVALID && rings == NULL, "rounding 9");

    /* A dump that is not a dump touches no region. */
    uint8_t junk[64], region[32];
    memset(junk, 0xAB, sizeof junk);
    memset(region, 0x5A, sizeof region);
    cce_region r = {0x1000, region, sizeof region};
    CHECK(cce_run(junk, sizeof junk, &r, 1, 1, NULL) == CCE_ERR_INVALID, "junk dump: %s", cce_last_error());
    int touched = 0;
    for (size_t k = 0; k < sizeof region; k++) touched |= region[k] != 0x5A;
    CHECK(!touched, "a refused run wrote a region");

    /* A run that faults: the sources are not in any region. */
    req = cce_build_request_default();
    req.elems = ELEMS;
    req.srcs = SRC_ADDR;
    req.num_srcs = 2;
    req.dsts = &DST_ADDR;
    req.num_dsts = 1;
    CHECK(cce_build(&req, &rings) == CCE_OK, "build: %s", cce_last_error());
    static uint8_t dst[2 * ELEMS];
    cce_region only_dst = {DST_ADDR, dst, sizeof dst};
    size_t len = 0;
    const uint8_t *dump = cce_rings_dump(rings, &len);
    cce_run_report report;
    CHECK(cce_run(dump, len, &only_dst, 1, 1, &report) == CCE_ERR_FAILED, "unmapped sources");
    CHECK(strstr(cce_last_error(), "queue") != NULL, "fault message: %s", cce_last_error());
    CHECK(report.faulted == 1, "faulted queues: %u", report.faulted);
    cce_rings_free(rings);

    /* A reduce whose output is the wrong size writes nothing. */
    static uint8_t src[2][2 * ELEMS];
    static uint8_t out[2 * ELEMS - 2];
    memset(out, 0x5A, sizeof out);
    cce_reduce_request rr = cce_reduce_request_default();
    const uint8_t *srcs[2] = {src[0], src[1]};
    uint8_t *outs[1] = {out};
    CHECK(cce_reduce(&rr, srcs, 2, 2 * ELEMS, outs, 1, sizeof out) == CCE_ERR_INVALID, "short output");
    CHECK(strstr(cce_last_error(), "expected 2048") != NULL, "message: %s", cce_last_error());
    touched = 0;
    for (size_t k = 0; k < sizeof out; k++) touched |= out[k] != 0x5A;
    CHECK(!touched, "a refused reduce wrote its output");

    printf("error paths: %s\n", failures == before ? "ok" : "FAILED");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTOR_TABLE\n", argv[0]);
        return 2;
    }
    printf("libcce %s\n", cce_version());
    vector_table(argv[1]);
    example_9_1();
    example_9_2();
    example_9_3();
    error_paths();
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
