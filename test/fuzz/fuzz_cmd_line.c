/* Fuzz target: the command-line parser the tools share (opal_cmd_line),
 * with mcarun-like options. The input is split at NUL bytes into argv
 * words; the first byte chooses the flags. A successful parse must answer
 * every query consistently; a failed one must say why. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

static const opal_cmd_line_option_t options[] = {
    {"np", 'n', 1, "<n>", "ranks"},
    {"verbose", 'v', 0, NULL, "say more"},
    {"quiet", 'q', 0, NULL, NULL},
    {"mca", '\0', 2, "<key> <value>", "set a variable"},
    {"gmca", '\0', 2, "<key> <value>", NULL},
    {"x", '\0', 1, NULL, "export"},
    {"bind-to", '\0', 1, NULL, NULL},
    {"tag.output", 't', 0, NULL, NULL},
    {NULL, '\0', 0, NULL, NULL},
};

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    int flags = (data[0] & 1) ? OPAL_CMD_LINE_STOP_AT_POSITIONAL : 0;
    char *text = malloc(size);
    char *argv[MAX_WORDS + 2];
    if (NULL == text) {
        return 0;
    }
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    int argc = 0;
    argv[argc++] = "prog";
    for (char *p = text; p < text + size - 1 && argc <= MAX_WORDS; p += strlen(p) + 1) {
        argv[argc++] = p;
    }
    argv[argc] = NULL;

    opal_cmd_line_t *cmd = OBJ_NEW(opal_cmd_line_t);
    if (NULL == cmd || OPAL_SUCCESS != opal_cmd_line_add(cmd, options)) {
        abort();
    }
    int rc = opal_cmd_line_parse(cmd, argc, argv, flags);
    if (OPAL_SUCCESS == rc) {
        if (NULL != opal_cmd_line_get_error(cmd)) {
            abort();
        }
        int count = -1;
        char **pos = opal_cmd_line_get_positional(cmd, &count);
        if (NULL == pos || count < 0 || count >= argc || NULL != pos[count]) {
            abort();
        }
        for (const opal_cmd_line_option_t *o = options; NULL != o->long_name; ++o) {
            int n = opal_cmd_line_get_ninsts(cmd, o->long_name);
            if (n < 0 || (n > 0) != opal_cmd_line_is_taken(cmd, o->long_name)) {
                abort();
            }
            for (int i = 0; i < n; ++i) {
                for (int j = 0; j < o->num_args; ++j) {
                    if (NULL == opal_cmd_line_get_param(cmd, o->long_name, i, j)) {
                        abort();
                    }
                }
                if (NULL != opal_cmd_line_get_param(cmd, o->long_name, i, o->num_args)) {
                    abort();
                }
            }
        }
        opal_list_t params;
        OBJ_CONSTRUCT(&params, opal_list_t);
        (void) opal_cmd_line_get_mca_params(cmd, &params);
        OPAL_LIST_DESTRUCT(&params);
    } else if (NULL == opal_cmd_line_get_error(cmd) ||
               (OPAL_ERR_UNKNOWN_NAME != rc && OPAL_ERR_BAD_PARAM != rc &&
                OPAL_ERR_OUT_OF_RESOURCE != rc)) {
        abort();
    }
    char *usage = opal_cmd_line_get_usage_msg(cmd, (int) (data[0] >> 1));
    free(usage);
    OBJ_RELEASE(cmd);
    free(text);
    return 0;
}
