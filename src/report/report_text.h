/* A growing text buffer and the number formats the report renderers share. */
#ifndef Q8_REPORT_TEXT_H
#define Q8_REPORT_TEXT_H

#include "report.h"

typedef struct q8_sbuf {
    char *p;
    size_t len, cap;
    bool oom;               /* an append failed: the text is incomplete */
} q8_sbuf;

void q8_sb_printf(q8_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void q8_sb_puts(q8_sbuf *b, const char *s);
/* JSON string literal with quotes; JSON number, or null when not finite. */
void q8_sb_json_str(q8_sbuf *b, const char *s);
void q8_sb_json_num(q8_sbuf *b, double v);
/* Text with & < > " ' escaped, for HTML content and attribute values. */
void q8_sb_html(q8_sbuf *b, const char *s);
/* Markdown table cell: | and newlines escaped, backticks dropped. */
void q8_sb_md(q8_sbuf *b, const char *s);
/* Hand the text over (NUL-terminated) or fail on out-of-memory. */
q8_status q8_sb_finish(q8_sbuf *b, char **out, q8_error *err);

/* "1.23 MiB", "308 KiB", "512 B" */
const char *q8_fmt_bytes(double bytes, char *buf, size_t n);
/* "47.9 ms", "8.63 us" (microseconds below 1 ms) */
const char *q8_fmt_ms(double ms, char *buf, size_t n);

/* Derived numbers of quantized model q against FP32 model f. */
/* The layers with the lowest SQNR alone (their own error: the ones to try
 * in FP32 first), up to max, lowest first; returns the count. */
int q8_report_causes(const q8_report_model *m, const q8_report_layer **out, int max);
/* An output's error beyond its one SQNR: "worst sample 9.1 dB (x/3.npy);
 * per channel (85, axis 2): median 18.2 dB, worst 11.0 dB (channel 4)",
 * as HTML or Markdown; false (nothing written) when neither was measured. */
bool q8_report_output_detail(q8_sbuf *b, const q8_report_output *o, bool html);
/* Does some quantized model of r have such detail for output o? */
bool q8_report_any_output_detail(const q8_report *r, int o);
/* How a .q8 was made, in sentences (calibration, pruning, FP32 layers,
 * the --max-drop search), as HTML or Markdown. */
void q8_report_provenance(q8_sbuf *b, const q8_report_model *m, bool html);

#endif
