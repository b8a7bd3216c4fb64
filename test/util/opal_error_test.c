/* Error codes and the monotonic timer: known and unknown codes, their
 * names, and a clock that never goes backwards. */
#include "opal/opal_config.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/support/opal_test.h"

START_TEST(known_codes_have_message_and_name)
{
    ck_assert_str_eq(opal_strerror(OPAL_SUCCESS), "Success");
    ck_assert_str_eq(opal_strerror_name(OPAL_SUCCESS), "OPAL_SUCCESS");
    ck_assert_str_eq(opal_strerror(OPAL_ERR_TIMEOUT), "Timed out");
    ck_assert_str_eq(opal_strerror_name(OPAL_ERR_TIMEOUT), "OPAL_ERR_TIMEOUT");
    ck_assert_str_eq(opal_strerror(OPAL_ERR_PARSE), "Parse error");
    ck_assert_str_eq(opal_strerror_name(OPAL_ERR_NOT_FOUND), "OPAL_ERR_NOT_FOUND");
}
END_TEST

START_TEST(every_code_in_the_table_round_trips)
{
#define CHECK_ENTRY(name, value, message)                                                          \
    ck_assert_int_eq(name, value);                                                                 \
    ck_assert_str_eq(opal_strerror(value), message);                                               \
    ck_assert_str_eq(opal_strerror_name(value), #name);
    OPAL_ERROR_TABLE(CHECK_ENTRY)
#undef CHECK_ENTRY
}
END_TEST

START_TEST(unknown_codes_are_named_by_number)
{
    ck_assert_str_eq(opal_strerror(-12345), "Unknown error code -12345");
    ck_assert_str_eq(opal_strerror(7), "Unknown error code 7");
    ck_assert_ptr_null(opal_strerror_name(-12345));
    ck_assert_ptr_null(opal_strerror_name(7));
    /* The extremes, as a peer may send them (UBSan: no negation of
     * INT_MIN). */
    ck_assert_str_eq(opal_strerror(INT_MIN), "Unknown error code -2147483648");
    ck_assert_ptr_null(opal_strerror_name(INT_MIN));
    ck_assert_ptr_null(opal_strerror_name(INT_MAX));
    /* Known codes still work after an unknown one used the buffer. */
    ck_assert_str_eq(opal_strerror(OPAL_ERROR), "Error");
}
END_TEST

START_TEST(timer_never_goes_backwards)
{
    size_t n = opal_test_iterations(100000);
    uint64_t last = opal_timer_ns();
    for (size_t i = 0; i < n; ++i) {
        uint64_t now = opal_timer_ns();
        ck_assert_uint_ge(now, last);
        last = now;
    }
}
END_TEST

START_TEST(timer_resolution_is_fine_and_time_advances)
{
    uint64_t res = opal_timer_resolution_ns();
    ck_assert_uint_gt(res, 0);
    ck_assert_uint_le(res, 1000000);
    uint64_t start = opal_timer_ns();
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 2000000};
    while (0 != nanosleep(&nap, &nap)) {
    }
    /* A lower bound only: sleeping may take longer, never shorter. */
    ck_assert_uint_ge(opal_timer_ns() - start, 2000000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("opal_error");
    OPAL_TEST_ADD(s, known_codes_have_message_and_name);
    OPAL_TEST_ADD(s, every_code_in_the_table_round_trips);
    OPAL_TEST_ADD(s, unknown_codes_are_named_by_number);
    OPAL_TEST_ADD(s, timer_never_goes_backwards);
    OPAL_TEST_ADD(s, timer_resolution_is_fine_and_time_advances);
    return opal_test_run(s);
}
