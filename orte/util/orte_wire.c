/*
 * The launcher socket's message format: explicit little-endian fields, and
 * a decoder that trusts nothing it reads.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "orte/util/orte_wire.h"

/* Bytes each type's fixed fields take, and whether it carries a key, a
 * text and a value (each adds its length field and up to its maximum). */
typedef struct type_info_t {
    const char *name;
    bool from_rank;
    uint32_t fixed;
    bool has_key, has_text, has_value;
    uint32_t max_value; /* 0: ORTE_WIRE_MAX_VALUE */
} type_info_t;

static const type_info_t *type_info(uint32_t type)
{
    static const type_info_t table[] = {
        [ORTE_WIRE_HELLO] = {"HELLO", true, 12, false, false, false},
        [ORTE_WIRE_WELCOME] = {"WELCOME", false, 24, false, true, false},
        [ORTE_WIRE_PUT] = {"PUT", true, 1, true, false, true},
        [ORTE_WIRE_COMMIT] = {"COMMIT", true, 0, false, false, false},
        [ORTE_WIRE_FENCE] = {"FENCE", true, 1, false, false, false},
        [ORTE_WIRE_FENCE_DONE] = {"FENCE_DONE", false, 8, false, true, false},
        [ORTE_WIRE_DATA] = {"DATA", false, 5, true, false, true},
        [ORTE_WIRE_GET] = {"GET", true, 12, true, false, false},
        [ORTE_WIRE_GET_REPLY] = {"GET_REPLY", false, 4, false, false, true},
        [ORTE_WIRE_ABORT] = {"ABORT", true, 4, false, true, false},
        [ORTE_WIRE_FINALIZE] = {"FINALIZE", true, 0, false, false, false},
        [ORTE_WIRE_FINALIZE_ACK] = {"FINALIZE_ACK", false, 0, false, false, false},
        [ORTE_WIRE_ERROR] = {"ERROR", false, 4, false, true, false},
        [ORTE_WIRE_DATA_SET] = {"DATA_SET", false, 4, false, false, true, ORTE_WIRE_MAX_SET},
    };
    if (type >= sizeof(table) / sizeof(table[0]) || NULL == table[type].name) {
        return NULL;
    }
    return &table[type];
}

static uint32_t min_length(const type_info_t *t)
{
    return t->fixed + (t->has_key ? 2u : 0u) + (t->has_text ? 2u : 0u) + (t->has_value ? 4u : 0u);
}

static uint32_t max_value(const type_info_t *t)
{
    return 0 != t->max_value ? t->max_value : ORTE_WIRE_MAX_VALUE;
}

static uint32_t max_length(const type_info_t *t)
{
    return t->fixed + (t->has_key ? 1u + ORTE_WIRE_MAX_KEY : 0u) +
           (t->has_text ? 2u + ORTE_WIRE_MAX_TEXT : 0u) + (t->has_value ? 4u + max_value(t) : 0u);
}

const char *orte_wire_type_name(uint32_t type)
{
    const type_info_t *t = type_info(type);
    return NULL == t ? "unknown" : t->name;
}

static int refuse(int code, char *why, size_t why_size, const char *format, ...)
    OPAL_PRINTF_LIKE(4, 5);
static int refuse(int code, char *why, size_t why_size, const char *format, ...)
{
    if (0 < why_size) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(why, why_size, format, ap);
        va_end(ap);
    }
    return code;
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
           ((uint32_t) p[3] << 24);
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8) | p[i];
    }
    return v;
}

int orte_wire_header_decode(const uint8_t *buf, bool from_rank, orte_wire_header_t *hdr, char *why,
                            size_t why_size)
{
    uint32_t magic = get_u32(buf);
    uint16_t version = get_u16(buf + 4);
    uint16_t type = get_u16(buf + 6);
    uint32_t length = get_u32(buf + 8);
    if (ORTE_WIRE_MAGIC != magic) {
        return refuse(OPAL_ERR_PROTOCOL, why, why_size,
                      "bad magic 0x%08" PRIx32
                      " (expected 0x%08x): not an opal-mca launcher message",
                      magic, ORTE_WIRE_MAGIC);
    }
    if (ORTE_WIRE_VERSION != version) {
        return refuse(OPAL_ERR_VERSION_MISMATCH, why, why_size,
                      "launcher protocol version %u, this side speaks version %u", version,
                      ORTE_WIRE_VERSION);
    }
    const type_info_t *t = type_info(type);
    if (NULL == t) {
        return refuse(OPAL_ERR_PROTOCOL, why, why_size, "unknown message type %u", type);
    }
    if (t->from_rank != from_rank) {
        return refuse(OPAL_ERR_PROTOCOL, why, why_size, "message type %s is only sent by %s",
                      t->name, t->from_rank ? "ranks" : "mcarun");
    }
    if (length < min_length(t) || length > max_length(t)) {
        return refuse(OPAL_ERR_PROTOCOL, why, why_size,
                      "%s message of %" PRIu32 " bytes (a %s holds %" PRIu32 " to %" PRIu32
                      " bytes)",
                      t->name, length, t->name, min_length(t), max_length(t));
    }
    hdr->type = (orte_wire_type_t) type;
    hdr->length = length;
    return OPAL_SUCCESS;
}

/* A cursor over a payload; each get fails (returns false) rather than read
 * past the end, and names the field in why. */
typedef struct reader_t {
    const uint8_t *p;
    size_t left;
    const char *type;
    char *why;
    size_t why_size;
    uint32_t max_value;
} reader_t;

static bool need(reader_t *r, size_t n, const char *field)
{
    if (r->left < n) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size,
               "%s message ends inside its %s (%zu bytes needed, %zu left)", r->type, field, n,
               r->left);
        return false;
    }
    return true;
}

static bool read_u8(reader_t *r, uint8_t *v, const char *field)
{
    if (!need(r, 1, field)) {
        return false;
    }
    *v = r->p[0];
    r->p += 1;
    r->left -= 1;
    return true;
}

static bool read_u32(reader_t *r, uint32_t *v, const char *field)
{
    if (!need(r, 4, field)) {
        return false;
    }
    *v = get_u32(r->p);
    r->p += 4;
    r->left -= 4;
    return true;
}

static bool read_u64(reader_t *r, uint64_t *v, const char *field)
{
    if (!need(r, 8, field)) {
        return false;
    }
    *v = get_u64(r->p);
    r->p += 8;
    r->left -= 8;
    return true;
}

/* Bytes of a given length that must not contain NUL (keys, texts). */
static bool read_chars(reader_t *r, size_t len, const char **s, const char *field)
{
    if (!need(r, len, field)) {
        return false;
    }
    if (NULL != memchr(r->p, '\0', len)) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size, "%s message: its %s contains a NUL byte",
               r->type, field);
        return false;
    }
    *s = (const char *) r->p;
    r->p += len;
    r->left -= len;
    return true;
}

static bool read_key(reader_t *r, orte_wire_msg_t *msg)
{
    uint8_t len;
    if (!read_u8(r, &len, "key length")) {
        return false;
    }
    if (0 == len) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size, "%s message with an empty key", r->type);
        return false;
    }
    msg->key_len = len;
    return read_chars(r, len, &msg->key, "key");
}

static bool read_text(reader_t *r, orte_wire_msg_t *msg)
{
    if (!need(r, 2, "text length")) {
        return false;
    }
    uint16_t len = get_u16(r->p);
    r->p += 2;
    r->left -= 2;
    if (len > ORTE_WIRE_MAX_TEXT) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size,
               "%s message with a text of %u bytes (at most %u)", r->type, len, ORTE_WIRE_MAX_TEXT);
        return false;
    }
    msg->text_len = len;
    return read_chars(r, len, &msg->text, "text");
}

static bool read_value(reader_t *r, orte_wire_msg_t *msg)
{
    uint32_t len;
    if (!read_u32(r, &len, "value length")) {
        return false;
    }
    if (len > r->max_value) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size,
               "%s message with a value of %" PRIu32 " bytes (at most %" PRIu32 ")", r->type, len,
               r->max_value);
        return false;
    }
    if (!need(r, len, "value")) {
        return false;
    }
    msg->value = r->p;
    msg->value_len = len;
    r->p += len;
    r->left -= len;
    return true;
}

static bool check_scope(reader_t *r, uint8_t scope)
{
    if (scope < 1 || scope > 3) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size,
               "%s message with scope %u (1 local, 2 remote, 3 global)", r->type, scope);
        return false;
    }
    return true;
}

/* One DATA record: the payload of a DATA message, alone or in a set. */
static bool read_record(reader_t *r, orte_wire_msg_t *msg)
{
    return read_u32(r, &msg->rank, "rank") && read_u8(r, &msg->scope, "scope") &&
           check_scope(r, msg->scope) && read_key(r, msg) && read_value(r, msg);
}

/* Checks that a DATA_SET's value is exactly count well-formed records. */
static bool check_records(reader_t *r, const orte_wire_msg_t *set)
{
    reader_t rec = {set->value, set->value_len, "DATA_SET record",
                    r->why,     r->why_size,    ORTE_WIRE_MAX_VALUE};
    for (uint32_t i = 0; i < set->count; ++i) {
        orte_wire_msg_t one;
        if (!read_record(&rec, &one)) {
            return false;
        }
    }
    if (0 != rec.left) {
        refuse(OPAL_ERR_PROTOCOL, r->why, r->why_size,
               "DATA_SET message has %zu bytes after its %" PRIu32 " records", rec.left,
               set->count);
        return false;
    }
    return true;
}

size_t orte_wire_record_size(size_t key_len, size_t value_len)
{
    return 4u + 1u + 1u + key_len + 4u + value_len;
}

int orte_wire_record_decode(const uint8_t **p, size_t *left, orte_wire_msg_t *msg, char *why,
                            size_t why_size)
{
    reader_t r = {*p, *left, "DATA_SET record", why, why_size, ORTE_WIRE_MAX_VALUE};
    memset(msg, 0, sizeof(*msg));
    msg->type = ORTE_WIRE_DATA;
    if (!read_record(&r, msg)) {
        return OPAL_ERR_PROTOCOL;
    }
    *p = r.p;
    *left = r.left;
    return OPAL_SUCCESS;
}

int orte_wire_payload_decode(const orte_wire_header_t *hdr, const uint8_t *payload,
                             orte_wire_msg_t *msg, char *why, size_t why_size)
{
    const type_info_t *t = type_info(hdr->type);
    if (NULL == t) {
        return refuse(OPAL_ERR_PROTOCOL, why, why_size, "unknown message type %u",
                      (unsigned) hdr->type);
    }
    reader_t r = {payload, hdr->length, t->name, why, why_size, max_value(t)};
    memset(msg, 0, sizeof(*msg));
    msg->type = hdr->type;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    bool ok;
    switch (hdr->type) {
        case ORTE_WIRE_HELLO:
            ok = read_u32(&r, &msg->jobid, "jobid") && read_u32(&r, &msg->rank, "rank") &&
                 read_u32(&r, &msg->pid, "pid");
            break;
        case ORTE_WIRE_WELCOME:
            ok = read_u32(&r, &msg->jobid, "jobid") && read_u32(&r, &msg->rank, "rank") &&
                 read_u32(&r, &msg->size, "size") && read_u32(&r, &msg->local_rank, "local rank") &&
                 read_u32(&r, &msg->local_size, "local size") &&
                 read_u32(&r, &msg->node_id, "node id") && read_text(&r, msg);
            if (ok && (msg->rank >= msg->size || msg->local_rank >= msg->local_size)) {
                refuse(OPAL_ERR_PROTOCOL, why, why_size,
                       "WELCOME message with rank %" PRIu32 " of %" PRIu32 ", local rank %" PRIu32
                       " of %" PRIu32,
                       msg->rank, msg->size, msg->local_rank, msg->local_size);
                ok = false;
            }
            break;
        case ORTE_WIRE_PUT:
            ok = read_u8(&r, &msg->scope, "scope") && check_scope(&r, msg->scope) &&
                 read_key(&r, msg) && read_value(&r, msg);
            break;
        case ORTE_WIRE_FENCE:
            ok = read_u8(&r, &msg->collect, "collect flag");
            if (ok && msg->collect > 1) {
                refuse(OPAL_ERR_PROTOCOL, why, why_size,
                       "FENCE message with collect flag %u (0 or 1)", msg->collect);
                ok = false;
            }
            break;
        case ORTE_WIRE_FENCE_DONE:
            ok = read_u32(&r, &u32, "status") && read_u32(&r, &msg->rank, "failed rank") &&
                 read_text(&r, msg);
            msg->status = (int32_t) u32;
            break;
        case ORTE_WIRE_DATA:
            ok = read_record(&r, msg);
            break;
        case ORTE_WIRE_DATA_SET:
            ok = read_u32(&r, &msg->count, "record count") && read_value(&r, msg) &&
                 check_records(&r, msg);
            break;
        case ORTE_WIRE_GET:
            ok = read_u32(&r, &msg->rank, "peer") && read_u64(&r, &u64, "timeout") &&
                 read_key(&r, msg);
            msg->timeout_ns = (int64_t) u64;
            break;
        case ORTE_WIRE_GET_REPLY:
            ok = read_u32(&r, &u32, "status") && read_value(&r, msg);
            msg->status = (int32_t) u32;
            if (ok && OPAL_SUCCESS != msg->status && 0 != msg->value_len) {
                refuse(OPAL_ERR_PROTOCOL, why, why_size,
                       "GET_REPLY message with status %" PRId32 " and a %zu-byte value",
                       msg->status, msg->value_len);
                ok = false;
            }
            break;
        case ORTE_WIRE_ABORT:
        case ORTE_WIRE_ERROR:
            ok = read_u32(&r, &u32, "status") && read_text(&r, msg);
            msg->status = (int32_t) u32;
            break;
        default: /* COMMIT, FINALIZE, FINALIZE_ACK carry nothing */
            ok = true;
            break;
    }
    if (!ok) {
        return OPAL_ERR_PROTOCOL;
    }
    if (0 != r.left) {
        return refuse(OPAL_ERR_PROTOCOL, why, why_size,
                      "%s message has %zu bytes left over after its last field", t->name, r.left);
    }
    return OPAL_SUCCESS;
}

/* A writer into the caller's head buffer; every write is bounds-checked. */
typedef struct writer_t {
    uint8_t *p;
    size_t left;
    bool ok;
} writer_t;

static uint8_t *room(writer_t *w, size_t n)
{
    if (!w->ok || w->left < n) {
        w->ok = false;
        return NULL;
    }
    uint8_t *p = w->p;
    w->p += n;
    w->left -= n;
    return p;
}

static void write_u8(writer_t *w, uint8_t v)
{
    uint8_t *p = room(w, 1);
    if (NULL != p) {
        *p = v;
    }
}

static void write_u32(writer_t *w, uint32_t v)
{
    uint8_t *p = room(w, 4);
    if (NULL != p) {
        put_u32(p, v);
    }
}

static void write_u64(writer_t *w, uint64_t v)
{
    uint8_t *p = room(w, 8);
    if (NULL != p) {
        put_u64(p, v);
    }
}

static void write_bytes(writer_t *w, const void *s, size_t len)
{
    uint8_t *p = room(w, len);
    if (NULL != p && 0 < len) {
        memcpy(p, s, len);
    }
}

static bool valid_chars(const char *s, size_t len, size_t max, bool empty_ok)
{
    return len <= max && (empty_ok || 0 < len) && (0 == len || NULL != s) &&
           (0 == len || NULL == memchr(s, '\0', len));
}

int orte_wire_encode(const orte_wire_msg_t *msg, uint8_t *head, size_t head_size, size_t *head_len)
{
    const type_info_t *t = type_info(msg->type);
    if (NULL == t ||
        (t->has_key && !valid_chars(msg->key, msg->key_len, ORTE_WIRE_MAX_KEY, false)) ||
        (t->has_text && !valid_chars(msg->text, msg->text_len, ORTE_WIRE_MAX_TEXT, true)) ||
        (t->has_value && msg->value_len > max_value(t)) ||
        (t->has_value && 0 < msg->value_len && NULL == msg->value) ||
        ((ORTE_WIRE_PUT == msg->type || ORTE_WIRE_DATA == msg->type) &&
         (msg->scope < 1 || msg->scope > 3)) ||
        (ORTE_WIRE_FENCE == msg->type && msg->collect > 1)) {
        return OPAL_ERR_BAD_PARAM;
    }
    writer_t w = {head, head_size, true};
    uint8_t *hdr = room(&w, ORTE_WIRE_HEADER_SIZE);
    switch (msg->type) {
        case ORTE_WIRE_HELLO:
            write_u32(&w, msg->jobid);
            write_u32(&w, msg->rank);
            write_u32(&w, msg->pid);
            break;
        case ORTE_WIRE_WELCOME:
            write_u32(&w, msg->jobid);
            write_u32(&w, msg->rank);
            write_u32(&w, msg->size);
            write_u32(&w, msg->local_rank);
            write_u32(&w, msg->local_size);
            write_u32(&w, msg->node_id);
            break;
        case ORTE_WIRE_PUT:
            write_u8(&w, msg->scope);
            break;
        case ORTE_WIRE_FENCE:
            write_u8(&w, msg->collect);
            break;
        case ORTE_WIRE_FENCE_DONE:
            write_u32(&w, (uint32_t) msg->status);
            write_u32(&w, msg->rank);
            break;
        case ORTE_WIRE_DATA:
            write_u32(&w, msg->rank);
            write_u8(&w, msg->scope);
            break;
        case ORTE_WIRE_GET:
            write_u32(&w, msg->rank);
            write_u64(&w, (uint64_t) msg->timeout_ns);
            break;
        case ORTE_WIRE_DATA_SET:
            write_u32(&w, msg->count);
            break;
        case ORTE_WIRE_GET_REPLY:
        case ORTE_WIRE_ABORT:
        case ORTE_WIRE_ERROR:
            write_u32(&w, (uint32_t) msg->status);
            break;
        default:
            break;
    }
    if (t->has_key) {
        write_u8(&w, (uint8_t) msg->key_len);
        write_bytes(&w, msg->key, msg->key_len);
    }
    if (t->has_text) {
        uint8_t *p = room(&w, 2);
        if (NULL != p) {
            put_u16(p, (uint16_t) msg->text_len);
        }
        write_bytes(&w, msg->text, msg->text_len);
    }
    if (t->has_value) {
        write_u32(&w, (uint32_t) msg->value_len);
    }
    if (!w.ok || NULL == hdr) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t fields = (size_t) (w.p - hdr) - ORTE_WIRE_HEADER_SIZE;
    put_u32(hdr, ORTE_WIRE_MAGIC);
    put_u16(hdr + 4, ORTE_WIRE_VERSION);
    put_u16(hdr + 6, (uint16_t) msg->type);
    put_u32(hdr + 8, (uint32_t) (fields + (t->has_value ? msg->value_len : 0)));
    *head_len = (size_t) (w.p - head);
    return OPAL_SUCCESS;
}

int orte_wire_record_encode(const orte_wire_msg_t *data, uint8_t *buf, size_t size, size_t *len)
{
    if (!valid_chars(data->key, data->key_len, ORTE_WIRE_MAX_KEY, false) ||
        data->value_len > ORTE_WIRE_MAX_VALUE || (0 < data->value_len && NULL == data->value) ||
        data->scope < 1 || data->scope > 3) {
        return OPAL_ERR_BAD_PARAM;
    }
    writer_t w = {buf, size, true};
    write_u32(&w, data->rank);
    write_u8(&w, data->scope);
    write_u8(&w, (uint8_t) data->key_len);
    write_bytes(&w, data->key, data->key_len);
    write_u32(&w, (uint32_t) data->value_len);
    write_bytes(&w, data->value, data->value_len);
    if (!w.ok) {
        return OPAL_ERR_BAD_PARAM;
    }
    *len = (size_t) (w.p - buf);
    return OPAL_SUCCESS;
}
