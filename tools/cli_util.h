/* Helpers shared by the command-line tools. */
#ifndef Q8_CLI_UTIL_H
#define Q8_CLI_UTIL_H

#include <stdio.h>

#include "q8.h"
#include "q8_tools.h"

/* "1x3x224x224" (or with commas); false on bad syntax. */
bool q8_cli_parse_dims(const char *s, int64_t *dims, int *ndim);
/* --bind NAME=FILE (arg is modified: v->name points into it): reads FILE
 * into *t (the caller frees it with q8_host_tensor_free after the model
 * is built) and fills v. False, with one line on stderr, on bad syntax or
 * an unreadable file. */
bool q8_cli_parse_bind(const char *tool, char *arg, q8_input_value *v, q8_host_tensor **t);
/* NAME=DIMS -> q8_input_shape (name points into s, which is modified). */
bool q8_cli_parse_input_shape(char *s, q8_input_shape *out);
/* Every dim at least 1, else "TOOL: --input-shape ...: every dim must be at
 * least 1" on stderr and false (a model for 0 rows computes nothing). */
bool q8_cli_dims_positive(const char *tool, const q8_input_shape *s);
/* Output name -> file name: characters outside [A-Za-z0-9._-] become '_'. */
void q8_cli_sanitize(const char *name, char *out, size_t n);
/* mkdir -p */
bool q8_cli_mkdirs(const char *dir);
double q8_cli_now_ms(void);
size_t q8_cli_peak_rss(void);
/* JSON string with quotes and escapes. */
void q8_cli_json_str(FILE *f, const char *s);
/* Median / min / max of n values (sorts v). */
void q8_cli_stats(double *v, int n, double *median, double *mn, double *mx);
/* Print "NAME=VALUE" style tensor preview: up to max values. */
void q8_cli_print_tensor(FILE *f, const char *name, q8_dtype dt, const int64_t *dims, int ndim,
                         const void *data, int max);
/* Print "TOOL: MSG" as one line: control characters in msg (which may
 * quote names from a model file) are escaped, so a crafted name can neither
 * add lines nor send terminal escapes. An empty msg prints a generic one. */
void q8_cli_error(const char *tool, const char *msg);
/* "TOOL: warning: MSG", escaped the same way. */
void q8_cli_warn(const char *tool, const char *msg);
/* Parse a positive int; false on junk. */
bool q8_cli_parse_int(const char *s, long lo, long hi, long *out);

#endif
