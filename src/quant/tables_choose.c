/* Q8_SCALAR_TABLES_AUTO (tables_choose.h). */
#include "tables_choose.h"

#include <math.h>
#include <string.h>

#include "output_eval.h"
#include "quantize.h"

static int count_op(const q8_graph *g, const char *op) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += !strcmp(g->nodes[i]->op_type, op);
    return n;
}

/* The "on" graph first; when the other has as many tables, the two are the same and
 * nothing is scored; else the other is built again after the first is
 * scored (one scored graph held at a time). */
q8_status q8_tables_choose(const q8_graph *fp32, const q8_sample_set *s, int max_samples,
                           int n_threads, q8_tables_build_fn build, void *arg, const char *op,
                           double max_loss, q8_tables_choice *out, q8_error *err) {
    *out = (q8_tables_choice){.on = false, .db = {NAN, NAN}};
    q8_graph *on = NULL, *off = NULL;
    Q8_TRY(build(arg, true, &on, err));
    int n_on = count_op(on, op);
    q8_status st = build(arg, false, &off, err);
    if (st == Q8_OK && count_op(off, op) == n_on) {
        q8_graph_free(on);
        q8_graph_free(off);
        return Q8_OK;
    }
    q8_graph_free(off);
    if (st != Q8_OK) {
        q8_graph_free(on);
        return st;
    }
    out->differ = true;
    q8_out_eval e = {0};
    st = q8_out_eval_open(fp32, s, NULL, max_samples, n_threads, Q8_OUT_EVAL_REFS_AUTO, &e, err);
    if (st == Q8_OK) st = q8_out_eval_score(&e, on, &out->db[1], err);
    else q8_graph_free(on);
    if (st == Q8_OK) st = build(arg, false, &off, err);
    if (st == Q8_OK) st = q8_out_eval_score(&e, off, &out->db[0], err);
    out->n_scored = e.n_samples;
    q8_out_eval_close(&e);
    /* no float output to compare (NAN): keep the more accurate form */
    if (st == Q8_OK)
        out->on = !isnan(out->db[1]) && out->db[1] >= out->db[0] - max_loss;
    return st;
}
