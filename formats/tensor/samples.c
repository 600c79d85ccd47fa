/* Sample folders (quantize --calib, q8report --data): which tensor files
 * make up each sample, matched to the graph's inputs; read one at a time. */
#include "samples.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "tensor_file.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted tensor files (.npy/.pb) in dir; -1 with err filled if dir cannot
 * be read or an entry is not a regular file (a FIFO would block its
 * reader). */
static int list_tensor_files(const char *dir, char ***out, q8_error *err) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) {
        q8_fail(err, Q8_ERR_IO, "--calib: cannot read the folder '%s': %s", dir, strerror(errno));
        return -1;
    }
    int n = 0;
    bool bad = false;
    struct dirent *e;
    while (!bad && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !q8_is_tensor_file_name(e->d_name)) continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        char **l = realloc(*out, sizeof(char *) * (size_t)(n + 1));
        if (l) *out = l;
        if (!p || !l) {
            free(p);
            q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            bad = true;
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        (*out)[n++] = p;
        struct stat st;
        if (stat(p, &st) != 0) {
            q8_fail(err, Q8_ERR_IO, "--calib: cannot read '%s': %s", p, strerror(errno));
            bad = true;
        } else if (!S_ISREG(st.st_mode)) {
            q8_fail(err, Q8_ERR_IO, "--calib: '%s' is %s, not a regular file", p,
                    q8_file_kind(st.st_mode));
            bad = true;
        }
    }
    closedir(d);
    if (bad) {
        for (int i = 0; i < n; i++) free((*out)[i]);
        free(*out);
        *out = NULL;
        return -1;
    }
    if (n > 1) qsort(*out, (size_t)n, sizeof(char *), cmp_str);
    return n;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The file name without its folder and its .npy/.pb extension. */
static size_t stem(const char *path, const char **start) {
    const char *slash = strrchr(path, '/');
    *start = slash ? slash + 1 : path;
    const char *dot = strrchr(*start, '.');
    return dot ? (size_t)(dot - *start) : strlen(*start);
}

/* Several inputs: sample i is the files of the same name in every input's
 * subfolder; sorted position alone would pair unrelated files. */
static q8_status check_pairing(const char *dir, char *const *names, char ***lists, int ni,
                               int n, q8_error *err) {
    for (int k = 1; k < ni; k++)
        for (int i = 0; i < n; i++) {
            const char *a, *b;
            size_t la = stem(lists[0][i], &a), lb = stem(lists[k][i], &b);
            if (la == lb && !memcmp(a, b, la)) continue;
            return q8_fail(err, Q8_ERR_ARG,
                           "--calib %s: '%s' of input '%s' has no file of the same name for "
                           "input '%s' (its file in sorted order is '%s'): each sample is the "
                           "files of the same name in every input's subfolder",
                           dir, lists[0][i], names[0], names[k], lists[k][i]);
        }
    return Q8_OK;
}

void q8_samples_free(q8_sample_set *s) {
    for (int i = 0; s->paths && i < s->n_samples; i++) {
        if (!s->paths[i]) continue; /* out of memory while building */
        for (int k = 0; k < s->n_inputs; k++) free(s->paths[i][k]);
        free(s->paths[i]);
    }
    free(s->paths);
    for (int k = 0; s->names && k < s->n_inputs; k++) free(s->names[k]);
    free(s->names);
    memset(s, 0, sizeof *s);
}

q8_status q8_samples_from_dir(const char *dir, const q8_graph *g, q8_sample_set *s,
                              q8_error *err) {
    return q8_samples_from_dir_bound(dir, g, NULL, 0, s, err);
}

bool q8_input_is_bound(const char *name, const q8_input_value *bound, int n_bound) {
    for (int i = 0; i < n_bound; i++)
        if (bound[i].name && strcmp(bound[i].name, name) == 0) return true;
    return false;
}

/* A folder without tensor files of its own that holds a subfolder named
 * after an input (a bound one's) is laid out per input: the subfolder that
 * is missing is named, not the folder read as flat. */
static bool laid_out_per_input(const char *dir, const q8_graph *g) {
    bool any_sub = false;
    for (int k = 0; k < g->n_inputs && !any_sub; k++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, g->tensors[g->inputs[k]]->name);
        any_sub = is_dir(sub);
    }
    if (!any_sub) return false;
    char **top = NULL;
    q8_error ignored = {0};
    int n_top = list_tensor_files(dir, &top, &ignored);
    for (int i = 0; i < n_top; i++) free(top[i]);
    free(top);
    return n_top == 0;
}

bool q8_samples_cover_inputs(const q8_sample_set *s, const q8_graph *g) {
    if (!s->names) return s->n_inputs == g->n_inputs;
    int n_named = 0;
    for (int i = 0; i < g->n_inputs; i++)
        for (int k = 0; k < s->n_inputs; k++)
            n_named += strcmp(s->names[k], g->tensors[g->inputs[i]]->name) == 0;
    return n_named == g->n_inputs;
}

q8_status q8_samples_from_dir_bound(const char *dir, const q8_graph *g,
                                    const q8_input_value *bound, int n_bound, q8_sample_set *s,
                                    q8_error *err) {
    memset(s, 0, sizeof *s);
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return q8_fail(err, Q8_ERR_IO, "--calib %s: %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return q8_fail(err, Q8_ERR_IO, "--calib %s: it is %s, not a folder", dir,
                       q8_file_kind(sb.st_mode));
    if (g->n_inputs < 1) return q8_fail(err, Q8_ERR_ARG, "the model has no inputs to calibrate");
    for (int i = 0; i < n_bound; i++) {
        bool found = false;
        for (int k = 0; bound[i].name && k < g->n_inputs; k++)
            found |= strcmp(g->tensors[g->inputs[k]]->name, bound[i].name) == 0;
        if (!found)
            return q8_fail(err, Q8_ERR_ARG, "--bind %s: the model has no input of that name "
                           "(its first input: '%s')", bound[i].name ? bound[i].name : "?",
                           g->tensors[g->inputs[0]]->name);
    }
    /* the inputs that take samples: all but the bound ones */
    int ni = 0;
    s->names = calloc((size_t)g->n_inputs, sizeof(char *));
    if (!s->names) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status st = Q8_OK;
    for (int k = 0; k < g->n_inputs && st == Q8_OK; k++) {
        const char *name = g->tensors[g->inputs[k]]->name;
        if (q8_input_is_bound(name, bound, n_bound)) continue;
        if (!(s->names[ni++] = q8_strdup(name))) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    s->n_inputs = ni;
    if (st == Q8_OK && ni < 1)
        st = q8_fail(err, Q8_ERR_ARG, "every input of the model is bound: nothing to calibrate");
    char ***lists = st == Q8_OK ? calloc((size_t)ni, sizeof(char **)) : NULL;
    int *counts = st == Q8_OK ? calloc((size_t)ni, sizeof(int)) : NULL;
    if (st == Q8_OK && (!lists || !counts)) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int k = 0; k < ni && st == Q8_OK; k++) {
        const char *name = s->names[k];
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, name);
        bool has_sub = is_dir(sub);
        bool flat = ni == 1 && !has_sub && !laid_out_per_input(dir, g);
        if (!flat && !has_sub) {
            if (ni == 1)
                st = q8_fail(err, Q8_ERR_IO,
                             "--calib %s: it holds one subfolder per input, but '%s/' (the input "
                             "that takes samples%s) is missing", dir, name,
                             n_bound ? ": the others are bound" : "");
            else
                st = q8_fail(err, Q8_ERR_IO,
                             "--calib %s: the model has %d inputs%s, so it needs one subfolder "
                             "per input; '%s/' is missing", dir, ni,
                             n_bound ? " besides the bound ones" : "", name);
            break;
        }
        counts[k] = list_tensor_files(flat ? dir : sub, &lists[k], err);
        if (counts[k] < 0) {
            counts[k] = 0;
            st = err ? err->status : Q8_ERR_IO;
        } else if (counts[k] == 0) {
            st = q8_fail(err, Q8_ERR_IO, "--calib: no .npy or .pb files in %s", flat ? dir : sub);
        } else if (k > 0 && counts[k] != counts[0]) {
            st = q8_fail(err, Q8_ERR_ARG, "--calib %s: input '%s' has %d samples, input '%s' has %d",
                         dir, name, counts[k], s->names[0], counts[0]);
        }
    }
    if (st == Q8_OK && ni > 1) st = check_pairing(dir, s->names, lists, ni, counts[0], err);
    if (st == Q8_OK) {
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
    for (int k = 0; lists && counts && k < ni; k++) {
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
