/*
 * Fuzz target: na/btl's URI parser and business-card decoder
 * (opal/mca/na/btl/na_btl_wire.c), what a process reads from a URI
 * another one gave it ("job/<jobid>/<rank>", "card/<hex>"). The input is
 * the URI's component part; its bytes are also decoded as a card.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/btl/na_btl_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (NULL == text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    char why[NA_BTL_WHY_MAX];
    na_btl_uri_t uri;
    if (0 == na_btl_uri_parse(text, &uri, why)) {
        /* What parsed formats back to a URI that parses the same. */
        size_t n = 0;
        (void) na_btl_uri_format(NULL, &n, uri.jobid, uri.rank, uri.card, uri.card_size);
        char *again = malloc(n);
        if (NULL != again &&
            0 == na_btl_uri_format(again, &n, uri.jobid, uri.rank, uri.card, uri.card_size)) {
            na_btl_uri_t back;
            if (0 != na_btl_uri_parse(again, &back, why) || back.jobid != uri.jobid ||
                back.rank != uri.rank || back.card_size != uri.card_size) {
                abort();
            }
            free(back.card);
        }
        free(again);
        free(uri.card);
    }
    na_btl_card_t *card = malloc(sizeof(*card));
    if (NULL != card) {
        (void) na_btl_card_decode(data, size, card, why);
        free(card);
    }
    free(text);
    return 0;
}
