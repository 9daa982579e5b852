/* bench/curl_handles.c — what a fresh libcurl easy handle per transfer costs against reusing one
 * (issue 38's "less work per transfer in curl"). No network: the handles are configured as the
 * session configures a proxied plain-HTTP GET (SessionLoop.configure) and never performed, so
 * the figures are the handle's own cost, to set beside the daemon's CPU per request.
 *
 *   fresh:     curl_easy_init, every option, a header list, curl_easy_cleanup (what afproxy does)
 *   duphandle: curl_easy_duphandle of a handle holding the fixed options, the per-transfer ones,
 *              curl_easy_cleanup (the reuse libcurl 7.88 allows without its reuse bug)
 *   reuse:     the per-transfer options on one long-lived handle (what a pool would save at most)
 *
 * Usage: curl_handles [iterations]   (prints microseconds per transfer for each)
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

/* The options every proxied plain-HTTP GET gets whatever its request. */
static void fixed_options(CURL *h) {
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(h, CURLOPT_HTTP_TRANSFER_DECODING, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 16384L);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
}

/* The options that name this transfer: its URL, its callbacks' data, its header list. */
static void transfer_options(CURL *h, char *error) {
    curl_easy_setopt(h, CURLOPT_PRIVATE, h);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:8080/1k");
    curl_easy_setopt(h, CURLOPT_HEADERDATA, h);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, h);
    struct curl_slist *list = NULL;
    list = curl_slist_append(list, "Host: 127.0.0.1:8080");
    list = curl_slist_append(list, "User-Agent: wrk");
    list = curl_slist_append(list, "Accept:");
    list = curl_slist_append(list, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
    curl_slist_free_all(list); /* the bench never performs: curl does not read it again */
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    char error[CURL_ERROR_SIZE];
    curl_global_init(CURL_GLOBAL_DEFAULT);

    double start = now_ns();
    for (int i = 0; i < n; i++) {
        CURL *h = curl_easy_init();
        fixed_options(h);
        transfer_options(h, error);
        curl_easy_cleanup(h);
    }
    printf("fresh      %.2f us per transfer\n", (now_ns() - start) / n / 1e3);

    CURL *template = curl_easy_init();
    fixed_options(template);
    start = now_ns();
    for (int i = 0; i < n; i++) {
        CURL *h = curl_easy_duphandle(template);
        transfer_options(h, error);
        curl_easy_cleanup(h);
    }
    printf("duphandle  %.2f us per transfer\n", (now_ns() - start) / n / 1e3);

    CURL *kept = curl_easy_init();
    fixed_options(kept);
    start = now_ns();
    for (int i = 0; i < n; i++) transfer_options(kept, error);
    printf("reuse      %.2f us per transfer\n", (now_ns() - start) / n / 1e3);

    curl_easy_cleanup(template);
    curl_easy_cleanup(kept);
    curl_global_cleanup();
    return 0;
}
