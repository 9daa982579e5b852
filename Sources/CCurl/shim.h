/*
 * Typed wrappers over libcurl's variadic calls.
 *
 * Why this file exists: Swift cannot call C variadic functions, so curl_easy_setopt,
 * curl_easy_getinfo and curl_multi_setopt are unavailable to it. One static inline wrapper
 * per argument kind keeps the shim as thin as the C API itself; only AFProxyCurl imports it.
 */
#ifndef AFPROXY_CCURL_SHIM_H
#define AFPROXY_CCURL_SHIM_H

#include <curl/curl.h>
/* Glibc's Swift module leaves these out; the session loop needs them next to curl: epoll and
 * eventfd for its socket watcher, malloc_trim to give memory back when it falls idle. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <malloc.h>

typedef size_t (*afc_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
typedef int (*afc_sockopt_callback)(void *userdata, curl_socket_t fd, curlsocktype purpose);

static inline CURLcode afc_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode afc_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode afc_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode afc_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode afc_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/* curl_share_setopt is variadic too: the sessions' one share object (their TLS sessions). */
static inline CURLSHcode afc_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

/* The share object is used by every session thread: curl takes its lock around each use. */
static inline CURLSHcode afc_share_setopt_lock(CURLSH *share, curl_lock_function lock, curl_unlock_function unlock,
                                               void *userdata) {
    CURLSHcode code = curl_share_setopt(share, CURLSHOPT_LOCKFUNC, lock);
    if (code == CURLSHE_OK) code = curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, unlock);
    if (code == CURLSHE_OK) code = curl_share_setopt(share, CURLSHOPT_USERDATA, userdata);
    return code;
}

/* Header, write and read callbacks share one signature. */
static inline CURLcode afc_easy_setopt_data_callback(CURL *handle, CURLoption option, afc_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

/* curl closes every socket it opened through this, so the session's epoll set can forget a
 * descriptor before its number is handed out again. */
typedef int (*afc_closesocket_callback)(void *userdata, curl_socket_t socket);

static inline CURLcode afc_easy_setopt_closesocket_callback(CURL *handle, afc_closesocket_callback value) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, value);
}

/* curl's informational text, read by the pin probe for the hash of the key it was shown. */
typedef int (*afc_debug_callback)(CURL *handle, curl_infotype type, char *data, size_t size, void *userdata);

static inline CURLcode afc_easy_setopt_debug_callback(CURL *handle, afc_debug_callback value) {
    return curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, value);
}

/* curl rewinds a request body through this before sending the request again on a fresh
 * connection. */
typedef int (*afc_seek_callback)(void *userdata, curl_off_t offset, int origin);

static inline CURLcode afc_easy_setopt_seek_callback(CURL *handle, afc_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

/* curl calls this once a transfer has its connection, new or reused, before the request goes
 * out: the only moment libcurl 7.88 says which connection a running transfer took. */
static inline CURLcode afc_easy_setopt_prereq_callback(CURL *handle, curl_prereq_callback value) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}

/* curl asks this for each socket it opens to connect, with the address it is for: where the
 * destination rules refuse an address before a connection is made. */
static inline CURLcode afc_easy_setopt_opensocket_callback(CURL *handle, curl_opensocket_callback value) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}

static inline CURLcode afc_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode afc_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode afc_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode afc_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode afc_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode afc_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

/* The multi handle's socket and timer callbacks, for curl_multi_socket_action on epoll. */
typedef int (*afc_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *userdata, void *socketdata);
typedef int (*afc_timer_callback)(CURLM *multi, long timeout_ms, void *userdata);

static inline CURLMcode afc_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLMcode afc_multi_setopt_socket_callback(CURLM *handle, afc_socket_callback value) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, value);
}

static inline CURLMcode afc_multi_setopt_timer_callback(CURLM *handle, afc_timer_callback value) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, value);
}

/* CURLVERSION_NOW is a macro Swift does not import. */
static inline curl_version_info_data *afc_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

/* CURLMSG_DONE's result lives in a union Swift sees awkwardly. */
static inline CURLcode afc_msg_result(CURLMsg *message) {
    return message->data.result;
}

#endif
