/*
 * bench/intercept_client.c — keep-alive HTTPS GETs through a forward proxy's CONNECT, for
 * bench/intercept.
 *
 * Why C: the Python asyncio client it replaces spent more CPU per request than the proxies it
 * measured and shared their two cores, so it set the pace. Here a request costs the client one
 * SSL_write and one or two SSL_reads.
 *
 *   intercept_client PROXY_PORT HOST PORT PATH CAFILE|- CONNS SECONDS [WARMUP_S] [PID] [ORIGIN_PORT]
 *
 * Opens CONNS connections to 127.0.0.1:PROXY_PORT, one after the other: `CONNECT HOST:PORT`, then
 * TLS (ALPN http/1.1; SNI = HOST unless HOST is an address; the certificate verified against
 * CAFILE for HOST, "-" skips verification), then one `GET PATH`. Then one thread per connection
 * sends `GET PATH` over keep-alive, one at a time, reading each whole answer (Content-Length,
 * status 200, body of exactly that length) before the next. Answers in the first WARMUP_S seconds
 * (default 1) are not counted; then SECONDS are. Prints
 *   LOAD conns=N requests=N seconds=F rps=F p50_ms=F p99_ms=F errors=N body_bytes=N
 *        cpu_s=F cpu_us_per_req=F client_cpu_us_per_req=F upstream_new=N upstream_gone=N
 * cpu_s: utime+stime of process PID and its descendants over the counted window (as
 * bench/procmon.py reads them), -1 without PID. upstream_new/gone: established TCP connections to
 * ORIGIN_PORT (anyone's, from /proc/net/tcp) that appeared/went during the window: each new one is
 * a new TLS handshake to the origin; -1 without ORIGIN_PORT. body_bytes: the length every answer
 * had (-1 if they differed). A failed request (closed connection, non-200, wrong length) ends that
 * connection and counts as an error; the others go on.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536
#define MAX_PORTS 65536

struct conn {
    SSL *ssl;
    int fd;
    pthread_t thread;
    long counted;          /* answers within the window */
    unsigned *lat;         /* their latencies, µs */
    size_t nlat, cap;
    int failed;
    long body;             /* length of the last body */
    int body_varied;
    char buf[BUF];
    size_t have;
};

static const char *host, *port, *path;
static char get_req[1024];
static int get_len;
static atomic_int phase;   /* 0 warm-up, 1 counted, 2 stop */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* utime+stime of PID and its descendants, seconds. */
static double tree_cpu(int pid) {
    char p[320], line[1024];
    double total = 0;
    snprintf(p, sizeof p, "/proc/%d/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    if (fgets(line, sizeof line, f)) {
        char *rest = strrchr(line, ')');
        unsigned long utime = 0, stime = 0;
        /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
        if (rest && sscanf(rest + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2)
            total = (double)(utime + stime) / sysconf(_SC_CLK_TCK);
    }
    fclose(f);
    snprintf(p, sizeof p, "/proc/%d/task", pid);
    DIR *d = opendir(p);
    if (!d) return total;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "/proc/%d/task/%s/children", pid, e->d_name);
        FILE *k = fopen(p, "r");
        if (!k) continue;
        for (int kid; fscanf(k, "%d", &kid) == 1;) total += tree_cpu(kid);
        fclose(k);
    }
    closedir(d);
    return total;
}

/* Marks in seen[] the local ports of established connections to remote port ORIGIN. */
static void upstream_ports(int origin, unsigned char *seen) {
    memset(seen, 0, MAX_PORTS);
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f) return;
    char line[512];
    unsigned lport, rport, state;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, " %*d: %*x:%x %*x:%x %x", &lport, &rport, &state) == 3 && rport == (unsigned)origin && state == 1)
            seen[lport] = 1;
    fclose(f);
}

static int cmp_u32(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static int is_address(const char *h) {
    unsigned char tmp[16];
    return inet_pton(AF_INET, h, tmp) == 1 || inet_pton(AF_INET6, h, tmp) == 1;
}

/* One GET and its whole answer; 0 on a 200 with a body of Content-Length bytes. */
static int one_get(struct conn *c) {
    if (SSL_write(c->ssl, get_req, get_len) != get_len) return -1;
    char *end;
    while (!(end = memmem(c->buf, c->have, "\r\n\r\n", 4))) {
        if (c->have == BUF) return -1;
        int n = SSL_read(c->ssl, c->buf + c->have, (int)(BUF - c->have));
        if (n <= 0) return -1;
        c->have += (size_t)n;
    }
    size_t head = (size_t)(end - c->buf) + 4;
    int status = 0;
    long body = -1;
    if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1) return -1;
    for (char *l = memmem(c->buf, head, "\r\n", 2); l && l < end; l = memmem(l + 2, head - (size_t)(l + 2 - c->buf), "\r\n", 2))
        if (strncasecmp(l + 2, "content-length:", 15) == 0) body = strtol(l + 17, NULL, 10);
    if (status != 200 || body < 0 || head + (size_t)body > BUF) return -1;
    while (c->have < head + (size_t)body) {
        int n = SSL_read(c->ssl, c->buf + c->have, (int)(BUF - c->have));
        if (n <= 0) return -1;  /* closed inside the body: a short body */
        c->have += (size_t)n;
    }
    if (c->body >= 0 && c->body != body) c->body_varied = 1;
    c->body = body;
    c->have -= head + (size_t)body;  /* bytes past the answer (none, one request at a time) */
    memmove(c->buf, c->buf + head + body, c->have);
    return 0;
}

static void *worker(void *arg) {
    struct conn *c = arg;
    while (atomic_load(&phase) < 2) {
        double t0 = now_s();
        if (one_get(c) != 0) {
            fprintf(stderr, "a request failed: %s\n", ERR_error_string(ERR_get_error(), NULL));
            c->failed = 1;
            return NULL;
        }
        if (atomic_load(&phase) != 1) continue;
        if (c->nlat == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 4096;
            c->lat = realloc(c->lat, c->cap * sizeof *c->lat);
            if (!c->lat) abort();
        }
        c->lat[c->nlat++] = (unsigned)((now_s() - t0) * 1e6);
        c->counted++;
    }
    return NULL;
}

/* TCP to the proxy, CONNECT, TLS, one GET. */
static int open_conn(struct conn *c, int proxy_port, SSL_CTX *ctx) {
    struct sockaddr_in proxy = {.sin_family = AF_INET, .sin_port = htons((unsigned short)proxy_port)};
    inet_pton(AF_INET, "127.0.0.1", &proxy.sin_addr);
    int one = 1;
    struct timeval tmo = {.tv_sec = 30};
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof tmo);  /* a stuck proxy fails, not hangs */
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof tmo);
    if (connect(c->fd, (struct sockaddr *)&proxy, sizeof proxy) != 0) return perror("connect"), -1;
    char req[512], head[1024];
    int len = snprintf(req, sizeof req, "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port, host, port);
    if (send(c->fd, req, (size_t)len, MSG_NOSIGNAL) != len) return perror("send CONNECT"), -1;
    size_t have = 0;  /* byte by byte: nothing of the TLS stream may be read here */
    while (have < 4 || memcmp(head + have - 4, "\r\n\r\n", 4) != 0) {
        if (have == sizeof head - 1 || recv(c->fd, head + have, 1, 0) != 1) return fprintf(stderr, "no answer to CONNECT\n"), -1;
        have++;
    }
    head[have] = 0;
    if (strncmp(head + 8, " 200", 4) != 0) return fprintf(stderr, "CONNECT answered %.40s\n", head), -1;
    c->ssl = SSL_new(ctx);
    SSL_set_fd(c->ssl, c->fd);
    if (is_address(host)) {  /* no SNI for an address (RFC 6066); verify the IP subjectAltName */
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host);
    } else {
        SSL_set_tlsext_host_name(c->ssl, host);
        SSL_set1_host(c->ssl, host);
    }
    if (SSL_connect(c->ssl) != 1) {
        fprintf(stderr, "TLS: %s (verify: %s)\n", ERR_error_string(ERR_get_error(), NULL),
                X509_verify_cert_error_string(SSL_get_verify_result(c->ssl)));
        return -1;
    }
    c->body = -1;
    if (one_get(c) != 0) return fprintf(stderr, "first GET failed\n"), -1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 8 || argc > 11) {
        fprintf(stderr, "usage: intercept_client PROXY_PORT HOST PORT PATH CAFILE|- CONNS SECONDS [WARMUP_S] [PID] [ORIGIN_PORT]\n");
        return 2;
    }
    int proxy_port = atoi(argv[1]), conns = atoi(argv[6]);
    host = argv[2], port = argv[3], path = argv[4];
    const char *cafile = argv[5];
    double seconds = atof(argv[7]), warmup = argc > 8 ? atof(argv[8]) : 1.0;
    int pid = argc > 9 ? atoi(argv[9]) : 0, origin = argc > 10 ? atoi(argv[10]) : 0;
    get_len = snprintf(get_req, sizeof get_req, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: afproxy-bench\r\n\r\n",
                       path, host, port);

    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    static const unsigned char alpn[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1);
    if (strcmp(cafile, "-") != 0) {
        if (SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1) return fprintf(stderr, "cannot load %s\n", cafile), 1;
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    struct conn *c = calloc((size_t)conns, sizeof *c);
    if (!c) return 1;
    int errors = 0;
    for (int i = 0; i < conns; i++)  /* one at a time: the set-up is not what is measured */
        if (open_conn(&c[i], proxy_port, ctx) != 0) {
            fprintf(stderr, "connection %d: set-up failed\n", i);
            c[i].failed = 1;
            errors++;
        }
    for (int i = 0; i < conns; i++)
        if (!c[i].failed) pthread_create(&c[i].thread, NULL, worker, &c[i]);

    static unsigned char before[MAX_PORTS], after[MAX_PORTS];
    struct timespec warm = {(time_t)warmup, (long)((warmup - (time_t)warmup) * 1e9)};
    struct timespec run = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    struct rusage ru0, ru1;
    nanosleep(&warm, NULL);
    if (origin) upstream_ports(origin, before);
    double cpu0 = pid ? tree_cpu(pid) : 0, t0 = now_s();
    getrusage(RUSAGE_SELF, &ru0);
    atomic_store(&phase, 1);
    nanosleep(&run, NULL);
    atomic_store(&phase, 2);
    double t1 = now_s(), cpu1 = pid ? tree_cpu(pid) : 0;
    getrusage(RUSAGE_SELF, &ru1);
    if (origin) upstream_ports(origin, after);

    long requests = 0, body = -2;
    size_t n = 0;
    for (int i = 0; i < conns; i++) {
        if (c[i].failed) continue;
        pthread_join(c[i].thread, NULL);  /* after its last answer or error */
        if (c[i].failed) errors++;
        requests += c[i].counted;
        n += c[i].nlat;
        if (c[i].body_varied || (body != -2 && body != c[i].body)) body = -1;
        else if (body == -2) body = c[i].body;
    }
    unsigned *lat = malloc((n + 1) * sizeof *lat);
    size_t k = 0;
    for (int i = 0; i < conns; i++)
        if (c[i].nlat) memcpy(lat + k, c[i].lat, c[i].nlat * sizeof *lat), k += c[i].nlat;
    qsort(lat, n, sizeof *lat, cmp_u32);
    double elapsed = t1 - t0, p50 = n ? lat[n / 2] / 1e3 : 0, p99 = n ? lat[n * 99 / 100] / 1e3 : 0;
    double client = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
                    (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    int fresh = origin ? 0 : -1, gone = origin ? 0 : -1;
    for (int p = 0; origin && p < MAX_PORTS; p++) fresh += after[p] && !before[p], gone += before[p] && !after[p];
    long rq = requests ? requests : 1;
    printf("LOAD conns=%d requests=%ld seconds=%.3f rps=%.1f p50_ms=%.2f p99_ms=%.2f errors=%d body_bytes=%ld "
           "cpu_s=%.2f cpu_us_per_req=%.1f client_cpu_us_per_req=%.1f upstream_new=%d upstream_gone=%d\n",
           conns, requests, elapsed, requests / elapsed, p50, p99, errors, body < 0 ? -1 : body,
           pid ? cpu1 - cpu0 : -1.0, pid ? (cpu1 - cpu0) * 1e6 / rq : -1.0, client * 1e6 / rq, fresh, gone);
    return 0;
}
