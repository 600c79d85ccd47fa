#include "planner.h"

#include <string.h>

#include "control.h"
#include "op.h"
#include "ops/concat.h"

/* Time steps: 0 = before the first node (inputs bound), node i runs at
 * step i + 1, n_nodes + 1 = after the run (outputs read). */

typedef struct buf_info {
    int64_t first, last;
    size_t size;
    bool pinned_input;   /* holds a graph input: never overwritten in place */
    int scope;           /* the innermost If branch holding all its writers and readers */
} buf_info;

/* Union-find over tensors whose sets are buffers; rel[x] is x's byte
 * offset in its parent's storage (a Concat's input sits inside its output),
 * so a tensor's offset in its buffer is the sum along its path. */
static int uf_find(int *parent, size_t *rel, int x) {
    int r = x;
    size_t tot = 0;
    while (parent[r] != r) {
        tot += rel[r];
        r = parent[r];
    }
    while (parent[x] != x) { /* compress: each points at the root */
        int nx = parent[x];
        size_t rx = rel[x];
        parent[x] = r;
        rel[x] = tot;
        tot -= rx;
        x = nx;
    }
    return r;
}

/* x's byte offset in its buffer */
static size_t uf_offset(int *parent, size_t *rel, int x) {
    uf_find(parent, rel, x);
    return parent[x] == x ? 0 : rel[x];
}

static bool is_input(const q8_graph *g, int t) {
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t) return true;
    return false;
}

/* The orders the greedy placement tries (the smallest arena is kept; ties
 * go to the earlier order): largest first; largest size x lifetime first;
 * in order of first use; longest lifetime first (larger first on ties).
 * Largest first alone left YOLOv5s's FP32 arena 18% above the most bytes
 * live at once (the longest-lived first: exactly that), and on 42 real
 * models the four together are 1.5% smaller on average, up to 11%, than
 * largest first alone. Best fit instead of first fit changed nothing. */
typedef enum place_order { ORDER_SIZE, ORDER_AREA, ORDER_FIRST, ORDER_SPAN, ORDER_COUNT } place_order;

static int cmp_buf(int x, int y, const buf_info *bi, place_order o) {
    if (o == ORDER_AREA) {
        double ax = (double)bi[x].size * (double)(bi[x].last - bi[x].first + 1);
        double ay = (double)bi[y].size * (double)(bi[y].last - bi[y].first + 1);
        if (ax != ay) return ax < ay ? 1 : -1;
    }
    if (o == ORDER_FIRST && bi[x].first != bi[y].first) return bi[x].first < bi[y].first ? -1 : 1;
    if (o == ORDER_SPAN && bi[x].last - bi[x].first != bi[y].last - bi[y].first)
        return bi[x].last - bi[x].first < bi[y].last - bi[y].first ? 1 : -1;
    if (bi[x].size != bi[y].size) return bi[x].size < bi[y].size ? 1 : -1;
    if (bi[x].first != bi[y].first) return bi[x].first < bi[y].first ? -1 : 1;
    return x - y;
}

typedef struct span {
    size_t start, end;
} span;

static int cmp_span(const void *a, const void *b) {
    size_t x = ((const span *)a)->start, y = ((const span *)b)->start;
    return x < y ? -1 : x > y;
}

/* Insertion sort with a context (qsort_r is not portable); n is small. */
static void sort_ids(int *ids, int n, const buf_info *bi, place_order o) {
    for (int i = 1; i < n; i++) {
        int v = ids[i], j = i - 1;
        while (j >= 0 && cmp_buf(ids[j], v, bi, o) > 0) {
            ids[j + 1] = ids[j];
            j--;
        }
        ids[j + 1] = v;
    }
}

/* Greedy placement of the buffers ids[0..n) in that order: each at the
 * lowest offset that does not collide with an already placed buffer alive
 * at the same time (boff). Returns the arena's size. */
static size_t place(const int *ids, int n, const buf_info *bi, const q8_scopes *sc, span *ov,
                    size_t *boff) {
    size_t peak = 0;
    for (int k = 0; k < n; k++) {
        int b = ids[k];
        size_t size = q8_align_up(bi[b].size, Q8_ALIGN), off = 0;
        /* Placed buffers alive at the same time, by offset; take the first
         * gap that fits. */
        int nov = 0;
        for (int q = 0; q < k; q++) {
            int c = ids[q];
            if (bi[c].last < bi[b].first || bi[c].first > bi[b].last) continue;
            /* the two sides of an If never run together */
            if (sc->n && q8_scope_exclusive(sc, bi[b].scope, bi[c].scope)) continue;
            ov[nov].start = boff[c];
            ov[nov].end = boff[c] + q8_align_up(bi[c].size, Q8_ALIGN);
            nov++;
        }
        qsort(ov, (size_t)nov, sizeof *ov, cmp_span);
        for (int q = 0; q < nov; q++) {
            if (off + size <= ov[q].start) break;
            if (ov[q].end > off) off = ov[q].end;
        }
        boff[b] = off;
        if (off + size > peak) peak = off + size;
    }
    return peak;
}

/* The buffers ids[0..n) placed in each order (ids is reordered); the
 * offsets of the smallest arena go to boff (try: scratch of nboff). */
static size_t place_best(int *ids, int n, const buf_info *bi, const q8_scopes *sc, span *ov,
                         size_t *boff, size_t *try, size_t nboff) {
    size_t peak = SIZE_MAX;
    /* each order is O(n^2): 5,000 buffers take 0.12 s for the four, 20,000
     * 2.5 s; graphs that large (unrolled loops) get largest first only */
    int orders = n <= 8192 ? ORDER_COUNT : 1;
    for (int o = 0; o < orders; o++) {
        sort_ids(ids, n, bi, (place_order)o);
        size_t got = place(ids, n, bi, sc, ov, try);
        if (got < peak) {
            peak = got;
            memcpy(boff, try, sizeof *boff * nboff);
        }
    }
    return peak;
}

size_t q8_plan_place(const size_t *size, const int64_t *first, const int64_t *last, int n,
                     size_t *off) {
    buf_info *bi = calloc((size_t)n + 1, sizeof *bi);
    int *ids = malloc(sizeof(int) * ((size_t)n + 1));
    span *ov = malloc(sizeof(span) * ((size_t)n + 1));
    size_t *try = malloc(sizeof(size_t) * ((size_t)n + 1)), peak = SIZE_MAX;
    if (bi && ids && ov && try) {
        for (int i = 0; i < n; i++) {
            bi[i] = (buf_info){.first = first[i], .last = last[i], .size = size[i]};
            ids[i] = i;
        }
        q8_scopes none = {0};
        peak = place_best(ids, n, bi, &none, ov, off, try, (size_t)n);
    }
    free(bi);
    free(ids);
    free(ov);
    free(try);
    return peak;
}

/* Buffer of root r goes into the buffer of root into, at byte offset at;
 * its lifetime joins that buffer's and it is retired. */
static void merge_into(int *parent, size_t *rel, int *root_buf, buf_info *bi, int r, int into,
                       size_t at) {
    buf_info *from = &bi[root_buf[r]], *to = &bi[root_buf[into]];
    parent[r] = into;
    rel[r] = at;
    if (from->first < to->first) to->first = from->first;
    if (from->last > to->last) to->last = from->last;
    to->pinned_input |= from->pinned_input;
    from->size = 0;
    from->first = -1; /* retired */
    root_buf[r] = -1;
}

/* Whether tensor t is all of its buffer: at offset 0 and as large. */
static bool whole_buffer(const q8_graph *g, int *parent, size_t *rel, const int *root_buf,
                         const buf_info *bi, int t) {
    int b = root_buf[uf_find(parent, rel, t)];
    return b >= 0 && uf_offset(parent, rel, t) == 0 &&
           q8_tensor_nbytes(g->tensors[t]) == bi[b].size;
}

/* A Concat with nothing before its axis (N = 1 along channels: DenseNet's
 * growing feature maps, YOLO's and U-Net's joins) has each input as one
 * contiguous slice of its output: the input's producer writes it there and
 * the copy is skipped (the kernels copy nothing when source and slice are
 * the same bytes). What moves into the output is a whole buffer: an input's
 * own, or one holding a run of consecutive inputs laid out as the output
 * lays them out (an earlier Concat of them: torchvision's DenseNet joins
 * every earlier feature map again at each layer, and each join then holds
 * the one before it). The buffer must hold nothing else (its tensors are
 * then all written before the Concat: views write nothing), hold no graph
 * input, and land 64-byte aligned. Planned before the in-place rule, so
 * that an op overwrites a buffer only once every tensor inside it is dead. */
static void concat_in_place(const q8_graph *g, int *parent, size_t *rel, int *root_buf,
                            buf_info *bi) {
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->op != Q8_OP_CONCAT || !n->params || n->n_outputs < 1 || n->outputs[0] < 0) continue;
        const q8_tensor *yt = g->tensors[n->outputs[0]];
        int axis = ((const q8_concat_params *)n->params)->axis;
        if (yt->data || axis < 0 || axis >= yt->ndim) continue;
        int64_t outer = 1;
        for (int d = 0; d < axis; d++) outer *= yt->dims[d];
        int yr = uf_find(parent, rel, n->outputs[0]);
        if (outer != 1 || root_buf[yr] < 0 || bi[root_buf[yr]].pinned_input) continue;
        size_t at = uf_offset(parent, rel, n->outputs[0]);
        for (int j = 0; j < n->n_inputs;) {
            int t = n->inputs[j];
            if (t < 0 || g->tensors[t]->data || !q8_tensor_nbytes(g->tensors[t])) {
                at += t < 0 ? 0 : q8_tensor_nbytes(g->tensors[t]);
                j++;
                continue;
            }
            int tr = uf_find(parent, rel, t), tb = root_buf[tr];
            /* the run of inputs j..k-1 at offsets 0, 0 + its size, ... in tr */
            int k = j;
            size_t run = 0;
            while (k < n->n_inputs && n->inputs[k] >= 0 && !g->tensors[n->inputs[k]]->data &&
                   uf_find(parent, rel, n->inputs[k]) == tr &&
                   uf_offset(parent, rel, n->inputs[k]) == run && tb >= 0 && run < bi[tb].size)
                run += q8_tensor_nbytes(g->tensors[n->inputs[k++]]);
            if (k > j && tr != yr && run == bi[tb].size && !bi[tb].pinned_input &&
                at % Q8_ALIGN == 0) {
                merge_into(parent, rel, root_buf, bi, tr, yr, at);
            } else {
                k = j + 1;
                run = q8_tensor_nbytes(g->tensors[t]);
            }
            at += run;
            j = k;
        }
    }
}

q8_status q8_plan_build(const q8_graph *g, q8_scratch_fn scratch_bytes, void *ctx, q8_plan *p,
                        q8_error *err) {
    memset(p, 0, sizeof *p);
    int nt = g->n_tensors, nn = g->n_nodes;
    p->n_tensors = nt;
    p->n_nodes = nn;
    int *parent = malloc(sizeof(int) * (size_t)(nt + 1));
    size_t *rel = calloc((size_t)nt + 1, sizeof(size_t));
    int64_t *first = malloc(sizeof(int64_t) * (size_t)(nt + 1));
    int64_t *last = malloc(sizeof(int64_t) * (size_t)(nt + 1));
    bool *live = calloc((size_t)nt + 1, sizeof(bool));
    p->offset = malloc(sizeof(size_t) * (size_t)(nt + 1));
    p->buffer = malloc(sizeof(int) * (size_t)(nt + 1));
    p->scratch_offset = malloc(sizeof(size_t) * (size_t)(nn + 1));
    p->scratch_bytes = calloc((size_t)nn + 1, sizeof(size_t));
    /* buffers: at most one per tensor plus one scratch per node */
    int maxb = nt + nn + 1;
    buf_info *bi = calloc((size_t)maxb, sizeof *bi);
    int *ids = malloc(sizeof(int) * (size_t)maxb);
    size_t *boff = malloc(sizeof(size_t) * (size_t)maxb);
    size_t *boff_try = malloc(sizeof(size_t) * (size_t)maxb);
    int *root_buf = malloc(sizeof(int) * (size_t)(nt + 1));
    span *ov = malloc(sizeof(span) * (size_t)maxb);
    q8_scopes sc = {0};
    q8_status s = Q8_OK;
    if (q8_graph_has_control(g) && (s = q8_scopes_build(g, &sc, err)) != Q8_OK) goto out;
    if (!ov || !parent || !rel || !first || !last || !live || !p->offset || !p->buffer ||
        !p->scratch_offset || !p->scratch_bytes || !bi || !ids || !boff || !boff_try || !root_buf) {
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory planning memory");
        goto out;
    }
    for (int t = 0; t < nt; t++) {
        parent[t] = t;
        first[t] = INT64_MAX;
        last[t] = -1;
        p->offset[t] = Q8_PLAN_NONE;
        p->buffer[t] = -1;
    }
    /* Lifetimes of non-constant tensors. */
    /* Graph inputs live through the whole run: their values are set once
     * and must survive for repeated runs (q8run --bench), so no other
     * tensor may reuse their bytes. */
    for (int i = 0; i < g->n_inputs; i++) {
        int t = g->inputs[i];
        live[t] = true;
        first[t] = 0;
        last[t] = nn + 1;
    }
    for (int i = 0; i < nn; i++) {
        const q8_node *n = g->nodes[i];
        for (int j = 0; j < n->n_inputs; j++) {
            int t = n->inputs[j];
            if (t < 0 || g->tensors[t]->data) continue;
            live[t] = true;
            if (last[t] < i + 1) last[t] = i + 1;
        }
        for (int j = 0; j < n->n_outputs; j++) {
            int t = n->outputs[j];
            if (t < 0) continue;
            live[t] = true;
            if (first[t] > i + 1) first[t] = i + 1;
            if (last[t] < i + 1) last[t] = i + 1;
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int t = g->outputs[i];
        if (g->tensors[t]->data) continue;
        live[t] = true;
        last[t] = nn + 1;
        if (first[t] == INT64_MAX) first[t] = 0;
    }
    /* Views share their source's buffer. */
    for (int i = 0; i < nn; i++) {
        const q8_node *n = g->nodes[i];
        if (n->op == Q8_OP_NONE || !(q8_op_flags(n->op) & Q8_OPF_VIEW)) continue;
        int a = n->inputs[0], b = n->outputs[0];
        if (a < 0 || b < 0 || g->tensors[a]->data) continue;
        parent[uf_find(parent, rel, b)] = uf_find(parent, rel, a);
    }
    /* Buffer lifetimes = union of members'. */
    for (int t = 0; t < nt; t++) root_buf[t] = -1;
    int nb = 0;
    for (int t = 0; t < nt; t++) {
        if (!live[t]) continue;
        int r = uf_find(parent, rel, t);
        if (root_buf[r] < 0) {
            root_buf[r] = nb;
            bi[nb].first = INT64_MAX;
            bi[nb].last = -1;
            bi[nb].size = 0;
            nb++;
        }
        buf_info *b = &bi[root_buf[r]];
        /* first[t] - 1 is its producer's index, unless it is a graph input */
        int ts = sc.n && first[t] >= 1 && first[t] <= nn ? g->nodes[first[t] - 1]->scope : 0;
        if (b->first == INT64_MAX) b->scope = ts;
        else if (sc.n) b->scope = q8_scope_common(&sc, b->scope, ts);
        if (first[t] < b->first) b->first = first[t];
        if (last[t] > b->last) b->last = last[t];
        size_t sz = q8_tensor_nbytes(g->tensors[t]);
        if (sz > b->size) b->size = sz;
        if (is_input(g, t)) b->pinned_input = true;
    }
    if (!sc.n) concat_in_place(g, parent, rel, root_buf, bi);
    /* In place: output 0 takes over an input's buffer when that buffer's
     * life ends at this node: each tensor the whole of its buffer (not a
     * Concat's slice), nothing in the output's buffer written before this
     * node (a later Concat's other slices), and no other input of the node
     * inside the input's buffer at other bytes (a broadcast operand that
     * is a slice of it would be overwritten before it is read). */
    for (int i = 0; i < nn; i++) {
        const q8_node *n = g->nodes[i];
        if (n->op == Q8_OP_NONE || !(q8_op_flags(n->op) & Q8_OPF_INPLACE) || n->n_outputs < 1 ||
            n->outputs[0] < 0)
            continue;
        int o = n->outputs[0];
        const q8_tensor *ot = g->tensors[o];
        int ob = root_buf[uf_find(parent, rel, o)];
        if (!whole_buffer(g, parent, rel, root_buf, bi, o) || bi[ob].first != i + 1) continue;
        for (int j = 0; j < n->n_inputs; j++) {
            int t = n->inputs[j];
            if (t < 0 || g->tensors[t]->data) continue;
            const q8_tensor *it = g->tensors[t];
            int ib = root_buf[uf_find(parent, rel, t)];
            if (ib == ob || bi[ib].pinned_input || bi[ib].last != i + 1) continue;
            if (q8_dtype_size(it->dtype) != q8_dtype_size(ot->dtype) ||
                q8_tensor_numel(it) != q8_tensor_numel(ot) || bi[ib].size != bi[ob].size ||
                !whole_buffer(g, parent, rel, root_buf, bi, t))
                continue;
            bool other = false;
            for (int k = 0; k < n->n_inputs && !other; k++) {
                int u = n->inputs[k];
                other = u >= 0 && !g->tensors[u]->data && root_buf[uf_find(parent, rel, u)] == ib &&
                        !whole_buffer(g, parent, rel, root_buf, bi, u);
            }
            if (other) continue;
            /* merge ob into ib */
            int ro = uf_find(parent, rel, o);
            if (sc.n) bi[ib].scope = q8_scope_common(&sc, bi[ib].scope, bi[ob].scope);
            merge_into(parent, rel, root_buf, bi, ro, uf_find(parent, rel, t),
                       uf_offset(parent, rel, t));
            break;
        }
    }
    /* Scratch buffers live for their node's step only. */
    int first_scratch = nb;
    for (int i = 0; i < nn; i++) {
        size_t sb = scratch_bytes ? scratch_bytes(g, i, ctx) : 0;
        p->scratch_bytes[i] = sb;
        p->scratch_offset[i] = Q8_PLAN_NONE;
        if (!sb) continue;
        bi[nb].first = bi[nb].last = i + 1;
        bi[nb].size = sb;
        bi[nb].scope = g->nodes[i]->scope;
        nb++;
    }
    /* Greedy placement in each order; the smallest arena is kept. */
    int nplace = 0;
    for (int b = 0; b < nb; b++)
        if (bi[b].size && bi[b].first >= 0) ids[nplace++] = b;
    p->arena_bytes = place_best(ids, nplace, bi, &sc, ov, boff, boff_try, (size_t)maxb);
    for (int t = 0; t < nt; t++) {
        if (!live[t]) continue;
        int b = root_buf[uf_find(parent, rel, t)];
        Q8_ASSERT(b >= 0);
        p->buffer[t] = b;
        p->offset[t] = bi[b].size ? boff[b] + uf_offset(parent, rel, t) : 0;
    }
    for (int i = 0, b = first_scratch; i < nn; i++)
        if (p->scratch_bytes[i]) p->scratch_offset[i] = boff[b++];
    p->n_buffers = nb;
    p->first = malloc(sizeof(int64_t) * (size_t)(nb + 1));
    p->last = malloc(sizeof(int64_t) * (size_t)(nb + 1));
    p->size = malloc(sizeof(size_t) * (size_t)(nb + 1));
    if (!p->first || !p->last || !p->size) {
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory planning memory");
        goto out;
    }
    for (int b = 0; b < nb; b++) {
        p->first[b] = bi[b].first;
        p->last[b] = bi[b].last;
        p->size[b] = bi[b].size;
    }
out:
    q8_scopes_free(&sc);
    free(parent);
    free(rel);
    free(first);
    free(last);
    free(live);
    free(bi);
    free(ids);
    free(boff);
    free(boff_try);
    free(root_buf);
    free(ov);
    if (s != Q8_OK) q8_plan_free(p);
    return s;
}

void q8_plan_free(q8_plan *p) {
    free(p->offset);
    free(p->buffer);
    free(p->scratch_offset);
    free(p->scratch_bytes);
    free(p->first);
    free(p->last);
    free(p->size);
    memset(p, 0, sizeof *p);
}
