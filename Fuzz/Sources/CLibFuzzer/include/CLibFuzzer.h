// libFuzzer's documented entry for a program that has its own main (compiler-rt
// FuzzerInterface.h): SwiftPM gives every executable target a main, so the harnesses call this.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// A file's size and modification time (seconds, nanoseconds) into `mark`; -1s when it has none.
/// (For a harness that asks whether a file changed: FileManager's attributes cost a user lookup.)
void fuzz_file_mark(const char *path, long long mark[3]);
