#include "fuzz_driver.h"

#include <stddef.h>
#include <stdint.h>

// libFuzzer's public driver (compiler-rt, linked by -sanitize=fuzzer) and the target's callback (Swift, @_cdecl).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int searchlight_fuzz_main(int argc, char **argv) {
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
