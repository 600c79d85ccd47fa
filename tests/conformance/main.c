/* q8conformance [--filter SUBSTR] [--report FILE] [--check-skipped] [-v]:
 * the conformance runner as a command, for development. */
#include <stdlib.h>
#include <string.h>

#include "runner.h"

int main(int argc, char **argv) {
    q8c_options o = {.data_dir = "/usr/share/libonnx-testdata/data",
                     .skip_file = Q8_SOURCE_DIR "/tests/conformance/skip.txt",
                     .n_threads = 2};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) o.filter = argv[++i];
        else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc) o.report = fopen(argv[++i], "w");
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) o.data_dir = argv[++i];
        else if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc) o.skip_file = argv[++i];
        else if (strcmp(argv[i], "--check-skipped") == 0) o.check_skipped = true;
        else if (strcmp(argv[i], "-v") == 0) o.verbose = true;
        else {
            fprintf(stderr, "usage: q8conformance [--filter S] [--report FILE] [--data DIR] [--skip FILE] [--check-skipped] [-v]\n");
            return 2;
        }
    }
    q8c_result r;
    if (!q8c_run(&o, &r)) {
        fprintf(stderr, "q8conformance: no test data under %s (install libonnx-testdata)\n", o.data_dir);
        return 2;
    }
    printf("conformance: %d passed, %d failed, %d skipped (%d stale skips)\n", r.pass, r.fail, r.skip,
           r.stale);
    if (o.report) fclose(o.report);
    return r.fail || r.stale ? 1 : 0;
}
