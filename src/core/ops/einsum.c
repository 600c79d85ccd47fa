/* Einsum (see einsum.h): the equation parsed into labels, sizes and
 * strides; the kernel only walks them. */
#include "ops/einsum.h"

#include <string.h>

#include "op.h"

static int letter(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

/* One term ("bij", "...ii") into labels: letters, and "..." as the labels
 * 52 + (ell - k) .. 52 + ell - 1 for its k dims (right-aligned across the
 * inputs). *n: labels written; -1 on a malformed term. */
static int parse_term(const char *s, size_t len, int rank, int ell, int *lab, bool *has_ell) {
    int n = 0, letters = 0;
    *has_ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*has_ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') return -1;
            *has_ell = true;
            i += 2;
        } else if (letter(s[i]) >= 0) {
            letters++;
        } else {
            return -1;
        }
    }
    int k = rank < 0 ? ell : rank - letters; /* dims the ellipsis covers (the output: all) */
    if (rank >= 0 && (k < 0 || (!*has_ell && k != 0) || k > ell)) return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int j = 0; j < k; j++) lab[n++] = 52 + ell - k + j;
            i += 2;
        } else {
            lab[n++] = letter(s[i]);
        }
    }
    return n;
}

static q8_status einsum_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, Q8_EINSUM_MAX_IN, 1, 1, err));
    const char *eq_raw = q8_attr_str(n, "equation", NULL);
    if (!eq_raw) return q8_node_fail(err, Q8_ERR_FORMAT, n, "has no equation");
    char eq[256];
    size_t m = 0;
    for (const char *c = eq_raw; *c; c++)
        if (*c != ' ') {
            if (m + 1 >= sizeof eq)
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "equation longer than 255 characters");
            eq[m++] = *c;
        }
    eq[m] = 0;
    q8_dtype t = Q8_UNDEFINED;
    int ell = 0; /* the most dims any ellipsis covers */
    for (int i = 0; i < n->n_inputs; i++) {
        Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
        const q8_tensor *x = q8_in(g, n, i);
        if (x->dtype != Q8_F32 && x->dtype != Q8_F64)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d is %s: float32 and float64 "
                                "are supported", i, q8_dtype_name(x->dtype));
        if (i && x->dtype != t)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "inputs of different dtypes");
        t = x->dtype;
    }
    char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : m;
    /* the ellipsis width: the largest rank minus letters over the inputs */
    const char *s = eq;
    for (int i = 0; i < n->n_inputs; i++) {
        const char *e = memchr(s, ',', lhs_len - (size_t)(s - eq));
        size_t len = e ? (size_t)(e - s) : lhs_len - (size_t)(s - eq);
        int letters = 0;
        for (size_t j = 0; j < len; j++) letters += letter(s[j]) >= 0;
        int k = q8_in(g, n, i)->ndim - letters;
        if (k > ell) ell = k;
        s = e ? e + 1 : s + len;
    }
    q8_einsum_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = t;
    p->n_in = n->n_inputs;
    int count[Q8_EINSUM_MAX_LABELS] = {0};
    bool seen[Q8_EINSUM_MAX_LABELS] = {false};
    s = eq;
    for (int i = 0; i < n->n_inputs; i++) {
        const char *e = memchr(s, ',', lhs_len - (size_t)(s - eq));
        size_t len = e ? (size_t)(e - s) : lhs_len - (size_t)(s - eq);
        if ((i == n->n_inputs - 1) != (e == NULL))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "equation '%s' has %s terms than the %d "
                                "inputs", eq_raw, e ? "more" : "fewer", n->n_inputs);
        const q8_tensor *x = q8_in(g, n, i);
        int lab[Q8_MAX_DIMS + 64];
        bool he;
        if (len > Q8_MAX_DIMS + 3 || parse_term(s, len, x->ndim, ell, lab, &he) != x->ndim)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "term %d of '%s' does not fit input %d "
                                "of rank %d", i + 1, eq_raw, i, x->ndim);
        int64_t st = 1;
        for (int d = x->ndim - 1; d >= 0; d--) {
            int l = lab[d];
            int64_t sz = x->dims[d];
            bool bcast = l >= 52 && sz == 1; /* a broadcast "..." dim */
            if (!bcast) {
                if (seen[l] && p->size[l] != sz && !(l >= 52 && p->size[l] == 1)) {
                    char name = l >= 52 ? '.' : l < 26 ? (char)('a' + l) : (char)('A' + l - 26);
                    return q8_node_fail(err, Q8_ERR_SHAPE, n, "label '%c' is %lld in one place "
                                        "and %lld in another", name, (long long)p->size[l],
                                        (long long)sz);
                }
                p->size[l] = sz;
                p->stride[i][l] += st;
            } else if (!seen[l]) {
                p->size[l] = 1;
            }
            seen[l] = true;
            count[l]++;
            st *= sz;
        }
        s = e ? e + 1 : s + len;
    }
    /* the output's labels */
    if (arrow) {
        bool he;
        int lab[Q8_MAX_DIMS + 64];
        size_t len = m - lhs_len - 2;
        int no = len > Q8_MAX_DIMS + 3 ? -1 : parse_term(arrow + 2, len, -1, ell, lab, &he);
        if (no < 0 || no > Q8_MAX_DIMS)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "output of '%s' is malformed", eq_raw);
        for (int j = 0; j < no; j++) {
            if (!seen[lab[j]])
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "output label of '%s' is in no input",
                                    eq_raw);
            for (int q = 0; q < j; q++)
                if (lab[q] == lab[j])
                    return q8_node_fail(err, Q8_ERR_FORMAT, n, "output of '%s' repeats a label",
                                        eq_raw);
            p->out[p->n_out++] = lab[j];
        }
    } else {
        for (int l = 52; l < 52 + ell; l++)
            if (seen[l]) p->out[p->n_out++] = l;
        for (int c = 0; c < 52; c++) { /* by character code, as numpy: A-Z, then a-z */
            int l = c < 26 ? 26 + c : c - 26;
            if (count[l] == 1) {
                if (p->n_out == Q8_MAX_DIMS)
                    return q8_node_fail(err, Q8_ERR_SHAPE, n, "more than %d output dims",
                                        Q8_MAX_DIMS);
                p->out[p->n_out++] = l;
            }
        }
    }
    if (arrow) /* numpy refuses to sum "..." dims away: an explicit output must name them */
        for (int l = 52; l < 52 + ell; l++) {
            bool named = false;
            for (int j = 0; j < p->n_out; j++) named = named || p->out[j] == l;
            if (seen[l] && !named && p->size[l] != 1)
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "output of '%s' leaves out the dims "
                                    "'...' stands for", eq_raw);
        }
    bool in_out[Q8_EINSUM_MAX_LABELS] = {false};
    for (int j = 0; j < p->n_out; j++) in_out[p->out[j]] = true;
    for (int l = 0; l < Q8_EINSUM_MAX_LABELS; l++)
        if (seen[l] && !in_out[l]) p->sum[p->n_sum++] = l;
    p->n_labels = Q8_EINSUM_MAX_LABELS;
    /* the work: one multiply-add per input for every combination of labels */
    int64_t work = 1;
    for (int l = 0; l < Q8_EINSUM_MAX_LABELS; l++)
        if (seen[l] && (__builtin_mul_overflow(work, p->size[l] ? p->size[l] : 1, &work) ||
                        work > ((int64_t)1 << 40)))
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "'%s' over these shapes is more than "
                                "2^40 products (q8's Einsum is a plain loop)", eq_raw);
    int64_t dims[Q8_MAX_DIMS];
    for (int j = 0; j < p->n_out; j++) dims[j] = p->size[p->out[j]];
    return q8_set_output(g, n, 0, t, dims, p->n_out, err);
}

const q8_op_schema q8_schema_einsum = {.infer = einsum_infer};
