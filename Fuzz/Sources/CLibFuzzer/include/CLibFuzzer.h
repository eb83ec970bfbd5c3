// libFuzzer's documented entry for a program that has its own main (compiler-rt
// FuzzerInterface.h): SwiftPM gives every executable target a main, so the harnesses call this.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
