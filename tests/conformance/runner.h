/* ONNX backend conformance: run the node/pytorch/simple test cases that
 * Debian's libonnx-testdata installs and compare with their outputs. */
#ifndef Q8_CONFORMANCE_RUNNER_H
#define Q8_CONFORMANCE_RUNNER_H

#include <stdbool.h>
#include <stdio.h>

typedef struct q8c_result {
    int pass, fail, skip, stale; /* stale: listed as skipped but passes */
} q8c_result;

typedef struct q8c_options {
    const char *data_dir;   /* .../libonnx-testdata/data */
    const char *skip_file;  /* "name reason" lines */
    const char *filter;     /* substring of test names, or NULL */
    bool verbose;
    bool check_skipped;     /* also run skipped tests to find stale entries */
    int n_threads;
    FILE *report;           /* failures as "name<TAB>reason" lines, or NULL */
} q8c_options;

/* Returns false if the data folder cannot be read. */
bool q8c_run(const q8c_options *o, q8c_result *r);

#endif
