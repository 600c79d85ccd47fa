#include "q8file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "codes.h"
#include "crc32c.h"
#include "layout.h"
#include "op.h"
#include "scale16.h"
#include "zsection.h"

#define SECTION_ENTRY_SIZE 32
#define MAX_NAME 4096
#define MAX_SECTIONS 16

/* TF_IO_F16: a graph input or output exchanged as float16 while the graph
 * computes in float32 (a float16 model, src/passes/fp16.c); TF_SCALE16
 * (version 7): the scales stored in 16 bits (scale16.h) */
enum { TF_CONST = 1, TF_QPARAMS = 2, TF_IO_F16 = 4, TF_BOUND = 8, TF_SCALE16 = 16 };

/* The attribute that carries a branch node's scope (src/core/control.h). */
#define SCOPE_ATTR "_scope"

/* Version 4 stores counts, integers and strings compactly (varints,
 * bytes.h); versions 2 and 3 as u32 counts, i64 integers and u32-length
 * strings. `c` below: the compact forms. */
static bool put_count(q8_wbuf *b, bool c, uint64_t n) {
    return c ? q8_wbuf_uv(b, n) : q8_wbuf_u32(b, (uint32_t)n);
}
static bool put_int(q8_wbuf *b, bool c, int64_t v) {
    return c ? q8_wbuf_sv(b, v) : q8_wbuf_i64(b, v);
}
static bool put_text(q8_wbuf *b, bool c, const char *s) {
    return c ? q8_wbuf_vstr(b, s) : q8_wbuf_str(b, s);
}
static uint64_t get_count(q8_rbuf *r, bool c) { return c ? q8_rbuf_uv(r) : q8_rbuf_u32(r); }
static int64_t get_int(q8_rbuf *r, bool c) { return c ? q8_rbuf_sv(r) : q8_rbuf_i64(r); }
static char *get_text(q8_rbuf *r, bool c, size_t max) {
    return c ? q8_rbuf_vstr(r, max) : q8_rbuf_str(r, max);
}

/* ------------------------------------------------------------------ write */

static size_t bitmask_bytes(int64_t numel) { return (size_t)(numel + 7) / 8; }

/* Count non-zero elements (by bytes, so -0.0f counts as non-zero). */
static int64_t count_nonzero(const uint8_t *d, int64_t numel, size_t es) {
    static const uint8_t zero[16];
    int64_t nnz = 0;
    for (int64_t i = 0; i < numel; i++) nnz += memcmp(d + (size_t)i * es, zero, es) != 0;
    return nnz;
}

/* A weight the CPU kernels read in a layout of their own (layout.h) is
 * stored in it, dense, 64-byte aligned: used in place, packed once here
 * rather than at every load. q8_layout_to_store says which: not where the
 * padding would add more than 1/8 (small QGemm heads), except for depthwise
 * weights, which every kernel reads padded. Sparse enough weights stay
 * bitmask-encoded; the loader lays them out (counted in weights_bytes). */
static bool put_laid_out(q8_wbuf *data, const q8_tensor *t, q8_layout l, uint64_t *off,
                         uint64_t *size) {
    q8_wshape ws;
    bool ok = q8_layout_shape(t, &ws);
    Q8_ASSERT(ok);
    size_t bytes = q8_layout_bytes(l, ws);
    if (!q8_wbuf_align(data, Q8_FILE_ALIGN)) return false;
    *off = data->len;
    *size = bytes;
    if (!q8_wbuf_zeros(data, bytes)) return false;
    if (t->layout == l) memcpy(data->p + *off, t->data, bytes);
    else q8_layout_pack(l, t->data, ws, (int8_t *)data->p + *off);
    return true;
}

/* An int32 or int64 element of t as int64. */
static int64_t int_elem(const q8_tensor *t, int64_t i) {
    return t->dtype == Q8_I32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

/* Bytes of t's elements as zigzag varints (version 4's Q8_ENC_VARINT), or
 * SIZE_MAX when t is not int32/int64 or not a constant stored plain. */
static size_t varint_bytes(const q8_tensor *t, int64_t numel) {
    if ((t->dtype != Q8_I32 && t->dtype != Q8_I64) || t->layout != Q8_LAYOUT_PLAIN)
        return SIZE_MAX;
    size_t n = 0;
    for (int64_t i = 0; i < numel; i++) {
        int64_t v = int_elem(t, i);
        uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
        do n++; while (z >>= 7);
    }
    return n;
}

/* Integer constants (int32 biases, int64 shapes) as varints when that is
 * smaller than dense and bitmask: about half the bytes, and no alignment
 * (they are expanded at load, like bitmask data). */
static bool put_varints(q8_wbuf *data, const q8_tensor *t, int64_t numel, size_t bytes,
                        uint64_t *off, uint64_t *size) {
    *off = data->len;
    *size = bytes;
    bool ok = true;
    for (int64_t i = 0; ok && i < numel; i++) ok = q8_wbuf_sv(data, int_elem(t, i));
    return ok;
}

/* Version 8: where the bitmask form would be stored (a constant expanded at
 * load anyway), its dense bytes deflated instead when that is smaller:
 * QLut's per-channel tables, runs of equal values (Selfie: 11.7 -> 5.3
 * KB); with q8_file_options.deflate_all, dense ones too. Sets *enc,
 * *off, *size; false if not smaller than `than` bytes, or if deflating
 * ran out of memory (the other form is written then). Out of memory
 * appending to data: false, and data's oom flag fails the whole encode. */
static bool put_deflated(q8_wbuf *data, const q8_tensor *t, size_t than, uint8_t *enc,
                         uint64_t *off, uint64_t *size) {
    q8_wbuf z = {0};
    bool smaller = q8_zdata_deflate(t->data, q8_tensor_nbytes(t), &z) && z.len < than;
    if (smaller) {
        *enc = Q8_ENC_DEFLATE;
        *off = data->len;
        *size = z.len;
        smaller = q8_wbuf_put(data, z.p, z.len);
    }
    q8_wbuf_free(&z);
    return smaller;
}

/* How constants may be deflated: not before version 8; where the bitmask
 * form would be stored; every constant (q8_file_options.deflate_all). */
enum { DEFLATE_NONE, DEFLATE_SPARSE, DEFLATE_ALL };

/* Data stored at any offset in DATA: what is expanded at load, never read
 * in place (varints and zeros since version 4, deflated data since 8,
 * bitmask data since 9: its 64-byte alignment cost pruned Selfie 1 KB). */
static bool stored_unaligned(uint8_t enc, uint32_t version) {
    return enc == Q8_ENC_VARINT || enc == Q8_ENC_ZEROS ||
           (enc == Q8_ENC_DEFLATE && version >= 8) || (enc == Q8_ENC_BITMASK && version >= 9);
}

/* Alignment of a constant's dense data inside DATA (docs/format.md): 64
 * bytes from 64 bytes on; below that 8, and since version 9 the element's
 * size (Selfie's 71 scalar scales and zero points: 382 bytes of padding
 * at 8). Data expanded at load: none (stored_unaligned). */
static size_t data_align(uint8_t enc, q8_dtype dt, size_t stored, uint32_t version) {
    if (stored_unaligned(enc, version)) return 1;
    if (stored >= Q8_FILE_ALIGN) return Q8_FILE_ALIGN;
    size_t es = q8_dtype_size(dt);
    return version >= 9 && es >= 1 && es <= 8 ? es : 8;
}

/* What the file's version (and the writer's options) let it store. */
typedef struct store_rules {
    uint32_t version;
    bool compact; /* version 4: varints, zeros */
    int deflate;  /* DEFLATE_* */
} store_rules;

static bool put_tensor_data(q8_wbuf *data, const q8_tensor *t, q8_layout want,
                            const store_rules *r, uint8_t *enc, uint8_t *layout, uint64_t *off,
                            uint64_t *size) {
    q8_layout as = t->layout != Q8_LAYOUT_PLAIN ? (q8_layout)t->layout : want;
    if (r->version < 10 && as == Q8_LAYOUT_TAPS4) {
        /* taps4 is version 10's: an older file gets the weight plain */
        q8_tensor plain = *t;
        void *tmp;
        if (q8_tensor_plain(t, (const void **)&plain.data, &tmp, NULL) != Q8_OK) return false;
        plain.layout = Q8_LAYOUT_PLAIN;
        bool ok = put_tensor_data(data, &plain, Q8_LAYOUT_PLAIN, r, enc, layout, off, size);
        q8_aligned_free(tmp);
        return ok;
    }
    const bool compact = r->compact;
    const int deflate = r->deflate;
    int64_t numel = q8_tensor_numel(t);
    size_t es = q8_dtype_size(t->dtype), dense = (size_t)numel * es;
    *layout = Q8_LAYOUT_PLAIN;
    if (t->layout != Q8_LAYOUT_PLAIN) want = (q8_layout)t->layout; /* read from a .q8 */
    int64_t nnz = numel >= 64 && t->layout == Q8_LAYOUT_PLAIN ? count_nonzero(t->data, numel, es)
                                                              : numel;
    size_t sparse = bitmask_bytes(numel) + (size_t)nnz * es;
    if (compact && nnz == 0 && numel >= 64 && t->layout == Q8_LAYOUT_PLAIN) {
        /* all zero (a zero-filled ConstantOfShape, a channel pad): no
         * bytes at all, where a bitmask would take numel / 8 */
        *enc = Q8_ENC_ZEROS;
        *off = data->len;
        *size = 0;
        return true;
    }
    size_t vb = compact ? varint_bytes(t, numel) : SIZE_MAX;
    if (vb < dense && vb < sparse) {
        *enc = Q8_ENC_VARINT;
        return put_varints(data, t, numel, vb, off, size);
    }
    /* a weight read from a .q8 in a kernel layout stays in it */
    if (deflate == DEFLATE_ALL && numel >= 64 && t->layout == Q8_LAYOUT_PLAIN &&
        put_deflated(data, t, sparse < dense ? sparse : dense, enc, off, size))
        return true;
    if (want != Q8_LAYOUT_PLAIN && sparse >= dense) {
        *enc = Q8_ENC_DENSE;
        *layout = (uint8_t)want;
        return put_laid_out(data, t, want, off, size);
    }
    if (deflate == DEFLATE_SPARSE && sparse < dense && put_deflated(data, t, sparse, enc, off, size))
        return true;
    if (!q8_wbuf_align(data, data_align(sparse < dense ? Q8_ENC_BITMASK : Q8_ENC_DENSE,
                                        t->dtype, sparse < dense ? sparse : dense, r->version)))
        return false;
    *off = data->len;
    if (sparse < dense) {
        *enc = Q8_ENC_BITMASK;
        size_t mb = bitmask_bytes(numel);
        size_t at = data->len;
        if (!q8_wbuf_zeros(data, mb)) return false;
        const uint8_t *d = t->data;
        static const uint8_t zero[16];
        for (int64_t i = 0; i < numel; i++) {
            const uint8_t *e = d + (size_t)i * es;
            if (memcmp(e, zero, es) == 0) continue;
            data->p[at + (size_t)i / 8] |= (uint8_t)(1u << (i % 8));
            if (!q8_wbuf_put(data, e, es)) return false;
        }
        *size = sparse;
    } else {
        *enc = Q8_ENC_DENSE;
        if (!q8_wbuf_put(data, t->data, dense)) return false;
        *size = dense;
    }
    return true;
}

static bool put_attr(q8_wbuf *b, bool c, const q8_attr *a) {
    bool ok = put_text(b, c, a->name) && q8_wbuf_u8(b, q8_code_of_attr(a->type));
    switch (a->type) {
    case Q8_ATTR_FLOAT: return ok && q8_wbuf_f32(b, a->f);
    case Q8_ATTR_INT: return ok && put_int(b, c, a->i);
    case Q8_ATTR_STRING: return ok && put_text(b, c, a->s ? a->s : "");
    case Q8_ATTR_FLOATS:
        return ok && put_count(b, c, (uint64_t)a->n) &&
               q8_wbuf_put(b, a->floats, sizeof(float) * (size_t)a->n);
    case Q8_ATTR_INTS:
        if (!c)
            return ok && q8_wbuf_u32(b, (uint32_t)a->n) &&
                   q8_wbuf_put(b, a->ints, sizeof(int64_t) * (size_t)a->n);
        ok = ok && q8_wbuf_uv(b, (uint64_t)a->n);
        for (int i = 0; ok && i < a->n; i++) ok = q8_wbuf_sv(b, a->ints[i]);
        return ok;
    case Q8_ATTR_STRINGS:
        ok = ok && put_count(b, c, (uint64_t)a->n);
        for (int i = 0; ok && i < a->n; i++) ok = put_text(b, c, a->strings[i]);
        return ok;
    case Q8_ATTR_TENSOR: {
        const q8_tensor *t = a->t;
        ok = ok && q8_wbuf_u8(b, q8_code_of_dtype(t->dtype)) && q8_wbuf_u8(b, (uint8_t)t->ndim);
        for (int i = 0; ok && i < t->ndim; i++) ok = put_int(b, c, t->dims[i]);
        size_t nb = q8_tensor_nbytes(t);
        return ok && (c ? q8_wbuf_uv(b, nb) : q8_wbuf_u64(b, nb)) && q8_wbuf_put(b, t->data, nb);
    }
    case Q8_ATTR_GRAPH: return false;
    }
    return false;
}

/* New indices for the tensors that nodes or the graph's inputs/outputs use:
 * the rest (values folded away, weights replaced by their int8 copies) are
 * not written. map[old] = new or -1; returns the count. */
static int live_tensors(const q8_graph *g, int *map) {
    for (int i = 0; i < g->n_tensors; i++) map[i] = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) map[n->inputs[k]] = 0;
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) map[n->outputs[k]] = 0;
    }
    for (int i = 0; i < g->n_inputs; i++) map[g->inputs[i]] = 0;
    for (int i = 0; i < g->n_outputs; i++) map[g->outputs[i]] = 0;
    for (int i = 0; i < g->n_bound; i++) /* kept for the check at run time */
        if (g->tensors[g->bound[i]]->data) map[g->bound[i]] = 0;
    int k = 0;
    for (int i = 0; i < g->n_tensors; i++)
        if (map[i] == 0) map[i] = k++;
    return k;
}

static int32_t remap(const int *map, int t) { return t < 0 ? -1 : map[t]; }

/* Version 4: every distinct attribute (name, type and value) is stored once,
 * in a table before the tensors; a node lists table indices. idx gets, for
 * each node in order, the indices of its attributes (its scope last). */
static bool attr_table(const q8_graph *g, q8_wbuf *tab, uint32_t *count, int *idx) {
    q8_wbuf one = {0};
    size_t *at = NULL, *len = NULL;
    uint32_t n = 0, cap = 0;
    bool ok = true;
    for (int i = 0, o = 0; ok && i < g->n_nodes; i++) {
        const q8_node *nd = g->nodes[i];
        for (int k = 0; ok && k < nd->n_attrs + (nd->scope ? 1 : 0); k++) {
            q8_attr sa = {.name = (char *)SCOPE_ATTR, .type = Q8_ATTR_INT, .i = nd->scope};
            one.len = 0;
            ok = put_attr(&one, true, k < nd->n_attrs ? &nd->attrs[k] : &sa);
            uint32_t j = 0;
            while (ok && j < n && (len[j] != one.len || memcmp(tab->p + at[j], one.p, one.len)))
                j++;
            if (ok && j == n) {
                if (n == cap) {
                    cap = cap ? 2 * cap : 64;
                    size_t *na = realloc(at, sizeof *at * cap);
                    if (na) at = na;
                    size_t *nl = na ? realloc(len, sizeof *len * cap) : NULL;
                    if (nl) len = nl;
                    ok = na && nl;
                }
                if (ok) {
                    at[n] = tab->len;
                    len[n++] = one.len;
                    ok = q8_wbuf_put(tab, one.p, one.len);
                }
            }
            idx[o++] = (int)j;
        }
    }
    q8_wbuf_free(&one);
    free(at);
    free(len);
    *count = n;
    return ok;
}

static bool put_tensor(q8_wbuf *gb, bool c, const q8_tensor *t, const char *prev, uint8_t flags,
                       uint8_t enc, uint8_t layout, uint64_t off, uint64_t size) {
    int ndim = t->shape_known ? t->ndim : 0;
    bool ok = (c ? q8_wbuf_fstr(gb, prev, t->name) : q8_wbuf_str(gb, t->name)) &&
              q8_wbuf_u8(gb, q8_code_of_dtype(t->dtype)) && q8_wbuf_u8(gb, (uint8_t)ndim) &&
              q8_wbuf_u8(gb, flags);
    /* version 4: the encoding and layout of constants only */
    if (!c || (flags & TF_CONST)) ok = ok && q8_wbuf_u8(gb, enc) && q8_wbuf_u8(gb, layout);
    for (int d = 0; ok && d < ndim; d++) ok = put_int(gb, c, t->dims[d]);
    if (ok && (flags & TF_QPARAMS)) {
        /* version 4: the scale count follows from the axis */
        ok = c ? q8_wbuf_sv(gb, t->q.axis)
               : q8_wbuf_i32(gb, t->q.axis) && q8_wbuf_u32(gb, (uint32_t)t->q.n);
        uint32_t base = 0;
        if (flags & TF_SCALE16) { /* version 7: a base exponent, 2 bytes a scale */
            ok = ok && q8_scale16_fits(t->q.scale, t->q.n, &base) && q8_wbuf_uv(gb, base);
            for (int i = 0; ok && i < t->q.n; i++)
                ok = q8_wbuf_u16(gb, q8_scale16_pack(t->q.scale[i], base));
        } else {
            ok = ok && q8_wbuf_put(gb, t->q.scale, sizeof(float) * (size_t)t->q.n);
        }
        ok = ok && (c ? q8_wbuf_sv(gb, t->q.zero_point) : q8_wbuf_i32(gb, t->q.zero_point));
    }
    if (ok && (flags & TF_CONST))
        ok = c ? q8_wbuf_uv(gb, off) && q8_wbuf_uv(gb, size)
               : q8_wbuf_u64(gb, off) && q8_wbuf_u64(gb, size);
    return ok;
}

/* Where a constant's data went in DATA, and the alignment it needs. */
typedef struct placed {
    uint8_t enc, layout;
    uint64_t off, size;
    size_t align;
    uint8_t *z; /* a deflated encoding, kept from the first pass (not made twice) */
} placed;

/* A tensor index of a node (-1: absent); version 4 stores index + 1. */
static bool put_index(q8_wbuf *gb, bool c, int32_t i) {
    return c ? q8_wbuf_uv(gb, (uint64_t)((int64_t)i + 1)) : q8_wbuf_i32(gb, i);
}

static q8_status encode_graph(const q8_graph *g, const int *map, int n_live, uint32_t version,
                              bool deflate_all, q8_wbuf *gb, q8_wbuf *data, q8_error *err) {
    const bool c = version >= 4;
    const store_rules rules = {
        .version = version, .compact = c,
        .deflate = version < 8 ? DEFLATE_NONE : deflate_all ? DEFLATE_ALL : DEFLATE_SPARSE};
    int n_refs = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].type == Q8_ATTR_GRAPH)
                return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                    "subgraph attributes cannot be stored in a .q8 file");
        if (!q8_code_of_op(n->op)) /* a bug: writers store resolved graphs */
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "has no .q8 op code");
        n_refs += n->n_attrs + (n->scope ? 1 : 0);
    }
    for (int i = 0; i < g->n_tensors; i++)
        if (map[i] >= 0 && !q8_code_of_dtype(g->tensors[i]->dtype))
            return q8_fail(err, Q8_ERR_UNSUPPORTED, "tensor '%s': dtype %s cannot be stored in a "
                           ".q8 file", g->tensors[i]->name, q8_dtype_name(g->tensors[i]->dtype));
    /* ops are stored in their canonical form: the file needs no opset */
    if (g->opset != Q8_OPSET_CANONICAL)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "the graph is at opset %d, not in canonical form "
                       "(%d): only canonical graphs can be written", g->opset, Q8_OPSET_CANONICAL);
    int *aidx = malloc(sizeof(int) * ((size_t)n_refs + 1));
    bool ok = aidx != NULL;
    if (ok && c) {
        q8_wbuf tab = {0};
        uint32_t n_tab = 0;
        ok = attr_table(g, &tab, &n_tab, aidx) && q8_wbuf_uv(gb, n_tab) &&
             q8_wbuf_put(gb, tab.p, tab.len);
        q8_wbuf_free(&tab);
    }
    ok = ok && put_count(gb, c, (uint64_t)n_live);
    /* DATA holds the 64-byte aligned constants first, then the 8-, 4- and
     * 2-byte aligned ones, then those stored unaligned (varints, bitmask
     * and deflated data, int8 scalars): each small one between two large
     * ones cost up to 63 bytes of padding (Selfie: 2.7 KB of its 139). The
     * class of each comes from encoding it once into a scratch buffer;
     * deflated ones keep that encoding (deflate at level 9 is the costly
     * part), the others are encoded again where they go. */
    placed *pl = calloc((size_t)g->n_tensors + 1, sizeof *pl);
    q8_wbuf scratch = {0};
    ok = ok && pl;
    for (int i = 0; ok && i < g->n_tensors; i++) {
        const q8_tensor *t = g->tensors[i];
        if (map[i] < 0 || !t->data) continue;
        scratch.len = 0;
        ok = put_tensor_data(&scratch, t, q8_layout_to_store(g, i), &rules, &pl[i].enc,
                             &pl[i].layout, &pl[i].off, &pl[i].size);
        pl[i].align = pl[i].layout != Q8_LAYOUT_PLAIN
                          ? Q8_FILE_ALIGN
                          : data_align(pl[i].enc, t->dtype, pl[i].size, version);
        if (ok && pl[i].enc == Q8_ENC_DEFLATE) {
            pl[i].z = malloc(pl[i].size);
            ok = pl[i].z != NULL;
            if (ok) memcpy(pl[i].z, scratch.p + pl[i].off, pl[i].size);
        }
    }
    q8_wbuf_free(&scratch);
    static const size_t classes[5] = {Q8_FILE_ALIGN, 8, 4, 2, 1};
    for (int k = 0; ok && k < 5; k++)
        for (int i = 0; ok && i < g->n_tensors; i++) {
            const q8_tensor *t = g->tensors[i];
            if (map[i] < 0 || !t->data || pl[i].align != classes[k]) continue;
            if (pl[i].z) {
                pl[i].off = data->len;
                ok = q8_wbuf_put(data, pl[i].z, pl[i].size);
            } else {
                ok = put_tensor_data(data, t, q8_layout_to_store(g, i), &rules, &pl[i].enc,
                                     &pl[i].layout, &pl[i].off, &pl[i].size);
            }
        }
    for (int i = 0; pl && i < g->n_tensors; i++) free(pl[i].z);
    const char *prev = NULL;
    for (int i = 0; ok && i < g->n_tensors; i++) {
        if (map[i] < 0) continue;
        const q8_tensor *t = g->tensors[i];
        bool bound = false;
        for (int b = 0; b < g->n_bound; b++) bound |= g->bound[b] == i;
        uint32_t base;
        bool s16 = version >= 7 && t->q.n > 0 && q8_scale16_fits(t->q.scale, t->q.n, &base);
        uint8_t flags = (t->data ? TF_CONST : 0) | (t->q.n > 0 ? TF_QPARAMS : 0) |
                        (t->io_dtype == Q8_F16 ? TF_IO_F16 : 0) | (bound && t->data ? TF_BOUND : 0) |
                        (s16 ? TF_SCALE16 : 0);
        ok = put_tensor(gb, c, t, prev, flags, pl[i].enc, pl[i].layout, pl[i].off, pl[i].size);
        prev = t->name;
    }
    free(pl);
    ok = ok && put_count(gb, c, (uint64_t)g->n_nodes);
    prev = NULL;
    for (int i = 0, o = 0; ok && i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        ok = (c ? q8_wbuf_fstr(gb, prev, n->name) && q8_wbuf_uv(gb, q8_code_of_op(n->op))
                : q8_wbuf_str(gb, n->name) && q8_wbuf_u16(gb, q8_code_of_op(n->op))) &&
             put_count(gb, c, (uint64_t)n->n_inputs);
        prev = n->name;
        for (int k = 0; ok && k < n->n_inputs; k++) ok = put_index(gb, c, remap(map, n->inputs[k]));
        ok = ok && put_count(gb, c, (uint64_t)n->n_outputs);
        for (int k = 0; ok && k < n->n_outputs; k++)
            ok = put_index(gb, c, remap(map, n->outputs[k]));
        /* a branch node's scope travels as one more attribute, _scope */
        int na = n->n_attrs + (n->scope ? 1 : 0);
        ok = ok && put_count(gb, c, (uint64_t)na);
        for (int k = 0; ok && k < na; k++, o++) {
            q8_attr sa = {.name = (char *)SCOPE_ATTR, .type = Q8_ATTR_INT, .i = n->scope};
            ok = c ? q8_wbuf_uv(gb, (uint64_t)aidx[o])
                   : put_attr(gb, false, k < n->n_attrs ? &n->attrs[k] : &sa);
        }
    }
    free(aidx);
    ok = ok && put_count(gb, c, (uint64_t)g->n_inputs);
    for (int i = 0; ok && i < g->n_inputs; i++)
        ok = c ? q8_wbuf_uv(gb, (uint64_t)remap(map, g->inputs[i]))
               : q8_wbuf_i32(gb, remap(map, g->inputs[i]));
    ok = ok && put_count(gb, c, (uint64_t)g->n_outputs);
    for (int i = 0; ok && i < g->n_outputs; i++)
        ok = c ? q8_wbuf_uv(gb, (uint64_t)remap(map, g->outputs[i]))
               : q8_wbuf_i32(gb, remap(map, g->outputs[i]));
    return ok ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory encoding the graph");
}

/* Version 4: keys front-coded (the layer.<node>.* keys share long
 * prefixes), counts and integers as varints. */
static bool encode_meta(const q8_meta *m, bool c, q8_wbuf *b) {
    int n = m ? m->n : 0;
    bool ok = put_count(b, c, (uint64_t)n);
    for (int i = 0; ok && i < n; i++) {
        const q8_meta_entry *e = &m->e[i];
        ok = (c ? q8_wbuf_fstr(b, i ? m->e[i - 1].key : NULL, e->key) : q8_wbuf_str(b, e->key)) &&
             q8_wbuf_u8(b, (uint8_t)e->type);
        if (e->type == Q8_META_STR) ok = ok && put_text(b, c, e->s);
        else if (e->type == Q8_META_INT) ok = ok && put_int(b, c, e->i);
        else ok = ok && q8_wbuf_f64(b, e->f);
    }
    return ok;
}

/* Where DATA starts: on a page in version 3; in version 4 only when the
 * gap costs at most 1/64 of DATA (a small model's file would grow by up to
 * 4 KiB, 4% of the MNIST ViT, for pages nothing else would share). */
static size_t data_start(size_t at, uint32_t version, size_t data_len) {
    if (version == 3 || data_len >= (size_t)Q8_FILE_DATA_ALIGN * 64)
        return q8_align_up(at, Q8_FILE_DATA_ALIGN);
    return at;
}

static q8_status encode_file(const q8_graph *g, const q8_meta *meta, uint32_t version,
                             const q8_file_options *o, uint8_t **out, size_t *out_len,
                             q8_error *err);

q8_status q8_file_encode(const q8_graph *g, const q8_meta *meta, uint8_t **out, size_t *out_len,
                         q8_error *err) {
    return encode_file(g, meta, Q8_FILE_VERSION, NULL, out, out_len, err);
}

q8_status q8_file_encode_opts(const q8_graph *g, const q8_meta *meta, const q8_file_options *o,
                              uint8_t **out, size_t *out_len, q8_error *err) {
    return encode_file(g, meta, Q8_FILE_VERSION, o, out, out_len, err);
}

q8_status q8_file_encode_version(const q8_graph *g, const q8_meta *meta, uint32_t version,
                                 uint8_t **out, size_t *out_len, q8_error *err) {
    return encode_file(g, meta, version, NULL, out, out_len, err);
}

static q8_status encode_file(const q8_graph *g, const q8_meta *meta, uint32_t version,
                             const q8_file_options *o, uint8_t **out, size_t *out_len,
                             q8_error *err) {
    if (version < 3 || version > Q8_FILE_VERSION)
        return q8_fail(err, Q8_ERR_ARG, "cannot write .q8 version %u (3 to %d)", version,
                       Q8_FILE_VERSION);
    q8_wbuf sec[3] = {{0}};   /* META, GRAPH, DATA */
    const uint32_t kinds[3] = {Q8_SECTION_META, Q8_SECTION_GRAPH, Q8_SECTION_DATA};
    int *map = malloc(sizeof(int) * ((size_t)g->n_tensors + 1));
    if (!map) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int n_live = live_tensors(g, map);
    q8_status s = encode_graph(g, map, n_live, version, o && o->deflate_all, &sec[1], &sec[2], err);
    if (s == Q8_OK && !encode_meta(meta, version >= 4, &sec[0]))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory encoding the model");
    free(map);
    /* version 5: META and GRAPH deflated where that is smaller */
    uint32_t flags[3] = {0}, inflated[3] = {0};
    for (int i = 0; s == Q8_OK && version >= 5 && i < 2; i++) {
        q8_wbuf z = {0};
        if (!q8_zsection_deflate(sec[i].p, sec[i].len, &z))
            s = q8_fail(err, Q8_ERR_NOMEM, "out of memory encoding the model");
        else if (z.len < sec[i].len && sec[i].len <= Q8_ZSECTION_MAX) {
            flags[i] = Q8_SECTION_DEFLATED;
            inflated[i] = (uint32_t)sec[i].len;
            q8_wbuf_free(&sec[i]);
            sec[i] = z;
            continue;
        }
        q8_wbuf_free(&z);
    }
    const int nsec = 3;
    q8_wbuf f = {0};
    if (s == Q8_OK) {
        size_t table = Q8_FILE_HEADER_SIZE, body = q8_align_up(table + SECTION_ENTRY_SIZE * (size_t)nsec,
                                                                Q8_FILE_ALIGN);
        uint64_t offs[3];
        size_t at = body;
        for (int i = 0; i < nsec; i++) {
            if (kinds[i] == Q8_SECTION_DATA) at = data_start(at, version, sec[i].len);
            offs[i] = at;
            at = q8_align_up(at + sec[i].len, Q8_FILE_ALIGN);
        }
        size_t total = at;
        bool ok = q8_wbuf_put(&f, Q8_FILE_MAGIC, 8) && q8_wbuf_u32(&f, version) &&
                  q8_wbuf_u32(&f, Q8_FILE_HEADER_SIZE) && q8_wbuf_u64(&f, total) &&
                  q8_wbuf_u64(&f, table) && q8_wbuf_u32(&f, (uint32_t)nsec) && q8_wbuf_zeros(&f, 24);
        if (ok) ok = q8_wbuf_u32(&f, q8_crc32c(0, f.p, 60));
        for (int i = 0; ok && i < nsec; i++)
            ok = q8_wbuf_u32(&f, kinds[i]) && q8_wbuf_u32(&f, flags[i]) &&
                 q8_wbuf_u64(&f, offs[i]) && q8_wbuf_u64(&f, sec[i].len) &&
                 q8_wbuf_u32(&f, q8_crc32c(0, sec[i].p, sec[i].len)) &&
                 q8_wbuf_u32(&f, inflated[i]);
        for (int i = 0; ok && i < nsec; i++)
            ok = q8_wbuf_zeros(&f, offs[i] - f.len) && q8_wbuf_put(&f, sec[i].p, sec[i].len);
        ok = ok && q8_wbuf_align(&f, Q8_FILE_ALIGN);
        if (!ok) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory encoding the model");
        else Q8_ASSERT(f.len == total);
    }
    for (int i = 0; i < 3; i++) q8_wbuf_free(&sec[i]);
    if (s != Q8_OK) {
        q8_wbuf_free(&f);
        return s;
    }
    *out = f.p;
    *out_len = f.len;
    return Q8_OK;
}

q8_status q8_file_write(const char *path, const q8_graph *g, const q8_meta *meta,
                        q8_error *err) {
    return q8_file_write_opts(path, g, meta, NULL, err);
}

q8_status q8_file_write_opts(const char *path, const q8_graph *g, const q8_meta *meta,
                             const q8_file_options *o, q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_file_encode_opts(g, meta, o, &buf, &len, err));
    q8_status s = q8_write_file_atomic(path, buf, len, err);
    free(buf);
    return s;
}

/* ------------------------------------------------------------------- read */

bool q8_file_is_q8(const uint8_t *buf, size_t len) {
    return len >= 8 && memcmp(buf, Q8_FILE_MAGIC, 8) == 0;
}

bool q8_file_has_magic(const char *path) {
    uint8_t head[8];
    size_t got;
    return q8_read_head(path, head, 8, &got, NULL) == Q8_OK && got == 8 && q8_file_is_q8(head, 8);
}

typedef struct section {
    const uint8_t *p;
    uint64_t size;
    bool present;
    uint8_t *owned; /* version 5: the inflated bytes (p), freed after parsing */
} section;

static void free_sections(section sec[5]) {
    for (int i = 0; i < 5; i++) free(sec[i].owned);
}

static const char *section_name(uint32_t kind) {
    return kind == Q8_SECTION_META ? "META" : kind == Q8_SECTION_GRAPH ? "GRAPH" : "DATA";
}

#define BAD(...) q8_fail(err, Q8_ERR_FORMAT, __VA_ARGS__)

static q8_status read_sections(const uint8_t *buf, size_t len, section sec[5], uint32_t *ver,
                               q8_error *err) {
    if (len < Q8_FILE_HEADER_SIZE) return BAD("truncated: %zu bytes, a header needs 64", len);
    if (!q8_file_is_q8(buf, len)) return BAD("not a .q8 file (bad magic)");
    q8_rbuf r = q8_rbuf_make(buf + 8, Q8_FILE_HEADER_SIZE - 8);
    uint32_t version = q8_rbuf_u32(&r), hsize = q8_rbuf_u32(&r);
    uint64_t fsize = q8_rbuf_u64(&r), toff = q8_rbuf_u64(&r);
    uint32_t nsec = q8_rbuf_u32(&r);
    uint32_t hcrc;
    memcpy(&hcrc, buf + 60, 4);
    if (q8_crc32c(0, buf, 60) != hcrc) return BAD("header checksum mismatch (corrupt file)");
    if (version < Q8_FILE_VERSION_MIN || version > Q8_FILE_VERSION)
        return version < Q8_FILE_VERSION_MIN
                   ? BAD("a .q8 file of version %u, from an older q8: re-quantize the model with "
                         "this version's `quantize` (it reads versions %d to %d, writes %d)",
                         version, Q8_FILE_VERSION_MIN, Q8_FILE_VERSION, Q8_FILE_VERSION)
                   : BAD("a .q8 file of format version %u, made by a newer q8: this q8 reads "
                         "versions %d to %d (run it with a q8 of that version or later, or "
                         "re-quantize the model with this one)",
                         version, Q8_FILE_VERSION_MIN, Q8_FILE_VERSION);
    *ver = version;
    if (hsize != Q8_FILE_HEADER_SIZE) return BAD("bad header size %u", hsize);
    if (fsize != len)
        return BAD("truncated or padded: the header says %llu bytes, the file has %zu",
                   (unsigned long long)fsize, len);
    if (nsec == 0 || nsec > MAX_SECTIONS) return BAD("bad section count %u", nsec);
    if (toff < Q8_FILE_HEADER_SIZE || toff > len || (len - toff) / SECTION_ENTRY_SIZE < nsec)
        return BAD("section table at %llu runs past the end", (unsigned long long)toff);
    r = q8_rbuf_make(buf + toff, (size_t)nsec * SECTION_ENTRY_SIZE);
    for (uint32_t i = 0; i < nsec; i++) {
        uint32_t kind = q8_rbuf_u32(&r), flags = q8_rbuf_u32(&r);
        uint64_t off = q8_rbuf_u64(&r), size = q8_rbuf_u64(&r);
        uint32_t crc = q8_rbuf_u32(&r), inflated = q8_rbuf_u32(&r);
        if (version < 5) flags = 0; /* written zero before; never read */
        if (kind != Q8_SECTION_META && kind != Q8_SECTION_GRAPH && kind != Q8_SECTION_DATA)
            return BAD("unknown section kind %u", kind);
        if (sec[kind].present) return BAD("section %u appears twice", kind);
        if (flags & ~Q8_SECTION_DEFLATED)
            return BAD("%s section: unknown flags 0x%x", section_name(kind), flags);
        if ((flags & Q8_SECTION_DEFLATED) && kind == Q8_SECTION_DATA)
            return BAD("DATA section: marked deflated, but DATA is used in place");
        if (!(flags & Q8_SECTION_DEFLATED) && version >= 5 && inflated)
            return BAD("%s section: an inflated size (%u) but not deflated", section_name(kind),
                       inflated);
        if (off > len || size > len - off)
            return BAD("section %u (offset %llu, size %llu) runs past the end of the %zu-byte file",
                       kind, (unsigned long long)off, (unsigned long long)size, len);
        if (off % Q8_FILE_ALIGN) return BAD("section %u is not 64-byte aligned", kind);
        if (kind == Q8_SECTION_DATA && version == 3 && off % Q8_FILE_DATA_ALIGN)
            return BAD("DATA section at offset %llu is not page (%d-byte) aligned",
                       (unsigned long long)off, Q8_FILE_DATA_ALIGN);
        if (q8_crc32c(0, buf + off, (size_t)size) != crc)
            return BAD("section %u checksum mismatch (corrupt file)", kind);
        sec[kind] = (section){buf + off, size, true, NULL};
        if (flags & Q8_SECTION_DEFLATED) {
            Q8_TRY(q8_zsection_inflate(section_name(kind), buf + off, (size_t)size, inflated,
                                       &sec[kind].owned, err));
            sec[kind].p = sec[kind].owned;
            sec[kind].size = inflated;
        }
    }
    if (!sec[Q8_SECTION_GRAPH].present || !sec[Q8_SECTION_DATA].present || !sec[Q8_SECTION_META].present)
        return BAD("missing a required section (META, GRAPH, DATA)");
    return Q8_OK;
}

static q8_status read_meta(section s, bool c, q8_meta *m, q8_error *err) {
    q8_rbuf r = q8_rbuf_make(s.p, s.size);
    uint64_t n = get_count(&r, c);
    /* an entry takes at least 5 bytes (3 compact: key, type, value) */
    if (!r.ok || n > q8_rbuf_left(&r) / (c ? 3 : 5)) return BAD("META: bad entry count");
    char *prev = NULL; /* version 4: the key before, which the next one is coded against */
    q8_status st = Q8_OK;
    for (uint32_t i = 0; i < n; i++) {
        char *key = c ? q8_rbuf_fstr(&r, prev, MAX_NAME) : q8_rbuf_str(&r, MAX_NAME);
        uint8_t type = q8_rbuf_u8(&r);
        free(prev);
        prev = NULL;
        if (!key || !r.ok) {
            free(key);
            return BAD("META: entry %u is truncated", i);
        }
        if (type == Q8_META_STR) {
            char *v = get_text(&r, c, 1 << 20);
            st = v ? q8_meta_set_str(m, key, v, err) : BAD("META: entry '%s' is truncated", key);
            free(v);
        } else if (type == Q8_META_INT) {
            int64_t v = get_int(&r, c);
            st = r.ok ? q8_meta_set_int(m, key, v, err) : BAD("META: entry '%s' is truncated", key);
        } else if (type == Q8_META_FLOAT) {
            double v = q8_rbuf_f64(&r);
            st = r.ok ? q8_meta_set_float(m, key, v, err) : BAD("META: entry '%s' is truncated", key);
        } else {
            st = BAD("META: entry '%s' has unknown type %u", key, type);
        }
        prev = key;
        if (st != Q8_OK) break;
    }
    free(prev);
    return st;
}

/* A dtype code of the file, as q8_dtype (Q8_UNDEFINED: none q8 stores). */
static q8_dtype stored_dtype(uint8_t code) {
    q8_dtype t = q8_dtype_of_code(code);
    return t == Q8_STRING ? Q8_UNDEFINED : t;
}

static q8_status read_dims(q8_rbuf *r, bool c, int ndim, int64_t *dims, const char *what,
                           q8_error *err) {
    if (ndim > Q8_MAX_DIMS) return BAD("%s: %d dims (at most %d)", what, ndim, Q8_MAX_DIMS);
    for (int d = 0; d < ndim; d++) dims[d] = get_int(r, c);
    int64_t numel;
    if (!r->ok) return BAD("%s: truncated", what);
    if (!q8_shape_numel(dims, ndim, &numel)) return BAD("%s: negative or overflowing dims", what);
    return Q8_OK;
}

/* Expand bitmask-encoded data into t->data. */
static q8_status expand_bitmask(q8_tensor *t, const uint8_t *src, uint64_t size, q8_error *err) {
    int64_t numel = q8_tensor_numel(t);
    size_t es = q8_dtype_size(t->dtype), mb = bitmask_bytes(numel);
    if (size < mb) return BAD("tensor '%s': sparse data shorter than its mask", t->name);
    uint64_t nnz = 0;
    for (size_t i = 0; i < mb; i++) nnz += (uint64_t)__builtin_popcount(src[i]);
    if (numel % 8 && (src[mb - 1] >> (numel % 8)))
        return BAD("tensor '%s': mask bits set past the last element", t->name);
    if (size != mb + nnz * es)
        return BAD("tensor '%s': sparse data has %llu bytes, its mask says %llu", t->name,
                   (unsigned long long)size, (unsigned long long)(mb + nnz * es));
    Q8_TRY(q8_tensor_alloc_data(t, err));
    const uint8_t *v = src + mb;
    uint8_t *dst = t->data;
    for (int64_t i = 0; i < numel; i++)
        if (src[i / 8] >> (i % 8) & 1) {
            memcpy(dst + (size_t)i * es, v, es);
            v += es;
        }
    return Q8_OK;
}

/* Expand varint-encoded integers (version 4) into t->data: exactly numel
 * values, each within the dtype's range, using all `size` bytes. */
static q8_status expand_varints(q8_tensor *t, const uint8_t *src, uint64_t size, q8_error *err) {
    if (t->dtype != Q8_I32 && t->dtype != Q8_I64)
        return BAD("tensor '%s': varint encoding of a %s tensor (int32 or int64 only)", t->name,
                   q8_dtype_name(t->dtype));
    int64_t numel = q8_tensor_numel(t);
    if ((uint64_t)numel > size) /* each value takes at least one byte */
        return BAD("tensor '%s': %lld values cannot fit in %llu varint bytes", t->name,
                   (long long)numel, (unsigned long long)size);
    Q8_TRY(q8_tensor_alloc_data(t, err));
    q8_rbuf r = q8_rbuf_make(src, (size_t)size);
    for (int64_t i = 0; i < numel; i++) {
        int64_t v = q8_rbuf_sv(&r);
        if (!r.ok) return BAD("tensor '%s': varint %lld is truncated", t->name, (long long)i);
        if (t->dtype == Q8_I32 && (v < INT32_MIN || v > INT32_MAX))
            return BAD("tensor '%s': value %lld out of int32 range", t->name, (long long)v);
        if (t->dtype == Q8_I32) ((int32_t *)t->data)[i] = (int32_t)v;
        else ((int64_t *)t->data)[i] = v;
    }
    if (q8_rbuf_left(&r))
        return BAD("tensor '%s': %zu bytes after its %lld varints", t->name, q8_rbuf_left(&r),
                   (long long)numel);
    return Q8_OK;
}

/* A weight stored in a kernel layout (version 3): int8, dense, 64-byte
 * aligned, of that layout's size, padding zero. */
static q8_status check_layout(const q8_tensor *t, uint32_t version, uint8_t layout, uint8_t enc,
                              uint64_t off, uint64_t size, const uint8_t *p, q8_error *err) {
    q8_wshape ws;
    /* taps4 is version 10's */
    if (layout >= Q8_LAYOUT_COUNT || (layout == Q8_LAYOUT_TAPS4 && version < 10))
        return BAD("tensor '%s': unknown layout %u", t->name, layout);
    if (t->dtype != Q8_I8 || enc != Q8_ENC_DENSE || !q8_layout_shape(t, &ws))
        return BAD("tensor '%s': layout %s needs dense int8 data of at least one element",
                   t->name, q8_layout_name((q8_layout)layout));
    if (off % Q8_FILE_ALIGN)
        return BAD("tensor '%s': %s data at offset %llu is not 64-byte aligned", t->name,
                   q8_layout_name((q8_layout)layout), (unsigned long long)off);
    if (size != q8_layout_bytes((q8_layout)layout, ws))
        return BAD("tensor '%s': %llu data bytes, its shape in layout %s needs %zu", t->name,
                   (unsigned long long)size, q8_layout_name((q8_layout)layout),
                   q8_layout_bytes((q8_layout)layout, ws));
    if (!q8_layout_padding_zero((q8_layout)layout, (const int8_t *)p, ws))
        return BAD("tensor '%s': non-zero padding in layout %s", t->name,
                   q8_layout_name((q8_layout)layout));
    return Q8_OK;
}

static q8_status read_tensor(q8_rbuf *r, q8_graph *g, section data, uint32_t version,
                             uint32_t idx, q8_error *err) {
    const bool c = version >= 4;
    char *name = c ? q8_rbuf_fstr(r, g->n_tensors ? g->tensors[g->n_tensors - 1]->name : NULL,
                                  MAX_NAME)
                   : q8_rbuf_str(r, MAX_NAME);
    uint8_t dt = q8_rbuf_u8(r), ndim = q8_rbuf_u8(r), flags = q8_rbuf_u8(r), enc = 0;
    uint8_t layout = Q8_LAYOUT_PLAIN;
    if (!c || (flags & TF_CONST)) { /* version 4: for constants only */
        enc = q8_rbuf_u8(r);
        if (version >= 3) layout = q8_rbuf_u8(r);
    }
    if (!name || !r->ok) {
        free(name);
        return BAD("GRAPH: tensor %u is truncated", idx);
    }
    bool dup;
    int ti = q8_graph_add_tensor(g, name, &dup);
    free(name);
    if (ti < 0) return dup ? BAD("GRAPH: tensor %u has a duplicate name", idx) : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_tensor *t = g->tensors[ti];
    q8_dtype dtype = stored_dtype(dt);
    if (dtype == Q8_UNDEFINED) return BAD("tensor '%s': invalid dtype %u", t->name, dt);
    if (flags & ~(TF_CONST | TF_QPARAMS | TF_IO_F16 | TF_BOUND | (version >= 7 ? TF_SCALE16 : 0)))
        return BAD("tensor '%s': unknown flags 0x%x", t->name, flags);
    if ((flags & TF_SCALE16) && !(flags & TF_QPARAMS))
        return BAD("tensor '%s': 16-bit scales without quantization parameters", t->name);
    if ((flags & TF_BOUND) && !(flags & TF_CONST))
        return BAD("tensor '%s': a bound input without its value", t->name);
    if (flags & TF_BOUND) {
        int *nb = realloc(g->bound, sizeof(int) * ((size_t)g->n_bound + 1));
        if (!nb) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        g->bound = nb;
        g->bound[g->n_bound++] = ti;
    }
    if ((flags & TF_IO_F16) && (dtype != Q8_F32 || (flags & TF_CONST)))
        return BAD("tensor '%s': exchanged as float16 but not a float32 activation", t->name);
    if (flags & TF_IO_F16) t->io_dtype = Q8_F16;
    int64_t dims[Q8_MAX_DIMS];
    char what[300];
    snprintf(what, sizeof what, "tensor '%s'", t->name);
    Q8_TRY(read_dims(r, c, ndim, dims, what, err));
    q8_tensor_set_shape(t, dtype, dims, ndim);
    if (flags & TF_QPARAMS) {
        int64_t ax = c ? q8_rbuf_sv(r) : q8_rbuf_i32(r);
        if (!r->ok) return BAD("tensor '%s': truncated quantization parameters", t->name);
        if (ax < -1 || ax >= (int64_t)ndim)
            return BAD("tensor '%s': quantization axis %lld out of range", t->name, (long long)ax);
        int32_t axis = (int32_t)ax;
        uint64_t want = axis < 0 ? 1 : (uint64_t)dims[axis];
        /* version 4 stores no count: it follows from the axis */
        uint64_t n = c ? want : q8_rbuf_u32(r);
        uint64_t base = flags & TF_SCALE16 ? q8_rbuf_uv(r) : 0;
        size_t es = flags & TF_SCALE16 ? 2 : sizeof(float);
        if (!r->ok) return BAD("tensor '%s': truncated quantization parameters", t->name);
        if (n != want || n == 0 || n > q8_rbuf_left(r) / es)
            return n != want || n == 0
                       ? BAD("tensor '%s': %llu scales, expected %llu", t->name,
                             (unsigned long long)n, (unsigned long long)want)
                       : BAD("tensor '%s': truncated scales", t->name);
        const uint8_t *sc = q8_rbuf_take(r, es * (size_t)n);
        int64_t zp = c ? q8_rbuf_sv(r) : q8_rbuf_i32(r);
        if (r->ok && (zp < INT32_MIN || zp > INT32_MAX))
            return BAD("tensor '%s': zero point %lld out of range", t->name, (long long)zp);
        if (!r->ok) return BAD("tensor '%s': truncated scales", t->name);
        if (!(t->q.scale = malloc(sizeof(float) * n))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        if (!(flags & TF_SCALE16)) memcpy(t->q.scale, sc, sizeof(float) * n);
        for (uint32_t i = 0; (flags & TF_SCALE16) && i < n; i++) { /* widened once, exactly */
            uint16_t h;
            memcpy(&h, sc + 2 * (size_t)i, 2);
            if (base > 254 || !q8_scale16_unpack(h, (uint32_t)base, &t->q.scale[i]))
                return BAD("tensor '%s': 16-bit scale %u (0x%04x, base exponent %llu) is not a "
                           "finite float", t->name, i, h, (unsigned long long)base);
        }
        for (uint32_t i = 0; i < n; i++)
            if (!(t->q.scale[i] > 0) || t->q.scale[i] == INFINITY)
                return BAD("tensor '%s': scale %u is %g (must be positive and finite)", t->name, i, t->q.scale[i]);
        t->q.n = (int)n;
        t->q.axis = axis;
        t->q.zero_point = (int32_t)zp;
    }
    if (flags & TF_CONST) {
        uint64_t off = c ? q8_rbuf_uv(r) : q8_rbuf_u64(r);
        uint64_t size = c ? q8_rbuf_uv(r) : q8_rbuf_u64(r);
        if (!r->ok) return BAD("tensor '%s': truncated data reference", t->name);
        if (off > data.size || size > data.size - off)
            return BAD("tensor '%s': data (offset %llu, %llu bytes) runs past the %llu-byte data blob",
                       t->name, (unsigned long long)off, (unsigned long long)size,
                       (unsigned long long)data.size);
        size_t align = data_align(enc, t->dtype, (size_t)size, version);
        if (off % align)
            return BAD("tensor '%s': data at offset %llu is not %zu-byte aligned", t->name,
                       (unsigned long long)off, align);
        if (layout != Q8_LAYOUT_PLAIN) {
            Q8_TRY(check_layout(t, version, layout, enc, off, size, data.p + off, err));
            t->data = (void *)(data.p + off); /* used in place, in the kernels' layout */
            t->owns_data = false;
            t->layout = layout;
        } else if (enc == Q8_ENC_DENSE) {
            if (size != q8_tensor_nbytes(t))
                return BAD("tensor '%s': %llu data bytes, its shape needs %zu", t->name,
                           (unsigned long long)size, q8_tensor_nbytes(t));
            t->data = (void *)(data.p + off); /* used in place from the mapping */
            t->owns_data = false;
        } else if (enc == Q8_ENC_BITMASK) {
            Q8_TRY(expand_bitmask(t, data.p + off, size, err));
        } else if (enc == Q8_ENC_VARINT && version >= 4) {
            Q8_TRY(expand_varints(t, data.p + off, size, err));
        } else if (enc == Q8_ENC_DEFLATE && version >= 8) {
            Q8_TRY(q8_tensor_alloc_data(t, err));
            Q8_TRY(q8_zdata_inflate(t->name, data.p + off, (size_t)size, t->data,
                                    q8_tensor_nbytes(t), err));
        } else if (enc == Q8_ENC_ZEROS && version >= 4) {
            if (size != 0)
                return BAD("tensor '%s': all zeros, yet %llu data bytes", t->name,
                           (unsigned long long)size);
            Q8_TRY(q8_tensor_alloc_data(t, err)); /* zero-filled */
        } else {
            return BAD("tensor '%s': unknown encoding %u", t->name, enc);
        }
    } else if (enc != 0 || layout != Q8_LAYOUT_PLAIN) {
        return BAD("tensor '%s': an encoding or layout without data", t->name);
    }
    return Q8_OK;
}

/* A failure in an attribute: of node n, or (n NULL) of version 4's table. */
#define ATTR_BAD(...)                                                                    \
    (n ? q8_node_fail(err, Q8_ERR_FORMAT, n, __VA_ARGS__)                                 \
       : BAD("GRAPH: attribute table: " __VA_ARGS__))

static q8_status read_attr(q8_rbuf *r, bool c, q8_node *n, q8_attr *a, q8_error *err) {
    a->name = get_text(r, c, MAX_NAME);
    uint8_t type = q8_rbuf_u8(r);
    if (!a->name || !r->ok) return ATTR_BAD("truncated attribute");
    if (!q8_attr_of_code(type, &a->type) || a->type == Q8_ATTR_GRAPH)
        return ATTR_BAD("attribute '%s' has unknown type %u", a->name, type);
    uint64_t cnt;
    switch (a->type) {
    case Q8_ATTR_FLOAT: a->f = q8_rbuf_f32(r); break;
    case Q8_ATTR_INT: a->i = get_int(r, c); break;
    case Q8_ATTR_STRING:
        if (!(a->s = get_text(r, c, 1 << 20))) r->ok = false;
        break;
    case Q8_ATTR_FLOATS:
    case Q8_ATTR_INTS: {
        cnt = get_count(r, c);
        /* bytes per element: 4 or 8; a compact int takes at least 1 */
        size_t es = a->type == Q8_ATTR_FLOATS ? 4 : 8, least = c && es == 8 ? 1 : es;
        if (!r->ok || cnt > q8_rbuf_left(r) / least) {
            r->ok = false;
            break;
        }
        void *d = malloc(es * (size_t)cnt + 1);
        if (!d) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        if (c && es == 8)
            for (uint64_t i = 0; i < cnt; i++) ((int64_t *)d)[i] = q8_rbuf_sv(r);
        else
            memcpy(d, q8_rbuf_take(r, es * (size_t)cnt), es * (size_t)cnt);
        if (a->type == Q8_ATTR_FLOATS) a->floats = d;
        else a->ints = d;
        a->n = (int)cnt;
        break;
    }
    case Q8_ATTR_STRINGS:
        cnt = get_count(r, c);
        if (!r->ok || cnt > q8_rbuf_left(r) / (c ? 1 : 4)) {
            r->ok = false;
            break;
        }
        if (!(a->strings = calloc((size_t)cnt + 1, sizeof(char *))))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        for (uint64_t i = 0; i < cnt && r->ok; i++, a->n++)
            if (!(a->strings[i] = get_text(r, c, 1 << 20))) r->ok = false;
        break;
    case Q8_ATTR_TENSOR: {
        uint8_t dt = q8_rbuf_u8(r), nd = q8_rbuf_u8(r);
        q8_dtype adt = stored_dtype(dt);
        if (!r->ok || adt == Q8_UNDEFINED) return ATTR_BAD("attribute '%s': bad tensor", a->name);
        int64_t dims[Q8_MAX_DIMS];
        Q8_TRY(read_dims(r, c, nd, dims, a->name, err));
        uint64_t nb = c ? q8_rbuf_uv(r) : q8_rbuf_u64(r);
        if (!(a->t = calloc(1, sizeof *a->t)) || !(a->t->name = q8_strdup(a->name)))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        a->t->producer = -1;
        a->t->q.axis = -1;
        q8_tensor_set_shape(a->t, adt, dims, nd);
        if (!r->ok || nb != q8_tensor_nbytes(a->t) || nb > q8_rbuf_left(r))
            return ATTR_BAD("attribute '%s': tensor data size mismatch", a->name);
        Q8_TRY(q8_tensor_alloc_data(a->t, err));
        memcpy(a->t->data, q8_rbuf_take(r, nb), nb);
        break;
    }
    case Q8_ATTR_GRAPH: break; /* refused above */
    }
    if (!r->ok) return ATTR_BAD("attribute '%s' is truncated", a->name);
    return Q8_OK;
}

/* Version 4's attribute table: where each entry starts, every one checked
 * once here (a node's copy is decoded again from its entry). */
typedef struct attr_tab {
    const uint8_t **at;
    uint64_t n;
    const uint8_t *end;
} attr_tab;

static q8_status read_attr_table(q8_rbuf *r, attr_tab *tab, q8_error *err) {
    tab->n = q8_rbuf_uv(r);
    tab->end = r->end;
    /* an entry takes at least 3 bytes: name length, type, value */
    if (!r->ok || tab->n > q8_rbuf_left(r) / 3) return BAD("GRAPH: bad attribute table count");
    if (!(tab->at = malloc(sizeof *tab->at * ((size_t)tab->n + 1))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < tab->n; i++) {
        q8_attr a = {0};
        tab->at[i] = r->p;
        q8_status s = read_attr(r, true, NULL, &a, err);
        q8_attr_clear(&a);
        Q8_TRY(s);
    }
    return Q8_OK;
}

/* The _scope attribute becomes n->scope (its range is checked with the
 * scope tree, src/core/control.c). */
static q8_status take_scope(q8_node *n, q8_error *err) {
    for (int k = 0; k < n->n_attrs; k++) {
        q8_attr *a = &n->attrs[k];
        if (strcmp(a->name, SCOPE_ATTR) != 0) continue;
        if (a->type != Q8_ATTR_INT || a->i < 1 || a->i > INT32_MAX || n->scope)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "bad %s attribute", SCOPE_ATTR);
        n->scope = (int)a->i;
        q8_attr_clear(a);
        n->attrs[k--] = n->attrs[--n->n_attrs];
    }
    return Q8_OK;
}

static q8_status read_index_list(q8_rbuf *r, bool c, const q8_graph *g, int **out, int *count,
                                 bool allow_absent, const char *what, q8_error *err) {
    uint64_t n = get_count(r, c);
    if (!r->ok || n > q8_rbuf_left(r) / (c ? 1 : 4) || n > 65536)
        return BAD("GRAPH: bad %s count", what);
    int *v = malloc(sizeof(int) * ((size_t)n + 1));
    if (!v) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        /* version 4: a node's index + 1, 0 for absent; the graph's plain */
        int64_t x = c ? (int64_t)(q8_rbuf_uv(r) & INT64_MAX) - (allow_absent ? 1 : 0)
                      : q8_rbuf_i32(r);
        if (!r->ok || x < (allow_absent ? -1 : 0) || x >= g->n_tensors) {
            free(v);
            return r->ok ? BAD("GRAPH: %s %llu refers to tensor %lld of %d", what,
                               (unsigned long long)i, (long long)x, g->n_tensors)
                         : BAD("GRAPH: %s %llu is truncated", what, (unsigned long long)i);
        }
        v[i] = (int)x;
    }
    *out = v;
    *count = (int)n;
    return Q8_OK;
}

/* A node's attributes: stored in full (versions 2, 3) or as indices into
 * the attribute table (4). */
static q8_status read_node_attrs(q8_rbuf *r, const attr_tab *tab, q8_node *n, q8_error *err) {
    const bool c = tab != NULL;
    uint64_t na = get_count(r, c);
    if (!r->ok || na > q8_rbuf_left(r) / (c ? 1 : 5))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "bad attribute count");
    if (na && !(n->attrs = calloc((size_t)na, sizeof(q8_attr))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (uint64_t k = 0; k < na; k++) {
        n->n_attrs++;
        if (!c) {
            Q8_TRY(read_attr(r, false, n, &n->attrs[k], err));
            continue;
        }
        uint64_t i = q8_rbuf_uv(r);
        if (!r->ok || i >= tab->n)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute %llu: %s", (unsigned long long)k,
                                r->ok ? "not in the attribute table" : "truncated");
        q8_rbuf e = {tab->at[i], tab->end, true};
        Q8_TRY(read_attr(&e, true, n, &n->attrs[k], err));
    }
    return Q8_OK;
}

static q8_status read_node(q8_rbuf *r, const attr_tab *tab, q8_graph *g, uint32_t idx,
                           q8_error *err) {
    const bool c = tab != NULL;
    char *name = c ? q8_rbuf_fstr(r, g->n_nodes ? g->nodes[g->n_nodes - 1]->name : NULL, MAX_NAME)
                   : q8_rbuf_str(r, MAX_NAME);
    uint64_t code = c ? q8_rbuf_uv(r) : q8_rbuf_u16(r);
    if (!name || !r->ok) {
        free(name);
        return BAD("GRAPH: node %u is truncated", idx);
    }
    q8_op_id op = code <= UINT16_MAX ? q8_op_of_code((uint16_t)code) : Q8_OP_NONE;
    if (op == Q8_OP_NONE) {
        q8_status s = BAD("GRAPH: node '%s' has op code %llu, which this q8 does not know (a "
                          "newer q8 wrote it?)", name, (unsigned long long)code);
        free(name);
        return s;
    }
    int ni = q8_graph_add_node(g, name, q8_op_name(op));
    free(name);
    if (ni < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_node *n = g->nodes[ni];
    free(n->domain);
    if (!(n->domain = q8_strdup(q8_op_domain(op)))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    n->op = op;
    q8_status s = read_index_list(r, c, g, &n->inputs, &n->n_inputs, true, "input", err);
    if (s == Q8_OK) s = read_index_list(r, c, g, &n->outputs, &n->n_outputs, true, "output", err);
    if (s != Q8_OK) {
        q8_fail_prefix(err, "node '%s'", n->name);
        return s;
    }
    Q8_TRY(read_node_attrs(r, tab, n, err));
    return take_scope(n, err);
}

static q8_status read_graph(section gs, section data, uint32_t version, q8_graph *g,
                            q8_error *err) {
    const bool c = version >= 4;
    q8_rbuf r = q8_rbuf_make(gs.p, gs.size);
    g->opset = Q8_OPSET_CANONICAL; /* what every file holds */
    attr_tab tab = {0};
    q8_status s = c ? read_attr_table(&r, &tab, err) : Q8_OK;
    uint64_t nt = get_count(&r, c);
    /* a tensor record takes at least 8 bytes (5 compact) */
    if (s == Q8_OK && (!r.ok || nt > q8_rbuf_left(&r) / (c ? 5 : 8)))
        s = BAD("GRAPH: bad tensor count");
    for (uint32_t i = 0; s == Q8_OK && i < nt; i++) s = read_tensor(&r, g, data, version, i, err);
    uint64_t nn = s == Q8_OK ? get_count(&r, c) : 0;
    /* a node record takes at least 12 bytes (6 compact) */
    if (s == Q8_OK && (!r.ok || nn > q8_rbuf_left(&r) / (c ? 6 : 12)))
        s = BAD("GRAPH: bad node count");
    for (uint32_t i = 0; s == Q8_OK && i < nn; i++) s = read_node(&r, c ? &tab : NULL, g, i, err);
    free(tab.at);
    Q8_TRY(s);
    Q8_TRY(read_index_list(&r, c, g, &g->inputs, &g->n_inputs, false, "graph input", err));
    Q8_TRY(read_index_list(&r, c, g, &g->outputs, &g->n_outputs, false, "graph output", err));
    if (q8_rbuf_left(&r) != 0) return BAD("GRAPH: %zu unexpected trailing bytes", q8_rbuf_left(&r));
    if (g->n_outputs == 0) return BAD("GRAPH: no outputs");
    for (int i = 0; i < g->n_inputs; i++)
        if (g->tensors[g->inputs[i]]->data) return BAD("GRAPH: input '%s' is a constant", g->tensors[g->inputs[i]]->name);
    for (int i = 0; i < g->n_tensors; i++) /* float16 exchange only at the boundary */
        if (g->tensors[i]->io_dtype == Q8_F16 && !q8_graph_is_input(g, i) && !q8_graph_is_output(g, i))
            return BAD("tensor '%s': exchanged as float16 but not a graph input or output",
                       g->tensors[i]->name);
    return Q8_OK;
}

q8_status q8_file_parse(const uint8_t *buf, size_t len, q8_graph **out, q8_meta *meta,
                        q8_error *err) {
    *out = NULL;
    section sec[5] = {{0}};
    uint32_t version = 0;
    q8_status rs = read_sections(buf, len, sec, &version, err);
    if (rs != Q8_OK) {
        free_sections(sec);
        return rs;
    }
    q8_meta tmp = {0};
    q8_meta *m = meta ? meta : &tmp;
    q8_status s = read_meta(sec[Q8_SECTION_META], version >= 4, m, err);
    q8_graph *g = NULL;
    if (s == Q8_OK && !(g = q8_graph_new())) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (s == Q8_OK)
        s = read_graph(sec[Q8_SECTION_GRAPH], sec[Q8_SECTION_DATA], version, g, err);
    q8_meta_free(&tmp);
    free_sections(sec); /* everything read from them was copied */
    if (s != Q8_OK) {
        if (meta) q8_meta_free(meta);
        q8_graph_free(g);
        return s;
    }
    *out = g;
    return Q8_OK;
}
