/*
 * "Did you mean ...?": the registered name nearest to a mistyped one, by
 * optimal string alignment distance (Levenshtein plus the transposition
 * of two adjacent characters, the commonest typing slip).
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var_internal.h"

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int mca_base_var_distance(const char *a, const char *b, int limit)
{
    int la = (int) strlen(a), lb = (int) strlen(b);
    if (abs(la - lb) > limit) {
        return limit + 1;
    }
    /* Three rows of the dynamic-programming table: two back for the
     * transposition, one back, and the one being filled. */
    int *rows = malloc(3 * sizeof(int) * (size_t) (lb + 1));
    if (NULL == rows) {
        return limit + 1;
    }
    int *prev2 = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1);
    for (int j = 0; j <= lb; ++j) {
        prev[j] = j;
    }
    int result = limit + 1;
    for (int i = 1; i <= la; ++i) {
        cur[0] = i;
        int row_min = cur[0];
        char ca = (char) tolower((unsigned char) a[i - 1]);
        for (int j = 1; j <= lb; ++j) {
            char cb = (char) tolower((unsigned char) b[j - 1]);
            int cost = ca == cb ? 0 : 1;
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && ca == tolower((unsigned char) b[j - 2]) &&
                tolower((unsigned char) a[i - 2]) == cb && prev2[j - 2] + 1 < cur[j]) {
                cur[j] = prev2[j - 2] + 1;
            }
            if (cur[j] < row_min) {
                row_min = cur[j];
            }
        }
        /* Every later row is at least this row's minimum (a transposition
         * only reaches back to values already counted). */
        if (row_min > limit) {
            goto out;
        }
        int *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    result = prev[lb] <= limit ? prev[lb] : limit + 1;

out:
    free(rows);
    return result;
}

char *mca_base_var_suggest(const char *name)
{
    if (NULL == name || '\0' == *name) {
        return NULL;
    }
    /* One edit per four characters finds the usual slips (a dropped,
     * doubled or swapped letter, a wrong separator) without offering an
     * unrelated name for a short one. */
    int limit = ((int) strlen(name) + 3) / 4;
    limit = limit < 1 ? 1 : limit > 4 ? 4 : limit;

    char *best = NULL;
    mca_base_var_lock();
    int best_distance = limit + 1;
    int count = 0 == mca_base_var_state.init_count
                    ? 0
                    : opal_pointer_array_get_size(&mca_base_var_state.vars);
    for (int i = 0; i < count && best_distance > 0; ++i) {
        mca_base_var_priv_t *var = mca_base_var_lookup(i);
        /* Never steer users towards a name that is going away. */
        if (NULL == var || 0 != (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_DEPRECATED)) {
            continue;
        }
        /* Strictly better only: ties go to the earliest registered. */
        int d = mca_base_var_distance(name, var->pub.mbv_full_name, best_distance - 1);
        if (d < best_distance) {
            best_distance = d;
            best = var->pub.mbv_full_name;
        }
    }
    char *result = NULL != best ? strdup(best) : NULL;
    mca_base_var_unlock();
    return result;
}
