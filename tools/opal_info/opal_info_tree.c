/*
 * The facts behind parsable and JSON output: a tree whose paths are the
 * parsable keys ("mca", "mcatest", "good", "version", "mca") and whose
 * leaves hold the values. The sections put facts in the order that suits
 * them (a component's versions while listing components, its variables
 * later); the tree gathers each thing's facts under one node, so JSON gets
 * every object once and parsable output the same facts, grouped alike.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/opal_info/opal_info.h"
#include "opal/util/opal_error.h"

/* Longest path a section puts (mca:fw:comp:param:name:synonym:name:key). */
#define MAX_DEPTH 12

opal_info_node_t *opal_info_tree_new(void)
{
    return calloc(1, sizeof(opal_info_node_t));
}

void opal_info_tree_free(opal_info_node_t *root)
{
    while (NULL != root) {
        opal_info_node_t *next = root->next;
        opal_info_tree_free(root->first_child);
        free(root->key);
        free(root->value);
        free(root);
        root = next;
    }
}

static opal_info_node_t *child(opal_info_node_t *parent, const char *key, bool *created)
{
    *created = false;
    /* Facts about one thing come together: the last child is the usual
     * match, and checking it first keeps long lists linear. */
    if (NULL != parent->last_child && 0 == strcmp(parent->last_child->key, key)) {
        return parent->last_child;
    }
    for (opal_info_node_t *c = parent->first_child; NULL != c; c = c->next) {
        if (0 == strcmp(c->key, key)) {
            return c;
        }
    }
    opal_info_node_t *node = calloc(1, sizeof(*node));
    if (NULL == node) {
        return NULL;
    }
    node->key = strdup(key);
    if (NULL == node->key) {
        free(node);
        return NULL;
    }
    if (NULL == parent->last_child) {
        parent->first_child = node;
    } else {
        parent->last_child->next = node;
    }
    parent->last_child = node;
    *created = true;
    return node;
}

int opal_info_tree_put(opal_info_node_t *root, opal_info_kind_t kind, const char *value,
                       const char *const *path, size_t depth)
{
    if (0 == depth || NULL != root->value) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_info_node_t *node = root;
    for (size_t i = 0; i < depth; ++i) {
        bool created;
        node = child(node, path[i], &created);
        if (NULL == node) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        bool leaf = i + 1 == depth;
        /* A leaf cannot hold children, nor an inner node a value: the
         * JSON object would need both. */
        if (!created && (leaf ? NULL != node->first_child : NULL != node->value)) {
            return OPAL_ERR_BAD_PARAM;
        }
    }
    char *copy = strdup(NULL != value ? value : "");
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    free(node->value);
    node->value = copy;
    node->kind = kind;
    return OPAL_SUCCESS;
}

static void put_path(opal_info_t *info, opal_info_kind_t kind, const char *value, va_list ap)
{
    const char *path[MAX_DEPTH] = {NULL};
    size_t depth = 0;
    for (const char *key = va_arg(ap, const char *); NULL != key; key = va_arg(ap, const char *)) {
        if (depth == MAX_DEPTH) {
            opal_info_error(info, "internal error: a fact's path is too long (%s...)", path[0]);
            return;
        }
        path[depth++] = key;
    }
    int rc = opal_info_tree_put(info->tree, kind, value, path, depth);
    if (OPAL_SUCCESS != rc) {
        opal_info_error(info, "cannot record %s...: %s", depth > 0 ? path[0] : "(nothing)",
                        opal_strerror(rc));
    }
}

void opal_info_put(opal_info_t *info, const char *value, ...)
{
    if (NULL == info->tree) {
        return;
    }
    va_list ap;
    va_start(ap, value);
    put_path(info, OPAL_INFO_STRING, value, ap);
    va_end(ap);
}

void opal_info_put_int(opal_info_t *info, long value, ...)
{
    if (NULL == info->tree) {
        return;
    }
    char text[32];
    snprintf(text, sizeof(text), "%ld", value);
    va_list ap;
    va_start(ap, value);
    put_path(info, OPAL_INFO_INT, text, ap);
    va_end(ap);
}

void opal_info_put_bool(opal_info_t *info, int value, ...)
{
    if (NULL == info->tree) {
        return;
    }
    va_list ap;
    va_start(ap, value);
    put_path(info, OPAL_INFO_BOOL, value ? "true" : "false", ap);
    va_end(ap);
}

static void print_parsable(FILE *out, const opal_info_node_t *node, const char **keys, size_t depth)
{
    for (; NULL != node; node = node->next) {
        keys[depth] = node->key;
        if (NULL != node->value) {
            for (size_t i = 0; i <= depth; ++i) {
                opal_info_escape_parsable(out, keys[i]);
                fputc(':', out);
            }
            opal_info_escape_parsable(out, node->value);
            fputc('\n', out);
        } else if (depth + 1 < MAX_DEPTH) {
            print_parsable(out, node->first_child, keys, depth + 1);
        }
    }
}

void opal_info_tree_print_parsable(FILE *out, const opal_info_node_t *root)
{
    const char *keys[MAX_DEPTH];
    print_parsable(out, root->first_child, keys, 0);
}

static void print_json(FILE *out, const opal_info_node_t *node, int indent)
{
    fputc('{', out);
    for (const opal_info_node_t *c = node->first_child; NULL != c; c = c->next) {
        fprintf(out, "\n%*s", indent + 2, "");
        opal_info_escape_json(out, c->key);
        fputs(": ", out);
        if (NULL == c->value) {
            print_json(out, c, indent + 2);
        } else if (OPAL_INFO_STRING == c->kind) {
            opal_info_escape_json(out, c->value);
        } else {
            /* Numbers and booleans were written by opal_info_put_int and
             * opal_info_put_bool: valid JSON as they are. */
            fputs(c->value, out);
        }
        if (NULL != c->next) {
            fputc(',', out);
        }
    }
    if (NULL != node->first_child) {
        fprintf(out, "\n%*s", indent, "");
    }
    fputc('}', out);
}

void opal_info_tree_print_json(FILE *out, const opal_info_node_t *root)
{
    print_json(out, root, 0);
    fputc('\n', out);
}
