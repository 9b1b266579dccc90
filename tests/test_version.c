/* The version: one declaration (the SBM_VERSION_* macros of sbm.h), the same string from the
 * library, and the CMake project version read from the header. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static void test_version_string(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", SBM_VERSION_MAJOR, SBM_VERSION_MINOR, SBM_VERSION_PATCH);
    assert_string_equal(sbm_version(), want);
    assert_int_equal(SBM_VERSION,
                     SBM_VERSION_MAJOR * 10000 + SBM_VERSION_MINOR * 100 + SBM_VERSION_PATCH);
#ifdef SBM_TEST_PROJECT_VERSION
    assert_string_equal(sbm_version(), SBM_TEST_PROJECT_VERSION);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
