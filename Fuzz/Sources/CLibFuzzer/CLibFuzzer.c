// libFuzzer itself is linked by -sanitize=fuzzer (its driver is only declared here); and a file mark for harnesses.
#include "CLibFuzzer.h"

#include <sys/stat.h>

void fuzz_file_mark(const char *path, long long mark[3]) {
    struct stat info;
    if (stat(path, &info) != 0) {
        mark[0] = mark[1] = mark[2] = -1;
        return;
    }
    mark[0] = (long long)info.st_size;
    mark[1] = (long long)info.st_mtim.tv_sec;
    mark[2] = (long long)info.st_mtim.tv_nsec;
}
