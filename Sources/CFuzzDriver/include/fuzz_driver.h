#ifndef SEARCHLIGHT_FUZZ_DRIVER_H
#define SEARCHLIGHT_FUZZ_DRIVER_H

/// The fuzz executable's entry point: runs libFuzzer's driver on `LLVMFuzzerTestOneInput`.
///
/// SwiftPM links every executable target with `--defsym main=<module>_main`, which replaces libFuzzer's own
/// `main`; this is the function that name resolves to for the `searchlight-fuzz` target.
int searchlight_fuzz_main(int argc, char **argv);

#endif
