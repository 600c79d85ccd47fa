/* q8 public C API: load a model (.onnx or .q8), create a session, bind
 * inputs, run, read outputs. Every fallible call returns a q8_status and, on
 * failure, fills a q8_error with one line a person can act on. */
#ifndef Q8_H
#define Q8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q8_VERSION_STRING "0.1.0"
#define Q8_MAX_DIMS 8

typedef enum q8_status {
    Q8_OK = 0,
    Q8_ERR_ARG,         /* bad argument from the caller */
    Q8_ERR_IO,          /* file missing, unreadable, unwritable */
    Q8_ERR_FORMAT,      /* malformed or corrupt model / tensor file */
    Q8_ERR_UNSUPPORTED, /* valid input that q8 does not handle (op, dtype) */
    Q8_ERR_SHAPE,       /* shapes that do not fit together */
    Q8_ERR_NOMEM,       /* allocation failed */
    Q8_ERR_BACKEND      /* the compute backend failed (e.g. CUDA error) */
} q8_status;

typedef enum q8_dtype {
    Q8_UNDEFINED = 0,
    Q8_F32,
    Q8_F64,
    Q8_F16,
    Q8_I8,
    Q8_U8,
    Q8_I16,
    Q8_U16,
    Q8_I32,
    Q8_U32,
    Q8_I64,
    Q8_U64,
    Q8_BOOL,
    Q8_STRING,
    Q8_BF16,
    Q8_DTYPE_COUNT
} q8_dtype;

typedef struct q8_error {
    q8_status status;
    char msg[512];
} q8_error;

/* A tensor's type and shape. */
typedef struct q8_tensor_info {
    const char *name;
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
} q8_tensor_info;

typedef struct q8_model q8_model;
typedef struct q8_session q8_session;

/* Fix a dynamic input shape, e.g. {"input", 4, {1,3,224,224}}. An entry
 * with name NULL applies by position: the k-th unnamed entry fixes the k-th
 * graph input. Dims the model fixes must match. */
typedef struct q8_input_shape {
    const char *name;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
} q8_input_shape;

/* An input's value known at load (a sample rate, a shape, axes, pads...):
 * the model is built for it, so that the shapes and branches it decides
 * fold to constants. The input is then bound: it is no longer an input, a
 * .q8 file records its value, and a run that gives another value is
 * refused. data holds the value (dims fix its shape; ndim 0: a scalar). */
typedef struct q8_input_value {
    const char *name;
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    const void *data;
} q8_input_value;

typedef struct q8_load_options {
    const q8_input_shape *input_shapes;
    int n_input_shapes;
    /* ONNX models: inputs bound to these values. A .q8 model: each must
     * name an input bound when it was built, with the same value. */
    const q8_input_value *input_values;
    int n_input_values;
} q8_load_options;

typedef enum q8_device {
    Q8_DEVICE_CPU = 0,
    Q8_DEVICE_CUDA = 1
} q8_device;

typedef struct q8_session_options {
    int n_threads;       /* 0: one per online CPU */
    q8_device device;
    int profile;         /* 1: time every node (see q8_session_node_profile) */
    /* CPU with n_threads > 1: by default runs use the thread pool or the
     * calling thread alone, whichever measured faster (both are timed now
     * and then during runs; the outputs are the same bits either way).
     * 1: always the pool. */
    int fixed_threads;
    /* CUDA: a node the device has no kernel for runs on the host by default
     * (its inputs copied from the device and its outputs back, in the same
     * stream; counted in q8_session_stats.host_nodes). 1: refuse the model
     * instead, naming the node. */
    int strict_device;
} q8_session_options;

/* Sizes of the session's buffers, for reports and --json. */
typedef struct q8_memory_info {
    size_t weights_bytes;   /* constants the run uses, plus the kernels'
                               pre-packed copies of weights */
    size_t arena_bytes;     /* planned activation + scratch peak */
    size_t device_bytes;    /* bytes q8 allocated on the device (CUDA) */
    /* CUDA: how much the device's free memory (cudaMemGetInfo) dropped from
     * just before the session was created to just after its first run
     * (library handles, kernels loaded, the CUDA graph; not the CUDA context,
     * which exists before). Device-wide: other processes can disturb it. */
    size_t device_delta_bytes;
} q8_memory_info;

/* What the backend decided, for --json and reports. */
typedef struct q8_session_stats {
    /* CUDA: INT8 GEMMs for which cuBLASLt offered no algorithm, run by q8's
     * plain kernel instead (slow: a number to watch). */
    int igemm_fallbacks;
    /* CUDA: runs replay a captured CUDA graph (after the first run). */
    int graph;
    /* Constant bytes the device reads in place from the mapped .q8 file
     * (integrated GPUs, or Q8_CUDA_MAP=force), not copied. */
    size_t mapped_weights_bytes;
    /* CUDA: the largest host buffer constants passed through on their way
     * to the device at session creation (one node's computed or unpacked
     * constants; plain weights are copied from where they lie). */
    size_t weights_staging_bytes;
    /* CUDA: the last run's time on the device, from events around its
     * kernels (the input and output copies excluded), for comparisons with
     * frameworks timed the same way; -1 where not measured. */
    double device_ms;
    /* CPU: 1 when runs now use the calling thread alone because that
     * measured faster than the thread pool (see fixed_threads); 0 with no
     * pool or when the pool was faster. */
    int single_thread;
    /* The compute library the backend runs on, e.g. "cuBLASLt 130000";
     * empty for the CPU. */
    char library[64];
    /* CUDA: nodes run on the host because the device has no kernel for them
     * (see strict_device), the pinned host bytes their inputs and outputs
     * pass through, and which ops they are ("Conv x2, PRelu x28"). */
    int host_nodes;
    size_t host_bytes;
    char host_ops[128];
} q8_session_stats;

const char *q8_status_str(q8_status s);
/* Fill err (may be NULL) with a message and return st; prefix an already
 * filled message ("context: old message"). For programs that report their
 * own errors the way q8 does. */
q8_status q8_fail(q8_error *err, q8_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
q8_status q8_fail_prefix(q8_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Files, written the way q8 writes its own (the command-line tools use
 * these). An output path may hold a regular file (replaced) or nothing;
 * anything else there, links followed (a device such as /dev/null, a FIFO,
 * a socket, a folder), is refused, never replaced. */
q8_status q8_check_output_path(const char *path, q8_error *err);
/* Write n files all or nothing: each goes to a temp file beside it that
 * has no name while it is written (O_TMPFILE where the file system has it,
 * so a write killed by a signal leaves nothing behind), is fsync'd, and
 * only when all are complete are they renamed into place. On failure no
 * temp file is left and no target has been replaced, except when a rename
 * itself fails midway. Each path is checked as q8_check_output_path. */
q8_status q8_write_files_atomic(const char *const *paths, const void *const *data,
                                const size_t *len, int n, q8_error *err);
/* 1 when a and b name the same existing file (device and inode: "./x",
 * "x" and a hard link to x are all the same file), else 0. */
int q8_same_file(const char *a, const char *b);

/* Online CPUs (at least 1): the default thread count. */
int q8_cpu_count(void);
const char *q8_dtype_name(q8_dtype t);
size_t q8_dtype_size(q8_dtype t);
/* "1x3x224x224" (a scalar: "scalar"), for messages; returns buf. */
const char *q8_shape_str(const int64_t *dims, int ndim, char *buf, size_t n);

/* Model: parse, fix shapes, optimize the graph, plan memory. opts may be NULL. */
q8_status q8_model_load(const char *path, const q8_load_options *opts,
                        q8_model **out, q8_error *err);
void q8_model_free(q8_model *m);
int q8_model_num_inputs(const q8_model *m);
int q8_model_num_outputs(const q8_model *m);
q8_status q8_model_input_info(const q8_model *m, int i, q8_tensor_info *info, q8_error *err);
q8_status q8_model_output_info(const q8_model *m, int i, q8_tensor_info *info, q8_error *err);
/* Inputs bound to a value when the model was built (q8_input_value): not
 * counted among the inputs; setting one in a session checks the value. */
int q8_model_num_bound(const q8_model *m);
q8_status q8_model_bound_info(const q8_model *m, int i, q8_tensor_info *info, const void **data,
                              q8_error *err);

/* Session: one activation arena, threads, a backend. opts may be NULL.
 * The model must outlive the session. */
q8_status q8_session_create(const q8_model *m, const q8_session_options *opts,
                            q8_session **out, q8_error *err);
void q8_session_free(q8_session *s);
/* The session takes the model (freed with it, or at once if this fails)
 * and frees the model's copy of every weight as soon as its kernels hold
 * their own (packed): each weight is held once. For a model that makes one
 * session, like a command-line run. The model's info functions stay usable
 * while the session lives; the model must make no other session. */
q8_status q8_session_create_owning(q8_model *m, const q8_session_options *opts,
                                   q8_session **out, q8_error *err);

/* Copies data (dtype and shape must match the model's input). */
q8_status q8_session_set_input(q8_session *s, const char *name, q8_dtype dtype,
                               const int64_t *dims, int ndim, const void *data,
                               q8_error *err);
q8_status q8_session_run(q8_session *s, q8_error *err);
/* Points into the session's arena; valid until the next run or free. */
q8_status q8_session_output(const q8_session *s, int i, q8_tensor_info *info,
                            const void **data, q8_error *err);
void q8_session_memory(const q8_session *s, q8_memory_info *mi);
void q8_session_stats_get(const q8_session *s, q8_session_stats *st);

/* Nodes of the optimized graph, in execution order. With profile set in the
 * session options, total_ms is the time spent in node i over all runs. */
int q8_session_num_nodes(const q8_session *s);
q8_status q8_session_node_profile(const q8_session *s, int i, const char **name,
                                  const char **op_type, double *total_ms, q8_error *err);

#ifdef __cplusplus
}
#endif
#endif
