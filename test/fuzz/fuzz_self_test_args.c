/* Fuzz target: opal_self_test's --message-size and --endpoint parsers
 * (tools/opal_self_test/opal_self_test_parse.c), outside input from the
 * command line. The first byte chooses the parser (even: sizes, odd:
 * endpoints, given twice to exercise the appending); the rest, up to a
 * NUL, is the value. A success must hold only what the syntax allows; a
 * refusal must name the option and leave the output untouched. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"
#include "tools/opal_self_test/opal_self_test_parse.h"

static void sizes(const char *text)
{
    st_size_t *s = NULL;
    size_t n = 0;
    char err[512] = "";
    int rc = st_parse_message_sizes(text, &s, &n, err, sizeof(err));
    if (OPAL_SUCCESS != rc) {
        if (NULL != s || 0 != n || NULL == strstr(err, "--message-size")) {
            abort();
        }
        return;
    }
    if (NULL == s || 0 == n || n > ST_MAX_SIZES) {
        abort();
    }
    for (size_t i = 0; i < n; ++i) {
        if (s[i].in_size > ST_MAX_SIZE || s[i].out_size > ST_MAX_SIZE ||
            (s[i].in_bulk && 0 == s[i].in_size) || (s[i].out_bulk && 0 == s[i].out_size)) {
            abort();
        }
        /* The label reads back as the same pair. */
        char label[80];
        st_size_label(&s[i], label, sizeof(label));
        st_size_t *back = NULL;
        size_t m = 0;
        if (OPAL_SUCCESS != st_parse_message_sizes(label, &back, &m, err, sizeof(err)) || 1 != m ||
            back->in_size != s[i].in_size || back->out_size != s[i].out_size ||
            back->in_bulk != s[i].in_bulk || back->out_bulk != s[i].out_bulk) {
            abort();
        }
        free(back);
    }
    free(s);
}

static void endpoints(const char *text)
{
    st_endpoint_t *e = NULL;
    size_t n = 0;
    char err[512] = "";
    for (int pass = 0; pass < 2; ++pass) {
        size_t before = n;
        st_endpoint_t *was = e;
        int rc = st_parse_endpoints(text, &e, &n, err, sizeof(err));
        if (OPAL_SUCCESS != rc) {
            if (e != was || n != before || NULL == strstr(err, "--endpoint")) {
                abort();
            }
            break;
        }
        /* Sorted, each once, in range; a second pass adds nothing new. */
        if (0 == n || n > ST_MAX_ENDPOINTS || (1 == pass && n != before)) {
            abort();
        }
        for (size_t i = 0; i < n; ++i) {
            if (e[i].ctx > ST_MAX_CONTEXT || e[i].rank == UINT32_MAX ||
                (i > 0 && (e[i - 1].rank > e[i].rank ||
                           (e[i - 1].rank == e[i].rank && e[i - 1].ctx >= e[i].ctx)))) {
                abort();
            }
        }
    }
    free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    char *text = malloc(size);
    if (NULL == text) {
        return 0;
    }
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (0 == (data[0] & 1)) {
        sizes(text);
    } else {
        endpoints(text);
    }
    free(text);
    return 0;
}
