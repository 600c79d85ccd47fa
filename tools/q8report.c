/* q8report: an FP32 model and its quantized versions side by side.
 *
 *   q8report MODEL.onnx MODEL.q8 [MORE.q8 ...] --data DIR [--labels FILE.npy]
 *            [--device cpu|cuda] [--runs N] [--threads N] [--bind NAME=FILE]...
 *            -o report.html
 *
 * Writes report.html, report.json and report.md side by side (all or none,
 * each through a temp file and a rename). See docs/reports.md. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: q8report MODEL.onnx MODEL.q8 [MORE.q8 ...] --data DIR [--labels FILE.npy]\n"
            "                [--device cpu|cuda] [--runs N] [--threads N] [--bind NAME=FILE]...\n"
            "                -o REPORT.html\n"
            "  Compares each .q8 with the FP32 model: size, memory, latency, accuracy and\n"
            "  per-layer error on the samples in DIR (one .npy/.pb file per sample, one\n"
            "  subfolder per input for multi-input models). Writes REPORT.html, REPORT.json\n"
            "  and REPORT.md.\n"
            "  --bind: an input bound when the .q8 files were made (quantize --bind): the\n"
            "  FP32 model is built with the same value, and DIR needs no samples of it.\n");
}

/* "out/report.html" -> "out/report" + each extension */
static char *with_ext(const char *base, size_t blen, const char *ext) {
    char *p = malloc(blen + strlen(ext) + 1);
    if (p) {
        memcpy(p, base, blen);
        strcpy(p + blen, ext);
    }
    return p;
}

/* Outputs whose one SQNR hides a bad sample or channel (q8_report_output_hides). */
static void print_hidden_error(const q8_report_model *q) {
    for (int j = 0; j < q->n_outputs; j++) {
        const q8_report_output *o = &q->outputs[j];
        bool sample, chan;
        if (!q8_report_output_hides(q, j, &sample, &chan)) continue;
        char d1[32], d2[32];
        printf("; output %s:", o->name);
        if (sample)
            printf(" worst sample %s (%s)", q8_fmt_db(o->worst_sample_db, d1, sizeof d1),
                   q8_report_basename(o->worst_sample_path));
        if (chan)
            printf("%s channels' median %s (worst %s: channel %lld of %lld)", sample ? "," : "",
                   q8_fmt_db(o->channel_median_db, d1, sizeof d1),
                   q8_fmt_db(o->channel_worst_db, d2, sizeof d2), (long long)o->channel_worst,
                   (long long)o->channels);
    }
}

/* The answers, in a few lines. */
static void print_summary(const q8_report *r, char *const *paths) {
    const q8_report_model *f = &r->models[0];
    for (int i = 1; i < r->n_models; i++) {
        const q8_report_model *q = &r->models[i];
        q8_report_delta d = q8_report_delta_of(f, q);
        char a[32], b[32], c[32];
        printf("%s: %sx the file size, %sx the peak memory, %sx the latency",
               q8_report_basename(q->path), q8_fmt_sig(d.size_ratio, a, sizeof a),
               q8_fmt_sig(d.peak_rss_ratio, b, sizeof b), q8_fmt_sig(d.latency_ratio, c, sizeof c));
        if (!isnan(d.top1_drop_points))
            printf(", top-1 %.2f%% -> %.2f%% (%+.2f points)", 100 * q8_report_top1(f),
                   100 * q8_report_top1(q),
                   fabs(d.top1_drop_points) < 5e-5 ? 0.0 : -d.top1_drop_points);
        char db[32];
        printf(", output SQNR %s, cosine %.5f",
               q8_fmt_db(q8_report_worst_output_sqnr(q), db, sizeof db),
               q8_report_worst_output_cosine(q));
        if (q->agree_kind == Q8_AGREE_MASK && !isnan(d.agreement))
            printf(", %s %.4f", q8_agree_kind_label(q->agree_kind), d.agreement);
        else if (!isnan(d.agreement))
            printf(", %s %.2f%%", q8_agree_kind_label(q->agree_kind), 100 * d.agreement);
        print_hidden_error(q);
        if (q->n_layers) {
            printf("; worst layer %s (%s)", q->layers[0].node,
                   q8_fmt_db(q8_err_sqnr_db(&q->layers[0].in_model), db, sizeof db));
        }
        printf("\n");
    }
    printf("wrote %s, %s, %s\n", paths[0], paths[1], paths[2]);
}

int main(int argc, char **argv) {
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},   {"labels", required_argument, 0, 'l'},
        {"device", required_argument, 0, 'D'}, {"runs", required_argument, 0, 'r'},
        {"threads", required_argument, 0, 't'}, {"output", required_argument, 0, 'o'},
        {"bind", required_argument, 0, 'B'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    q8_report_options o = {.runs = 10, .device = Q8_DEVICE_CPU};
    static q8_input_value values[64];
    static q8_host_tensor *bound[64];
    const char *out = NULL;
    long v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "d:l:D:r:t:o:B:h", opts, NULL)) != -1) {
        switch (c) {
        case 'B':
            if (o.n_input_values == 64) {
                fprintf(stderr, "q8report: --bind: at most 64\n");
                return 2;
            }
            if (!q8_cli_parse_bind("q8report", optarg, &values[o.n_input_values],
                                   &bound[o.n_input_values]))
                return 2;
            o.input_values = values;
            o.n_input_values++;
            break;
        case 'd': o.data_dir = optarg; break;
        case 'l': o.labels_path = optarg; break;
        case 'D':
            if (!strcmp(optarg, "cpu")) o.device = Q8_DEVICE_CPU;
            else if (!strcmp(optarg, "cuda")) o.device = Q8_DEVICE_CUDA;
            else {
                fprintf(stderr, "q8report: --device must be cpu or cuda, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'r':
            if (!q8_cli_parse_int(optarg, 1, 1000000, &v)) {
                fprintf(stderr, "q8report: --runs needs a number of runs >= 1, not '%s'\n", optarg);
                return 2;
            }
            o.runs = (int)v;
            break;
        case 't':
            if (!q8_cli_parse_int(optarg, 1, 1024, &v)) {
                fprintf(stderr, "q8report: --threads needs a number from 1 to 1024, not '%s'\n",
                        optarg);
                return 2;
            }
            o.n_threads = (int)v;
            break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "q8report: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    const char *missing = argc - optind < 2 ? "give the FP32 MODEL.onnx and at least one MODEL.q8"
                          : !o.data_dir      ? "--data DIR is required (the samples to compare on)"
                          : !out             ? "-o REPORT.html is required"
                                             : NULL;
    if (missing) {
        fprintf(stderr, "q8report: %s\n", missing);
        usage(stderr);
        return 2;
    }
    size_t blen = strlen(out);
    if (blen > 5 && !strcmp(out + blen - 5, ".html")) blen -= 5;
    /* "", "dir/", "dir/.html", ".": no file name to give the three files */
    const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
    size_t base_len = blen - (size_t)(base - out);
    if (base_len == 0 || (base_len == 1 && base[0] == '.') ||
        (base_len == 2 && !strncmp(base, "..", 2))) {
        fprintf(stderr, "q8report: -o '%s' names no file: give one like -o report.html (the "
                "report is written to NAME.html, NAME.json and NAME.md)\n", out);
        return 2;
    }
    char *paths[3] = {with_ext(out, blen, ".html"), with_ext(out, blen, ".json"),
                      with_ext(out, blen, ".md")};
    /* Never over a file this run reads: compared as files, so "./m.json",
     * "m.json" and a hard link to it are all the same. */
    const char *clash = NULL;
    for (int i = optind; i < argc + 2 && !clash; i++) { /* the models, --data, --labels */
        const char *in = i < argc ? argv[i] : i == argc ? o.data_dir : o.labels_path;
        for (int k = 0; in && k < 3 && !clash; k++)
            if (paths[k] && q8_same_file(paths[k], in)) {
                fprintf(stderr, "q8report: refusing to overwrite '%s', which this report reads, "
                        "with %s\n", in, paths[k]);
                clash = in;
            }
    }
    if (clash) {
        for (int k = 0; k < 3; k++) free(paths[k]);
        return 2;
    }
    q8_error err = {0};
    q8_report r = {0};
    char *docs[3] = {0};
    int rc = 1;
    if (!paths[0] || !paths[1] || !paths[2]) {
        q8_fail(&err, Q8_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* The folder must be writable before minutes of measuring, not after. */
    char dir[4096];
    const char *slash = strrchr(out, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
    if (!*dir) snprintf(dir, sizeof dir, "/");
    errno = 0;
    if (!q8_cli_mkdirs(dir) || access(dir, W_OK) != 0) {
        q8_fail(&err, Q8_ERR_IO, "cannot write the report into '%s': %s", dir,
                errno ? strerror(errno) : "not a folder");
        goto done;
    }
    for (int k = 0; k < 3; k++)
        if (q8_check_output_path(paths[k], &err) != Q8_OK) goto done;
    if (q8_report_build((const char *const *)argv + optind, argc - optind, &o, &r, &err) != Q8_OK)
        goto done;
    for (int i = 1; i < r.n_models; i++)
        if (r.models[i].source_matches == 0)
            fprintf(stderr,
                    "q8report: warning: %s was quantized from a different ONNX file than %s "
                    "(source.sha256 differs): the comparison may be meaningless\n",
                    r.models[i].path, r.models[0].path);
    if (q8_report_html(&r, &docs[0], &err) != Q8_OK ||
        q8_report_json(&r, &docs[1], &err) != Q8_OK ||
        q8_report_markdown(&r, &docs[2], &err) != Q8_OK)
        goto done;
    size_t lens[3];
    for (int k = 0; k < 3; k++) lens[k] = strlen(docs[k]);
    if (q8_write_files_atomic((const char *const *)paths, (const void *const *)docs, lens, 3,
                              &err) != Q8_OK)
        goto done;
    print_summary(&r, paths);
    rc = 0;
done:
    if (rc) q8_cli_error("q8report", err.msg);
    q8_report_free(&r);
    for (int k = 0; k < 3; k++) {
        free(docs[k]);
        free(paths[k]);
    }
    return rc;
}
