/* Sample folders (quantize --calib, q8report --data): which tensor files
 * make up each sample, matched to the graph's inputs; read one at a time. */
#include "samples.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "tensor_file.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted tensor files (.npy/.pb) in dir; -1 if dir cannot be read. */
static int list_tensor_files(const char *dir, char ***out) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !q8_is_tensor_file_name(e->d_name)) continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        char **l = realloc(*out, sizeof(char *) * (size_t)(n + 1));
        if (!p || !l) {
            free(p);
            if (l) *out = l;
            break;
        }
        *out = l;
        snprintf(p, len, "%s/%s", dir, e->d_name);
        (*out)[n++] = p;
    }
    closedir(d);
    qsort(*out, (size_t)n, sizeof(char *), cmp_str);
    return n;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void q8_samples_free(q8_sample_set *s) {
    for (int i = 0; s->paths && i < s->n_samples; i++) {
        for (int k = 0; k < s->n_inputs; k++) free(s->paths[i][k]);
        free(s->paths[i]);
    }
    free(s->paths);
    memset(s, 0, sizeof *s);
}

q8_status q8_samples_from_dir(const char *dir, const q8_graph *g, q8_sample_set *s,
                              q8_error *err) {
    memset(s, 0, sizeof *s);
    if (!is_dir(dir)) return q8_fail(err, Q8_ERR_IO, "--calib %s: not a folder", dir);
    int ni = g->n_inputs;
    if (ni < 1) return q8_fail(err, Q8_ERR_ARG, "the model has no inputs to calibrate");
    char ***lists = calloc((size_t)ni, sizeof(char **));
    int *counts = calloc((size_t)ni, sizeof(int));
    if (!lists || !counts) {
        free(lists);
        free(counts);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    q8_status st = Q8_OK;
    for (int k = 0; k < ni && st == Q8_OK; k++) {
        const char *name = g->tensors[g->inputs[k]]->name;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, name);
        if (ni == 1 && !is_dir(sub)) {
            counts[k] = list_tensor_files(dir, &lists[k]);
        } else if (is_dir(sub)) {
            counts[k] = list_tensor_files(sub, &lists[k]);
        } else {
            st = q8_fail(err, Q8_ERR_IO,
                         "--calib %s: the model has %d inputs, so it needs one subfolder per input; "
                         "'%s/' is missing", dir, ni, name);
            break;
        }
        if (counts[k] <= 0)
            st = q8_fail(err, Q8_ERR_IO, "--calib: no .npy or .pb files in %s",
                         ni == 1 && !is_dir(sub) ? dir : sub);
        else if (k > 0 && counts[k] != counts[0])
            st = q8_fail(err, Q8_ERR_ARG, "--calib %s: input '%s' has %d samples, input '%s' has %d",
                         dir, name, counts[k], g->tensors[g->inputs[0]]->name, counts[0]);
    }
    if (st == Q8_OK) {
        s->n_inputs = ni;
        s->n_samples = counts[0];
        s->paths = calloc((size_t)s->n_samples, sizeof(char **));
        if (!s->paths) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        for (int i = 0; st == Q8_OK && i < s->n_samples; i++) {
            if (!(s->paths[i] = calloc((size_t)ni, sizeof(char *)))) {
                st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                break;
            }
            for (int k = 0; k < ni; k++) {
                s->paths[i][k] = lists[k][i];
                lists[k][i] = NULL;
            }
        }
    }
    for (int k = 0; k < ni; k++) {
        for (int i = 0; i < counts[k]; i++) free(lists[k][i]);
        free(lists[k]);
    }
    free(lists);
    free(counts);
    if (st != Q8_OK) q8_samples_free(s);
    return st;
}

q8_status q8_sample_load(const q8_sample_set *s, int i, int k, q8_tensor **out, q8_error *err) {
    Q8_TRY(q8_tensor_file_load(s->paths[i][k], out, err));
    /* q8 computes float16 models in float32 (src/passes/fp16.c) */
    q8_status st = (*out)->dtype == Q8_F16 ? q8_tensor_widen_f16(*out, err) : Q8_OK;
    if (st != Q8_OK) {
        q8_tensor_free(*out);
        *out = NULL;
    }
    return st;
}
