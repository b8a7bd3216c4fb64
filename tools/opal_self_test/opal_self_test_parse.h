/*
 * opal_self_test's parsers of the command line's two lists, in DAOS CaRT
 * self_test's syntax. Both are outside input: every error names the
 * option, the value and what is wrong in it (err, one line).
 *
 *   --endpoint ranks:contexts     ranks and contexts are comma lists of
 *                                 N or N-M: "0-3:0", "1,3:0-1"
 *   --message-size '(a b) (c d)'  pairs (input output); a lone size is
 *                                 both; a size is digits with an optional
 *                                 k, m or g (binary) and an optional 'b'
 *                                 (by bulk) or 'i' (inline, the default)
 *                                 before it. Without parentheses the pairs
 *                                 are separated by commas: "0 0,b1m 0".
 */
#ifndef OPAL_TOOLS_OPAL_SELF_TEST_PARSE_H
#define OPAL_TOOLS_OPAL_SELF_TEST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest size either way (the engine's own limit for one argument). */
#define ST_MAX_SIZE ((uint64_t) 1 << 30)
/* At most this many pairs, and endpoints over all --endpoint options. */
#define ST_MAX_SIZES     1024
#define ST_MAX_ENDPOINTS (1u << 20)
/* Context indexes are 0..254 (opal_rpc_context_create). */
#define ST_MAX_CONTEXT 254

typedef struct st_size_t {
    uint64_t in_size;
    uint64_t out_size;
    bool in_bulk;  /* the server pulls the input from the client's handle */
    bool out_bulk; /* the server pushes the output into the client's handle */
} st_size_t;

typedef struct st_endpoint_t {
    uint32_t rank;
    uint8_t ctx;
} st_endpoint_t;

/* Replaces *sizes (malloc'd, *count of them) with the pairs of text.
 * OPAL_ERR_BAD_PARAM with err filled on a bad list (*sizes untouched). */
int st_parse_message_sizes(const char *text, st_size_t **sizes, size_t *count, char *err,
                           size_t errlen);

/* Appends the endpoints of text to *eps (*count of them), sorted by rank
 * and context, each once. OPAL_ERR_BAD_PARAM with err filled on a bad
 * value (*eps untouched). */
int st_parse_endpoints(const char *text, st_endpoint_t **eps, size_t *count, char *err,
                       size_t errlen);

/* "(b1048576 0)": the pair as the user would write it. */
void st_size_label(const st_size_t *s, char *buf, size_t len);

#endif /* OPAL_TOOLS_OPAL_SELF_TEST_PARSE_H */
