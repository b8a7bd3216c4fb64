#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_base_mux_fake.h"
#include "test/support/opal_test.h"

struct mca_btl_base_endpoint_t {
    fake_module_t *owner;
    uint32_t rank;
};

int fake_alpha_progress_calls = 0, fake_beta_progress_calls = 0;

static fake_module_t modules[FAKE_MAX_MODULES];
static int module_count = 0;

static int add_procs(struct mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                     struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                     mca_btl_base_reason_t *reasons)
{
    fake_module_t *m = (fake_module_t *) btl;
    ++m->add_calls;
    for (size_t i = 0; i < nprocs; ++i) {
        uint32_t rank = procs[i]->proc_name.vpid;
        if (rank < 64 && 0 != (m->reach & (UINT64_C(1) << rank))) {
            endpoints[i] = malloc(sizeof(*endpoints[i]));
            ck_assert_ptr_nonnull(endpoints[i]);
            endpoints[i]->owner = m;
            endpoints[i]->rank = rank;
            ++m->live_endpoints;
            ck_assert_int_eq(opal_bitmap_set_bit(reachable, (int) i), OPAL_SUCCESS);
        } else if (NULL != reasons) {
            snprintf(reasons[i].text, sizeof(reasons[i].text), "%s", NULL != m->why ? m->why : "");
        }
    }
    /* A failure after setting up endpoints: the base must release them. */
    return m->add_rc;
}

static int del_procs(struct mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                     struct mca_btl_base_endpoint_t **endpoints)
{
    fake_module_t *m = (fake_module_t *) btl;
    ++m->del_calls;
    for (size_t i = 0; i < nprocs; ++i) {
        ck_assert_ptr_eq(endpoints[i]->owner, m);
        ck_assert_uint_eq(endpoints[i]->rank, procs[i]->proc_name.vpid);
        free(endpoints[i]);
        --m->live_endpoints;
        ++m->del_procs_seen;
    }
    return OPAL_SUCCESS;
}

static int finalize(struct mca_btl_base_module_t *btl)
{
    ++((fake_module_t *) btl)->finalized;
    return OPAL_SUCCESS;
}

static int register_error(struct mca_btl_base_module_t *btl,
                          mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((fake_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

static void record(fake_module_t *m, int via, mca_btl_base_tag_t tag, const void *a, size_t alen,
                   const void *b, size_t blen)
{
    ck_assert_uint_le(alen + blen, sizeof(m->last));
    if (0 < alen) {
        memcpy(m->last, a, alen);
    }
    if (0 < blen) {
        memcpy(m->last + alen, b, blen);
    }
    m->last_len = alen + blen;
    m->last_tag = tag;
    m->via = via;
    ++m->sent;
}

static int sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                 const void *header, size_t header_size, const void *payload, size_t payload_size,
                 uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                 mca_btl_base_descriptor_t **descriptor)
{
    fake_module_t *m = (fake_module_t *) btl;
    ck_assert_ptr_eq(endpoint->owner, m);
    ck_assert_uint_le(header_size + payload_size, btl->btl_eager_limit);
    if (m->sendi_busy > 0) {
        --m->sendi_busy;
        return OPAL_ERR_RESOURCE_BUSY;
    }
    record(m, 1, tag, header, header_size, payload, payload_size);
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *take_des(fake_module_t *m, size_t size)
{
    /* One descriptor per module: a second while one is out is a bug. */
    ck_assert_ptr_null(m->des.des_segments);
    m->seg.seg_addr = m->buffer;
    m->seg.seg_len = size;
    m->des.des_segments = &m->seg;
    m->des.des_segment_count = 1;
    return &m->des;
}

static mca_btl_base_descriptor_t *alloc(struct mca_btl_base_module_t *btl,
                                        struct mca_btl_base_endpoint_t *endpoint, uint8_t order,
                                        size_t size, uint32_t flags)
{
    fake_module_t *m = (fake_module_t *) btl;
    if (m->alloc_empty) {
        return NULL;
    }
    ck_assert_uint_le(size, sizeof(m->buffer));
    mca_btl_base_descriptor_t *des = take_des(m, size);
    des->des_flags = flags;
    des->des_context = (void *) (uintptr_t) 2;
    return des;
}

static int free_des(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    fake_module_t *m = (fake_module_t *) btl;
    ck_assert_ptr_eq(des, &m->des);
    m->des.des_segments = NULL;
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *prepare_src(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              const void *data, uint8_t order, size_t reserve,
                                              size_t *size, uint32_t flags)
{
    fake_module_t *m = (fake_module_t *) btl;
    ck_assert_uint_le(reserve + *size, sizeof(m->buffer));
    mca_btl_base_descriptor_t *des = take_des(m, reserve + *size);
    if (0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE)) {
        m->inplace_data = data;
        m->inplace_reserve = reserve;
    } else {
        memcpy(m->buffer + reserve, data, *size);
    }
    des->des_flags = flags;
    des->des_context = (void *) (uintptr_t) 3;
    return des;
}

static int send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    fake_module_t *m = (fake_module_t *) btl;
    ck_assert_ptr_eq(des, &m->des);
    ck_assert(0 != (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP));
    if (0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE) &&
        3 == (int) (uintptr_t) des->des_context) {
        /* Reads the data and completes later, from progress. */
        m->pending = des;
        m->pending_tag = tag;
        return OPAL_SUCCESS;
    }
    record(m, (int) (uintptr_t) des->des_context, tag, m->buffer, des->des_segments[0].seg_len,
           NULL, 0);
    m->des.des_segments = NULL;
    return 1;
}

static int progress_modules(mca_btl_base_component_t *component)
{
    int events = 0;
    for (int i = 0; i < module_count; ++i) {
        fake_module_t *m = &modules[i];
        if (m->super.btl_component != component || NULL == m->pending) {
            continue;
        }
        mca_btl_base_descriptor_t *des = m->pending;
        m->pending = NULL;
        record(m, 3, m->pending_tag, m->buffer, m->inplace_reserve, m->inplace_data,
               des->des_segments[0].seg_len - m->inplace_reserve);
        m->des.des_segments = NULL;
        if (NULL != des->des_cbfunc) {
            des->des_cbfunc(&m->super, NULL, des, OPAL_SUCCESS);
        }
        ++events;
    }
    return events;
}

static int alpha_progress(void)
{
    ++fake_alpha_progress_calls;
    return progress_modules(&fake_alpha_component);
}

static int beta_progress(void)
{
    ++fake_beta_progress_calls;
    return progress_modules(&fake_beta_component);
}

static mca_btl_base_module_t **init_of(mca_btl_base_component_t *component, int *num)
{
    static mca_btl_base_module_t *alpha_list[FAKE_MAX_MODULES];
    static mca_btl_base_module_t *beta_list[FAKE_MAX_MODULES];
    mca_btl_base_module_t **list = component == &fake_alpha_component ? alpha_list : beta_list;
    *num = 0;
    for (int i = 0; i < module_count; ++i) {
        if (modules[i].super.btl_component == component) {
            list[(*num)++] = &modules[i].super;
        }
    }
    if (0 == *num) {
        mca_base_component_decline(&component->btl_version, "the test configured no module");
        return NULL;
    }
    return list;
}

static mca_btl_base_module_t **alpha_init(int *num, bool progress_threads, bool mpi_threads)
{
    return init_of(&fake_alpha_component, num);
}

static mca_btl_base_module_t **beta_init(int *num, bool progress_threads, bool mpi_threads)
{
    return init_of(&fake_beta_component, num);
}

static mca_btl_base_module_t **nope_init(int *num, bool progress_threads, bool mpi_threads)
{
    *num = 0;
    mca_base_component_decline(&fake_nope_component.btl_version, "no fake device here");
    return NULL;
}

mca_btl_base_component_t fake_alpha_component = {
    .btl_version = {MCA_BTL_BASE_VERSION, MCA_BASE_COMPONENT_NAME("alpha", 1, 0, 0)},
    .btl_init = alpha_init,
    .btl_progress = alpha_progress,
};

mca_btl_base_component_t fake_beta_component = {
    .btl_version = {MCA_BTL_BASE_VERSION, MCA_BASE_COMPONENT_NAME("beta", 1, 0, 0)},
    .btl_init = beta_init,
    .btl_progress = beta_progress,
};

mca_btl_base_component_t fake_nope_component = {
    .btl_version = {MCA_BTL_BASE_VERSION, MCA_BASE_COMPONENT_NAME("nope", 1, 0, 0)},
    .btl_init = nope_init,
};

void fake_reset(void)
{
    memset(modules, 0, sizeof(modules));
    module_count = 0;
    fake_alpha_progress_calls = fake_beta_progress_calls = 0;
}

fake_module_t *fake_module(mca_btl_base_component_t *component, uint32_t exclusivity,
                           uint32_t latency, uint32_t bandwidth, uint32_t flags, uint64_t reach)
{
    ck_assert_int_lt(module_count, FAKE_MAX_MODULES);
    fake_module_t *m = &modules[module_count++];
    m->super = (mca_btl_base_module_t){
        .btl_component = component,
        .btl_eager_limit = 64,
        .btl_max_send_size = 512,
        .btl_exclusivity = exclusivity,
        .btl_latency = latency,
        .btl_bandwidth = bandwidth,
        .btl_flags = flags,
        .btl_add_procs = add_procs,
        .btl_del_procs = del_procs,
        .btl_finalize = finalize,
        .btl_register_error = register_error,
        .btl_alloc = alloc,
        .btl_free = free_des,
        .btl_prepare_src = prepare_src,
        .btl_send = send,
        .btl_sendi = 0 != (flags & MCA_BTL_FLAGS_SENDI) ? sendi : NULL,
    };
    m->reach = reach;
    m->why = "peer is on another node";
    m->add_rc = OPAL_SUCCESS;
    return m;
}

static void inject(mca_btl_base_component_t *component)
{
    mca_base_component_list_item_t *item = OBJ_NEW(mca_base_component_list_item_t);
    ck_assert_ptr_nonnull(item);
    item->cli_component = &component->btl_version;
    item->cli_opened = true;
    opal_list_append(&opal_btl_base_framework.framework_components, &item->super);
}

int fake_init(void)
{
    ck_assert_int_eq(mca_base_framework_open(&opal_btl_base_framework, MCA_BASE_OPEN_DEFAULT),
                     OPAL_SUCCESS);
    /* Built-in components (--disable-mca-dso) stay out of the way. */
    mca_base_component_list_item_t *item, *next;
    OPAL_LIST_FOREACH_SAFE (item, next, &opal_btl_base_framework.framework_components,
                            mca_base_component_list_item_t) {
        mca_base_framework_drop_component(&opal_btl_base_framework, item,
                                          MCA_BASE_COMPONENT_STAGE_EXCLUDED,
                                          "left out by the test");
    }
    inject(&fake_alpha_component);
    inject(&fake_beta_component);
    inject(&fake_nope_component);
    int rc = mca_btl_base_init(false, false);
    /* The base holds its own open while initialised. */
    ck_assert_int_eq(mca_base_framework_close(&opal_btl_base_framework), OPAL_SUCCESS);
    return rc;
}

mca_btl_base_module_t *fake_initialized(int i)
{
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        if (0 == i--) {
            return sm->btl_module;
        }
    }
    return NULL;
}

int fake_module_count(void)
{
    return module_count;
}

fake_module_t *fake_module_at(int i)
{
    return &modules[i];
}
