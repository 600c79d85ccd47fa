/* The public API on misuse: every call that returns a status fills the
 * message too, and NULL handles or out-of-range indices are errors, not
 * crashes. */
#include <string.h>

#include "model.h"
#include "passes.h"
#include "testutil.h"

static q8_model *relu_model(void) {
    q8t_in in = {"x", Q8_F32, 1, {4}, NULL};
    q8_graph *g = q8t_graph1("Relu", &in, 1, 1);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "relu", &m, &err), Q8_OK);
    return m;
}

static void expect(q8_status got, q8_error *err, const char *substr) {
    cr_assert_eq(got, Q8_ERR_ARG, "status %s", q8_status_str(got));
    cr_assert_eq(err->status, Q8_ERR_ARG);
    cr_assert(strstr(err->msg, substr), "message '%s' lacks '%s'", err->msg, substr);
    memset(err, 0, sizeof *err);
}

Test(api_errors, indices_and_nulls_fill_the_message) {
    q8_model *m = relu_model();
    q8_error err = {0};
    q8_tensor_info info;
    expect(q8_model_input_info(m, 1, &info, &err), &err, "the model has 1 inputs");
    expect(q8_model_output_info(m, -1, &info, &err), &err, "the model has 1 outputs");
    expect(q8_model_input_info(NULL, 0, &info, &err), &err, "NULL");
    q8_session *s;
    cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
    const void *d;
    expect(q8_session_output(s, 3, &info, &d, &err), &err, "the model has 1 outputs");
    const char *name, *op;
    double ms;
    expect(q8_session_node_profile(s, 9, &name, &op, &ms, &err), &err, "the model has 1 nodes");
    expect(q8_session_run(NULL, &err), &err, "NULL session");
    expect(q8_session_run(s, &err), &err, "input 'x' was not set");
    int64_t dims[1] = {4};
    float x[4] = {0};
    expect(q8_session_set_input(s, "nope", Q8_F32, dims, 1, x, &err), &err, "no input named");
    expect(q8_session_set_input(s, NULL, Q8_F32, dims, 9, x, &err), &err, "rank 9");
    /* a NULL error pointer is allowed everywhere */
    cr_assert_eq(q8_session_output(s, 3, &info, &d, NULL), Q8_ERR_ARG);
    q8_session_free(s);
    q8_model_free(m);
}

/* A name a model declares float16 (exchanged as float16, computed as
 * float32) must be a float tensor: a model that also declares it int64 (the
 * fuzzer's: one name as an int64 input and a float16 output) is refused when
 * the session is made, instead of converting 8-byte values in a buffer sized
 * for 4-byte ones. */
Test(api_errors, a_float16_name_of_another_type_is_refused) {
    q8t_in in = {"x", Q8_I64, 1, {41}, NULL};
    q8_graph *g = q8t_graph1("Neg", &in, 1, 1);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    g->tensors[g->inputs[0]]->io_dtype = Q8_F16;
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "mixed", &m, &err), Q8_OK);
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 1};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_ERR_FORMAT);
    cr_assert_null(s);
    cr_assert(strstr(err.msg, "two types"), "%s", err.msg);
    q8_model_free(m);
}
