#include "onnx_import.h"

#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "passes.h"
#include "onnx_attr_types.h"
#include "onnx_tensor.h"
#include "onnx_strip.h"
#include "proto_guard.h"

typedef struct import_ctx {
    const char *base_dir;
    int opset;
    q8_error *err;
    const q8_mapping *map;  /* the mapped file raw_data may point into, or NULL */
} import_ctx;

static q8_status import_graph(import_ctx *c, const Onnx__GraphProto *gp, q8_graph *parent,
                              q8_graph **out);

static const char *str_or(const char *s, const char *def) { return s && *s ? s : def; }

static bool defined_in_scope(const q8_graph *g, const char *name) {
    for (; g; g = g->parent)
        if (q8_graph_find(g, name) >= 0) return true;
    return false;
}

static char *binary_to_str(const ProtobufCBinaryData *b) {
    char *s = malloc(b->len + 1);
    if (!s) return NULL;
    if (b->len) memcpy(s, b->data, b->len);
    s[b->len] = 0;
    return s;
}

static q8_tensor *new_standalone_tensor(const char *name) {
    q8_tensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->name = q8_strdup(name);
    if (!t->name) {
        free(t);
        return NULL;
    }
    t->producer = -1;
    t->q.axis = -1;
    return t;
}

static const char *attr_type_name(int type) {
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH",
                                        "FLOATS", "INTS", "STRINGS", "TENSORS", "GRAPHS",
                                        "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
                                        "TYPE_PROTOS"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "unknown";
}

/* The attribute's type: its type field or, in files from before that field
 * (IR 0.0.1), the value field that is set; 0 if there is none. */
static int attr_type(const Onnx__AttributeProto *ap) {
    if (ap->has_type && ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return (int)ap->type;
    if (ap->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (ap->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (ap->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (ap->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (ap->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (ap->sparse_tensor) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
    if (ap->tp) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
    if (ap->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (ap->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (ap->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (ap->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    if (ap->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    if (ap->n_sparse_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS;
    if (ap->n_type_protos) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS;
    return 0;
}

static int cmp_attr_type(const void *key, const void *elem) {
    const q8_onnx_attr_type *k = key, *e = elem;
    int c = strcmp(k->op, e->op);
    return c ? c : strcmp(k->attr, e->attr);
}

/* Check an attribute's type against the ai.onnx schemas: an op reading a
 * wrongly typed attribute would see it as absent and silently use its
 * default. Attributes the schemas do not know are left to the op. */
static q8_status check_attr(const char *node, const char *op, bool onnx_dom,
                            const Onnx__AttributeProto *ap, int *type, q8_error *err) {
    const char *an = str_or(ap->name, "");
    *type = attr_type(ap);
    if (*type == 0)
        return q8_fail(err, Q8_ERR_FORMAT, "node '%.60s' (%.40s): attribute '%s' has no value",
                       node, op, an);
    /* q8 keeps its own decisions in attributes named _... (fused
     * activations, kernel choices): a model file may not set them */
    if (an[0] == '_')
        return q8_fail(err, Q8_ERR_FORMAT,
                       "node '%.60s' (%.40s): attribute '%.60s': names starting with '_' are "
                       "q8's own", node, op, an);
    if (!onnx_dom) return Q8_OK;
    q8_onnx_attr_type key = {.op = op, .attr = an};
    const q8_onnx_attr_type *e = bsearch(&key, q8_onnx_attr_types, (size_t)q8_onnx_n_attr_types,
                                         sizeof *e, cmp_attr_type);
    if (e && (*type >= 32 || !(e->mask & (1u << *type)))) {
        int want = 0;
        while (want < 31 && !(e->mask & (1u << want))) want++;
        return q8_fail(err, Q8_ERR_FORMAT,
                       "node '%.60s' (%.40s): attribute '%s' has type %s, ONNX defines it as %s",
                       node, op, an, attr_type_name(*type), attr_type_name(want));
    }
    return Q8_OK;
}

static q8_status convert_attr(import_ctx *c, q8_graph *g, const q8_node *n,
                              const Onnx__AttributeProto *ap, q8_attr *a) {
    q8_error *err = c->err;
    a->name = q8_strdup(str_or(ap->name, ""));
    if (!a->name) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int type;
    Q8_TRY(check_attr(n->name, n->op_type, !*n->domain, ap, &type, err));
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        a->type = Q8_ATTR_FLOAT;
        a->f = ap->f;
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        a->type = Q8_ATTR_INT;
        a->i = ap->i;
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        a->type = Q8_ATTR_STRING;
        if (!(a->s = binary_to_str(&ap->s))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        a->type = Q8_ATTR_FLOATS;
        if (ap->n_floats > INT32_MAX) return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute too long");
        a->n = (int)ap->n_floats;
        if (a->n) {
            if (!(a->floats = malloc(sizeof(float) * ap->n_floats)))
                return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
        }
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        a->type = Q8_ATTR_INTS;
        if (ap->n_ints > INT32_MAX) return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute too long");
        a->n = (int)ap->n_ints;
        if (a->n) {
            if (!(a->ints = malloc(sizeof(int64_t) * ap->n_ints)))
                return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
        }
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        a->type = Q8_ATTR_STRINGS;
        if (ap->n_strings > INT32_MAX) return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute too long");
        if (ap->n_strings) {
            if (!(a->strings = calloc(ap->n_strings, sizeof(char *))))
                return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            for (size_t i = 0; i < ap->n_strings; i++, a->n++)
                if (!(a->strings[i] = binary_to_str(&ap->strings[i])))
                    return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        }
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        a->type = Q8_ATTR_TENSOR;
        if (!ap->t) return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute '%s' has no tensor", a->name);
        if (!(a->t = new_standalone_tensor(a->name))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        q8_status s = q8_onnx_tensor_fill(ap->t, c->base_dir, a->t, err);
        if (s != Q8_OK) {
            q8_fail_prefix(err, "node '%s' attribute '%s'", n->name, a->name);
            return s;
        }
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
        a->type = Q8_ATTR_GRAPH;
        if (!ap->g) return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute '%s' has no graph", a->name);
        Q8_TRY(import_graph(c, ap->g, g, &a->g));
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        /* Kept by name only; no supported op reads them, and the op's infer
         * will reject a missing attribute it needs. */
        a->type = Q8_ATTR_STRING;
        break;
    default:
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute '%s' has unknown type %d", a->name,
                            type);
    }
    return Q8_OK;
}

/* A Constant node becomes a constant tensor directly. */
static q8_status import_constant(import_ctx *c, q8_graph *g, const Onnx__NodeProto *np) {
    q8_error *err = c->err;
    const char *nname = str_or(np->name, str_or(np->n_output ? np->output[0] : NULL, "?"));
    if (np->n_output != 1 || !np->output[0] || !*np->output[0])
        return q8_fail(err, Q8_ERR_FORMAT, "node '%s' (Constant): needs exactly one output", nname);
    if (np->n_attribute != 1)
        return q8_fail(err, Q8_ERR_FORMAT, "node '%s' (Constant): needs exactly one attribute, has %zu",
                       nname, np->n_attribute);
    bool dup;
    int ti = q8_graph_add_tensor(g, np->output[0], &dup);
    if (ti < 0)
        return dup ? q8_fail(err, Q8_ERR_FORMAT, "node '%s' (Constant): output name '%s' is defined twice",
                             nname, np->output[0])
                   : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_tensor *t = g->tensors[ti];
    const Onnx__AttributeProto *ap = np->attribute[0];
    const char *an = str_or(ap->name, "");
    int type;
    Q8_TRY(check_attr(nname, "Constant", true, ap, &type, err));
    int64_t one = 1;
    if (strcmp(an, "value") == 0) {
        if (!ap->t)
            return q8_fail(err, Q8_ERR_FORMAT, "node '%s' (Constant): 'value' has no tensor",
                           nname);
        q8_status s = q8_onnx_tensor_fill_mapped(ap->t, c->base_dir, c->map, t, err);
        if (s != Q8_OK) q8_fail_prefix(err, "node '%s' (Constant)", nname);
        return s;
    }
    if (strcmp(an, "value_float") == 0 || strcmp(an, "value_int") == 0) {
        bool f = an[6] == 'f';
        q8_tensor_set_shape(t, f ? Q8_F32 : Q8_I64, &one, 0);
        Q8_TRY(q8_tensor_alloc_data(t, err));
        if (f) *(float *)t->data = ap->f;
        else *(int64_t *)t->data = ap->i;
        return Q8_OK;
    }
    if (strcmp(an, "value_floats") == 0 || strcmp(an, "value_ints") == 0) {
        bool f = an[6] == 'f';
        int64_t len = (int64_t)(f ? ap->n_floats : ap->n_ints);
        q8_tensor_set_shape(t, f ? Q8_F32 : Q8_I64, &len, 1);
        Q8_TRY(q8_tensor_alloc_data(t, err));
        if (len) memcpy(t->data, f ? (void *)ap->floats : (void *)ap->ints, (size_t)len * (f ? 4 : 8));
        return Q8_OK;
    }
    return q8_fail(err, Q8_ERR_UNSUPPORTED, "node '%s' (Constant): attribute '%s' is not supported",
                   nname, an);
}

/* A graph input. A body's input may have no type at all (ONNX lets a Loop
 * or Scan body take it from the node's input, as the expanded Range function
 * does): it is imported untyped, and unrolling maps it onto that input. */
static q8_status import_value_info(import_ctx *c, q8_graph *g, const Onnx__ValueInfoProto *vi,
                                   bool in_body, int *out) {
    q8_error *err = c->err;
    const char *name = str_or(vi->name, "");
    if (!*name) return q8_fail(err, Q8_ERR_FORMAT, "a graph input has no name");
    const Onnx__TypeProto *tp = vi->type;
    if (in_body && (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)) {
        bool dup;
        int ti = q8_graph_add_tensor(g, name, &dup);
        if (ti < 0)
            return dup ? q8_fail(err, Q8_ERR_FORMAT, "graph input '%s' is defined twice", name)
                       : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        g->tensors[ti]->dtype = Q8_UNDEFINED;
        g->tensors[ti]->ndim = -1;
        *out = ti;
        return Q8_OK;
    }
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "graph input '%s' is not a tensor", name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    q8_dtype dt = q8_onnx_dtype(tt->elem_type);
    if (dt == Q8_UNDEFINED || dt == Q8_STRING)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "graph input '%s' has unsupported element type %d",
                       name, (int)tt->elem_type);
    bool dup;
    int ti = q8_graph_add_tensor(g, name, &dup);
    if (ti < 0)
        return dup ? q8_fail(err, Q8_ERR_FORMAT, "graph input '%s' is defined twice", name)
                   : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_tensor *t = g->tensors[ti];
    t->dtype = dt;
    t->ndim = -1; /* unknown rank until --input-shape */
    if (tt->shape) {
        if (tt->shape->n_dim > Q8_MAX_DIMS)
            return q8_fail(err, Q8_ERR_UNSUPPORTED, "graph input '%s' has %zu dims, at most %d supported",
                           name, tt->shape->n_dim, Q8_MAX_DIMS);
        t->ndim = (int)tt->shape->n_dim;
        bool known = true;
        for (int i = 0; i < t->ndim; i++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
            bool has_value = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            if (has_value && d->dim_value < -1)
                return q8_fail(err, Q8_ERR_FORMAT, "graph input '%s': dim %d is %lld", name, i,
                               (long long)d->dim_value);
            if (has_value && d->dim_value >= 0) {
                t->dims[i] = d->dim_value;
            } else { /* dim_param, nothing, or -1 (old exporters): dynamic */
                t->dims[i] = -1;
                known = false;
                const char *p = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                    ? d->dim_param : NULL;
                t->dim_param[i] = q8_strdup(str_or(p, "?"));
                if (!t->dim_param[i]) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            }
        }
        int64_t numel;
        if (known && !q8_shape_numel(t->dims, t->ndim, &numel))
            return q8_fail(err, Q8_ERR_FORMAT, "graph input '%s': shape is too large", name);
        t->shape_known = known;
    }
    *out = ti;
    return Q8_OK;
}

static q8_status import_nodes(import_ctx *c, q8_graph *g, const Onnx__GraphProto *gp) {
    q8_error *err = c->err;
    /* Pass 1: constants and every node's outputs, so inputs may refer forward
     * (the toposort pass orders them later). */
    int *node_of = calloc(gp->n_node ? gp->n_node : 1, sizeof(int));
    if (!node_of) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status s = Q8_OK;
    for (size_t i = 0; i < gp->n_node && s == Q8_OK; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        node_of[i] = -1;
        const char *op = str_or(np->op_type, "");
        const char *dom = str_or(np->domain, "");
        bool onnx_dom = !*dom || strcmp(dom, "ai.onnx") == 0;
        if (!*op) {
            s = q8_fail(err, Q8_ERR_FORMAT, "node %zu ('%s') has no op_type", i, str_or(np->name, ""));
            break;
        }
        if (onnx_dom && strcmp(op, "Constant") == 0) {
            s = import_constant(c, g, np);
            continue;
        }
        char fallback[48];
        snprintf(fallback, sizeof fallback, "%s_%zu", op, i);
        int ni = q8_graph_add_node(g, str_or(np->name, fallback), op);
        if (ni < 0) {
            s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        q8_node *n = g->nodes[ni];
        node_of[i] = ni;
        if (!onnx_dom) {
            free(n->domain);
            if (!(n->domain = q8_strdup(dom))) {
                s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                break;
            }
        }
        if (np->n_input > 1024 || np->n_output > 1024) {
            s = q8_node_fail(err, Q8_ERR_FORMAT, n, "too many inputs or outputs");
            break;
        }
        n->outputs = malloc(sizeof(int) * (np->n_output ? np->n_output : 1));
        n->inputs = malloc(sizeof(int) * (np->n_input ? np->n_input : 1));
        if (!n->outputs || !n->inputs) {
            s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        n->n_outputs = (int)np->n_output;
        for (size_t j = 0; j < np->n_output; j++) {
            const char *on = np->output[j];
            if (!on || !*on) {
                n->outputs[j] = -1;
                continue;
            }
            bool dup;
            int ti = q8_graph_add_tensor(g, on, &dup);
            if (ti < 0) {
                s = dup ? q8_node_fail(err, Q8_ERR_FORMAT, n, "output name '%s' is already defined", on)
                        : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                break;
            }
            n->outputs[j] = ti;
        }
    }
    /* Pass 2: inputs and attributes. */
    for (size_t i = 0; i < gp->n_node && s == Q8_OK; i++) {
        if (node_of[i] < 0) continue;
        const Onnx__NodeProto *np = gp->node[i];
        q8_node *n = g->nodes[node_of[i]];
        n->n_inputs = (int)np->n_input;
        for (size_t j = 0; j < np->n_input && s == Q8_OK; j++) {
            const char *in = np->input[j];
            if (!in || !*in) {
                n->inputs[j] = -1;
                continue;
            }
            int ti = q8_graph_find(g, in);
            if (ti < 0 && g->parent && defined_in_scope(g->parent, in)) {
                ti = q8_graph_add_tensor(g, in, NULL);
                if (ti < 0) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                else g->tensors[ti]->outer = true;
            } else if (ti < 0) {
                s = q8_node_fail(err, Q8_ERR_FORMAT, n,
                                 "input '%s' is not produced by any node, initializer or graph input", in);
            }
            n->inputs[j] = ti;
        }
        if (s != Q8_OK) break;
        if (np->n_attribute > 4096) {
            s = q8_node_fail(err, Q8_ERR_FORMAT, n, "too many attributes");
            break;
        }
        if (np->n_attribute) {
            n->attrs = calloc(np->n_attribute, sizeof(q8_attr));
            if (!n->attrs) {
                s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                break;
            }
        }
        for (size_t j = 0; j < np->n_attribute && s == Q8_OK; j++) {
            n->n_attrs++;
            s = convert_attr(c, g, n, np->attribute[j], &n->attrs[j]);
        }
    }
    free(node_of);
    return s;
}

static q8_status import_graph(import_ctx *c, const Onnx__GraphProto *gp, q8_graph *parent,
                              q8_graph **out) {
    q8_error *err = c->err;
    *out = NULL;
    q8_graph *g = q8_graph_new();
    if (!g) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    g->parent = parent;
    g->opset = c->opset;
    g->name = q8_strdup(str_or(gp->name, "graph"));
    q8_status s = g->name ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");

    for (size_t i = 0; i < gp->n_initializer && s == Q8_OK; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        const char *name = str_or(tp->name, "");
        if (!*name) {
            s = q8_fail(err, Q8_ERR_FORMAT, "initializer %zu has no name", i);
            break;
        }
        bool dup;
        int ti = q8_graph_add_tensor(g, name, &dup);
        if (ti < 0) {
            s = dup ? q8_fail(err, Q8_ERR_FORMAT, "initializer '%s' is defined twice", name)
                    : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        s = q8_onnx_tensor_fill_mapped(tp, c->base_dir, c->map, g->tensors[ti], err);
    }
    if (s == Q8_OK && gp->n_input) {
        g->inputs = malloc(sizeof(int) * gp->n_input);
        if (!g->inputs) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < gp->n_input && s == Q8_OK; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        /* Before IR version 4, initializers were listed as inputs too. */
        if (vi->name && q8_graph_find(g, vi->name) >= 0 && g->tensors[q8_graph_find(g, vi->name)]->data)
            continue;
        int ti = -1;
        s = import_value_info(c, g, vi, parent != NULL, &ti);
        if (s == Q8_OK) g->inputs[g->n_inputs++] = ti;
    }
    if (s == Q8_OK) s = import_nodes(c, g, gp);
    if (s == Q8_OK && gp->n_output) {
        g->outputs = malloc(sizeof(int) * gp->n_output);
        if (!g->outputs) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    bool *listed = NULL;
    if (s == Q8_OK && !parent && !(listed = calloc((size_t)g->n_tensors + 1, sizeof(bool))))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_output && s == Q8_OK; i++) {
        const char *name = str_or(gp->output[i]->name, "");
        int ti = q8_graph_find(g, name);
        if (ti < 0 && parent && defined_in_scope(parent, name)) {
            ti = q8_graph_add_tensor(g, name, NULL);
            if (ti < 0) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            else g->tensors[ti]->outer = true;
        } else if (ti < 0) {
            s = q8_fail(err, Q8_ERR_FORMAT, "graph output '%s' is not produced by any node", name);
        }
        /* Two outputs of one name would be written to one file. */
        if (s == Q8_OK && listed && listed[ti])
            s = q8_fail(err, Q8_ERR_FORMAT, "graph output '%s' is listed twice", name);
        if (s == Q8_OK && listed) listed[ti] = true;
        if (s == Q8_OK) g->outputs[g->n_outputs++] = ti;
        /* a float16 output: computed in float32, handed out as float16
         * (src/passes/fp16.c); other declared types are inferred */
        const Onnx__TypeProto *tp = gp->output[i]->type;
        if (s == Q8_OK && !parent && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
            tp->tensor_type && tp->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16)
            g->tensors[ti]->io_dtype = Q8_F16;
    }
    free(listed);
    if (s == Q8_OK && !parent && g->n_outputs == 0)
        s = q8_fail(err, Q8_ERR_FORMAT, "the graph has no outputs");
    if (s != Q8_OK) {
        q8_graph_free(g);
        return s;
    }
    *out = g;
    return Q8_OK;
}

static void attach_one(Onnx__TensorProto *tp, const q8_onnx_raw *r, const uint8_t *orig,
                       bool attach) {
    if (!r->present) return;
    tp->has_raw_data = attach;
    tp->raw_data.data = attach ? (uint8_t *)orig + r->off : NULL;
    tp->raw_data.len = attach ? r->len : 0;
}

/* Point the top graph's initializers and its nodes' tensor attributes at
 * their raw_data in the original bytes (attach), or back at nothing before
 * protobuf-c frees them. */
static bool attach_raw(Onnx__ModelProto *mp, const q8_onnx_stripped *st, const uint8_t *orig,
                       bool attach) {
    Onnx__GraphProto *gp = mp->graph;
    if (!gp) return st->n_raw == 0 && st->n_attr_raw == 0; /* refused below: no graph */
    if (gp->n_initializer != st->n_raw) return false;
    for (size_t i = 0; i < st->n_raw; i++) attach_one(gp->initializer[i], &st->raw[i], orig, attach);
    size_t k = 0;
    for (size_t i = 0; i < gp->n_node; i++)
        for (size_t j = 0; j < gp->node[i]->n_attribute; j++) {
            Onnx__TensorProto *tp = gp->node[i]->attribute[j]->t;
            if (!tp) continue;
            if (k == st->n_attr_raw) return false;
            attach_one(tp, &st->attr_raw[k++], orig, attach);
        }
    return k == st->n_attr_raw;
}

/* Parse and import buf. With st, buf is st's stripped bytes and the
 * initializers' data is read from orig, the model's bytes: the weights are
 * held once, in the graph. map: the mapped file the model's bytes are,
 * whose pages are dropped once copied (or, without st, once unpacked). */
static q8_status parse(const uint8_t *buf, size_t len, const q8_onnx_stripped *st,
                       const uint8_t *orig, const q8_mapping *map, const char *base_dir,
                       q8_graph **out, q8_error *err) {
    *out = NULL;
    const char *why;
    if (len == 0) return q8_fail(err, Q8_ERR_FORMAT, "the file is empty");
    if (!q8_proto_check(&onnx__model_proto__descriptor, buf, len, Q8_PROTO_MAX_DEPTH, &why))
        return q8_fail(err, Q8_ERR_FORMAT, "not a valid ONNX model: %s", why);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    /* not stripped: protobuf-c copied everything out of the mapped file */
    if (!st && map) q8_mapping_drop(map, map->base, map->size);
    if (!mp) return q8_fail(err, Q8_ERR_FORMAT, "not a valid ONNX model (protobuf parse failed)");
    if (st && !attach_raw(mp, st, orig, true)) {
        onnx__model_proto__free_unpacked(mp, NULL);
        return q8_fail(err, Q8_ERR_FORMAT, "not a valid ONNX model (its initializers do not "
                                           "match their wire data)");
    }
    q8_status s = Q8_OK;
    import_ctx c = {.base_dir = base_dir, .opset = 0, .err = err, .map = map};
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        const char *d = str_or(os->domain, "");
        if (!*d || strcmp(d, "ai.onnx") == 0) c.opset = os->has_version ? (int)os->version : 0;
    }
    if (!mp->graph) {
        s = q8_fail(err, Q8_ERR_FORMAT, "not an ONNX model: it has no graph");
    } else if (c.opset == 0 && mp->n_opset_import == 0 && mp->has_ir_version && mp->ir_version < 3) {
        c.opset = 1; /* pre-opset_import models */
    } else if (c.opset <= 0) {
        s = q8_fail(err, Q8_ERR_FORMAT, "the model declares no ai.onnx opset version");
    }
    /* the passes rewrite older opsets' forms into this one's (canonicalize.c) */
    if (s == Q8_OK && c.opset > Q8_OPSET_CANONICAL)
        s = q8_fail(err, Q8_ERR_UNSUPPORTED, "opset %d is newer than q8 knows (1 to %d)", c.opset,
                    Q8_OPSET_CANONICAL);
    if (s == Q8_OK) s = import_graph(&c, mp->graph, NULL, out);
    if (st) attach_raw(mp, st, orig, false);
    onnx__model_proto__free_unpacked(mp, NULL);
    q8_heap_trim();
    /* float16 models compute in float32 in q8 (src/passes/fp16.c) */
    if (s == Q8_OK && (s = q8_pass_widen_fp16(*out, err)) != Q8_OK) {
        q8_graph_free(*out);
        *out = NULL;
    }
    return s;
}

/* Strip the weights out of the wire bytes before unpacking when the bytes
 * allow it (else protobuf-c copies them all). */
static q8_status parse_bytes(const uint8_t *buf, size_t len, const q8_mapping *map,
                             const char *base_dir, q8_graph **out, q8_error *err) {
    q8_onnx_stripped st;
    if (!q8_onnx_strip(buf, len, &st)) return parse(buf, len, NULL, buf, map, base_dir, out, err);
    q8_status s = parse(st.bytes, st.len, &st, buf, map, base_dir, out, err);
    q8_onnx_stripped_free(&st);
    return s;
}

q8_status q8_onnx_parse(const uint8_t *buf, size_t len, const char *base_dir,
                        q8_graph **out, q8_error *err) {
    return parse_bytes(buf, len, NULL, base_dir, out, err);
}

q8_status q8_onnx_load(const char *path, q8_graph **out, q8_error *err) {
    *out = NULL;
    int fd;
    size_t size;
    Q8_TRY(q8_open_regular(path, &fd, &size, err));
    close(fd);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    q8_mapping map = {0};
    q8_status s = Q8_OK;
    if (size == 0) s = q8_fail(err, Q8_ERR_FORMAT, "the file is empty");
    else s = q8_map_file(path, &map, err);
    if (s == Q8_OK) {
        s = parse_bytes(map.base, map.size, &map, dirname(dir), out, err);
        q8_unmap_file(&map);
    }
    if (s != Q8_OK) q8_fail_prefix(err, "%s", path);
    return s;
}
