/* Sample folders: the tensors of each sample of a model's inputs (see
 * samples.c). */
#ifndef Q8_FORMATS_TENSOR_SAMPLES_H
#define Q8_FORMATS_TENSOR_SAMPLES_H

#include "graph.h"

/* The samples: for each sample, one file per graph input. */
typedef struct q8_sample_set {
    int n_inputs;       /* graph inputs, in graph order */
    int n_samples;
    char ***paths;      /* paths[sample][input] */
    char **names;       /* names[input]: the graph input each file column is for */
} q8_sample_set;

/* DIR: each *.npy / *.pb file in DIR is one sample of a one-input model; a
 * model with several inputs has one subfolder per input name, with files
 * matched in sorted order. */
q8_status q8_samples_from_dir(const char *dir, const q8_graph *g, q8_sample_set *s,
                              q8_error *err);
/* The same, leaving out the inputs named in bound (their values are given
 * when the model is built: --bind): they need no subfolder, and one there
 * is not read; a model with one input besides them may use DIR flat. */
q8_status q8_samples_from_dir_bound(const char *dir, const q8_graph *g,
                                    const q8_input_value *bound, int n_bound, q8_sample_set *s,
                                    q8_error *err);
void q8_samples_free(q8_sample_set *s);
/* Whether input name is one of the n_bound bound values. */
bool q8_input_is_bound(const char *name, const q8_input_value *bound, int n_bound);
/* Whether s has a column for every input of g (by name where s names its
 * columns; a column for an input g has bound is allowed: a session checks
 * its value). */
bool q8_samples_cover_inputs(const q8_sample_set *s, const q8_graph *g);
/* Read sample i's tensor for graph input k (caller frees); float16 samples
 * come back float32, as q8 computes float16 models (src/passes/fp16.c). */
q8_status q8_sample_load(const q8_sample_set *s, int i, int k, q8_tensor **out, q8_error *err);

#endif
