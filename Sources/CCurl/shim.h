#ifndef R2UP_CCURL_SHIM_H
#define R2UP_CCURL_SHIM_H
// libcurl for Swift. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt
// are variadic, which Swift cannot call, so each argument type gets a typed
// static inline wrapper here. Header-only: nothing to drift from a .c file.
#include <curl/curl.h>
#include <stdint.h>

typedef size_t (*r2_data_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*r2_seek_callback)(void *context, curl_off_t offset, int origin);
typedef int (*r2_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                    curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode r2_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode r2_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode r2_easy_setopt_ptr(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode r2_easy_setopt_data_callback(CURL *handle, CURLoption option, r2_data_callback fn) {
    return curl_easy_setopt(handle, option, fn);
}
static inline CURLcode r2_easy_setopt_seek_callback(CURL *handle, r2_seek_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, fn);
}
static inline CURLcode r2_easy_setopt_xferinfo_callback(CURL *handle, r2_xferinfo_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, fn);
}

static inline CURLcode r2_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode r2_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode r2_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode r2_multi_setopt_ptr(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode r2_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback fn) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, fn);
}
static inline CURLMcode r2_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback fn) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, fn);
}
static inline CURLSHcode r2_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

// Sentinels that import as Int32 macros; typed here so Swift needs no casts.
static const size_t r2_readfunc_abort = CURL_READFUNC_ABORT;
static const size_t r2_readfunc_pause = CURL_READFUNC_PAUSE;
static const size_t r2_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const int r2_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int r2_seekfunc_fail = CURL_SEEKFUNC_FAIL;
static const long r2_global_default = CURL_GLOBAL_DEFAULT;
// curl_multi_socket_action's "no socket: a timeout expired" (a macro of a macro).
static const curl_socket_t r2_socket_timeout = CURL_SOCKET_TIMEOUT;

// What the installed libcurl offers; options it lacks read as 0.
static inline int r2_curl_has_protocols_str(void) {
#if LIBCURL_VERSION_NUM >= 0x075500
    return 1;
#else
    return 0;
#endif
}
#if LIBCURL_VERSION_NUM < 0x075500
#define CURLOPT_PROTOCOLS_STR ((CURLoption)0)
#define CURLOPT_REDIR_PROTOCOLS_STR ((CURLoption)0)
#endif

// libcurl's built-in CA file (CURLINFO_CAINFO, 7.84+) copied into `out`; 0 where unknown.
#include <string.h>
static inline int r2_builtin_ca_file(char *out, size_t size) {
#if LIBCURL_VERSION_NUM >= 0x075400
    CURL *handle = curl_easy_init();
    if (!handle) return 0;
    char *path = NULL;
    int found = curl_easy_getinfo(handle, CURLINFO_CAINFO, &path) == CURLE_OK && path && strlen(path) < size;
    if (found) strcpy(out, path);
    curl_easy_cleanup(handle);
    return found;
#else
    (void)out; (void)size;
    return 0;
#endif
}

// epoll for the engine's socket set (Glibc's Swift module leaves sys/epoll.h out). Elsewhere
// r2_epoll_create fails and the engine polls the sockets itself.
#ifdef __linux__
#include <sys/epoll.h>
#include <errno.h>
static inline int r2_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
/// what: CURL_POLL_IN/OUT/INOUT, or CURL_POLL_REMOVE; known: the socket is in the set already.
static inline int r2_epoll_watch(int epoll, int fd, int what, int known) {
    if (what == CURL_POLL_REMOVE) return known ? epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL) : 0;
    struct epoll_event event = {0};
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    event.data.fd = fd;
    if (epoll_ctl(epoll, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    // A socket closed and reopened under the same number between two calls.
    return epoll_ctl(epoll, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}
/// Waits; fills fds[i] and masks[i] (CURL_CSELECT_IN/OUT/ERR) for up to 256 ready descriptors.
static inline int r2_epoll_wait(int epoll, int *fds, int *masks, int timeout_ms) {
    struct epoll_event events[256];
    int count = epoll_wait(epoll, events, 256, timeout_ms);
    for (int i = 0; i < count; i++) {
        unsigned e = events[i].events;
        int mask = 0;
        // A hang-up may still have a reply to read: curl finds the end itself.
        if (e & (EPOLLIN | EPOLLHUP)) mask |= CURL_CSELECT_IN;
        if (e & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (e & EPOLLERR) mask |= CURL_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        masks[i] = mask;
    }
    return count;
}
#else
static inline int r2_epoll_create(void) { return -1; }
static inline int r2_epoll_watch(int epoll, int fd, int what, int known) { return -1; }
static inline int r2_epoll_wait(int epoll, int *fds, int *masks, int timeout_ms) { return -1; }
#endif

#endif
