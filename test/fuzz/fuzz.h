/*
 * The entry point every fuzz target defines (test/fuzz/fuzz_<name>.c), in
 * libFuzzer's form. `make fuzz` links a target with libFuzzer; `make
 * check` links it with fuzz_replay.c, which feeds it every file of
 * test/fuzz/corpus/<name>/. A target must accept any bytes: it returns 0,
 * and anything it allocates is released before it returns (leaks are
 * findings too).
 */
#ifndef OPAL_TEST_FUZZ_FUZZ_H
#define OPAL_TEST_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* OPAL_TEST_FUZZ_FUZZ_H */
