/*
 * bench/tunnel_client.c — small exchanges through a forward proxy's CONNECT tunnel, for bench/tunnel.
 *
 * Why C: wrk cannot open a CONNECT tunnel, and a Python client at 32 connections spends more CPU
 * than the proxy it measures on a 2-core machine, which would hide the proxy's cost.
 *
 *   tunnel_client PROXY_PORT HOST PORT PATH CONNS SECONDS
 *
 * Opens CONNS connections to 127.0.0.1:PROXY_PORT, sends `CONNECT HOST:PORT` on each and waits
 * for every 200 before the clock starts; then each connection sends `GET PATH` over keep-alive
 * and reads the whole answer (Content-Length) before the next one, for SECONDS. One thread,
 * epoll. Prints
 *   TUNNEL conns=N requests=N seconds=F rps=F p50_us=N p99_us=N errors=N
 * An error (a refused CONNECT, a closed connection, a non-200 answer) ends that connection and is
 * counted; the run goes on with the others.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536
#define MAX_SAMPLES (1 << 24)

struct conn {
    int fd;
    int tunneled;      /* the CONNECT's 200 came */
    int done;          /* closed after an error */
    size_t have;       /* bytes in buf */
    double sent_at;    /* when the current request went out */
    char buf[BUF];
};

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_u32(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* Bytes of the first complete answer in buf, 0 while incomplete, -1 when it cannot be read. */
static long answer_length(const char *buf, size_t have, int *status) {
    const char *end = memmem(buf, have, "\r\n\r\n", 4);
    if (!end) return have >= BUF ? -1 : 0;
    size_t head = (size_t)(end - buf) + 4;
    if (sscanf(buf, "HTTP/1.%*d %d", status) != 1) return -1;
    long body = 0;
    for (const char *line = memmem(buf, head, "\r\n", 2); line && line < end; line = memmem(line + 2, head - (size_t)(line + 2 - buf), "\r\n", 2)) {
        if (strncasecmp(line + 2, "content-length:", 15) == 0) body = strtol(line + 17, NULL, 10);
    }
    return have >= head + (size_t)body ? (long)(head + (size_t)body) : 0;
}

static int send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;  /* a request fits a socket buffer: EAGAIN is an error here */
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: tunnel_client PROXY_PORT HOST PORT PATH CONNS SECONDS\n");
        return 2;
    }
    int proxy_port = atoi(argv[1]), conns = atoi(argv[5]);
    const char *host = argv[2], *port = argv[3], *path = argv[4];
    double seconds = atof(argv[6]);
    char connect_req[512], get_req[1024];
    snprintf(connect_req, sizeof connect_req, "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port, host, port);
    int get_len = snprintf(get_req, sizeof get_req,
                           "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: afproxy-bench\r\n\r\n", path, host, port);

    struct conn *c = calloc((size_t)conns, sizeof *c);
    unsigned *samples = malloc(sizeof(unsigned) * MAX_SAMPLES);
    int ep = epoll_create1(0);
    if (!c || !samples || ep < 0) return 1;
    struct sockaddr_in proxy = {.sin_family = AF_INET, .sin_port = htons((unsigned short)proxy_port)};
    inet_pton(AF_INET, "127.0.0.1", &proxy.sin_addr);

    /* Set-up: blocking connects and CONNECTs, one after the other, before the clock starts. */
    int errors = 0;
    for (int i = 0; i < conns; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, (struct sockaddr *)&proxy, sizeof proxy) != 0 || send_all(fd, connect_req, strlen(connect_req))) {
            fprintf(stderr, "connection %d: connect/CONNECT failed: %s\n", i, strerror(errno));
            return 1;
        }
        c[i].fd = fd;
        /* The CONNECT's answer: a head without a body. */
        while (!memmem(c[i].buf, c[i].have, "\r\n\r\n", 4)) {
            ssize_t n = recv(fd, c[i].buf + c[i].have, BUF - c[i].have, 0);
            if (n <= 0) {
                fprintf(stderr, "connection %d: no answer to CONNECT\n", i);
                return 1;
            }
            c[i].have += (size_t)n;
        }
        if (strncmp(c[i].buf + 9, "200", 3) != 0) {
            fprintf(stderr, "connection %d: CONNECT answered %.40s\n", i, c[i].buf);
            return 1;
        }
        c[i].have = 0;
        c[i].tunneled = 1;
    }
    for (int i = 0; i < conns; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev);
    }

    long requests = 0, nsamples = 0;
    double start = now_us(), stop = start + seconds * 1e6;
    for (int i = 0; i < conns; i++) {
        c[i].sent_at = now_us();
        if (send_all(c[i].fd, get_req, (size_t)get_len)) { c[i].done = 1; errors++; }
    }
    struct epoll_event events[256];
    int live = conns - errors;
    double t = start;
    while (live > 0 && t < stop) {
        int n = epoll_wait(ep, events, 256, 100);
        for (int k = 0; k < n; k++) {
            struct conn *x = &c[events[k].data.u32];
            if (x->done) continue;
            ssize_t got = recv(x->fd, x->buf + x->have, BUF - x->have, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            int status = 0;
            long len = got > 0 ? answer_length(x->buf, x->have += (size_t)got, &status) : -1;
            if (len == 0) continue;
            t = now_us();
            if (len < 0 || status != 200) {
                fprintf(stderr, "a connection failed (read %zd, status %d)\n", got, status);
                x->done = 1;
                errors++;
                live--;
                epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
                continue;
            }
            requests++;
            if (nsamples < MAX_SAMPLES) samples[nsamples++] = (unsigned)(t - x->sent_at);
            memmove(x->buf, x->buf + len, x->have - (size_t)len);
            x->have -= (size_t)len;
            if (t >= stop) continue;
            x->sent_at = t;
            if (send_all(x->fd, get_req, (size_t)get_len)) {
                x->done = 1;
                errors++;
                live--;
            }
        }
        t = now_us();
    }
    double elapsed = (now_us() - start) / 1e6;
    qsort(samples, (size_t)nsamples, sizeof *samples, cmp_u32);
    unsigned p50 = nsamples ? samples[nsamples / 2] : 0, p99 = nsamples ? samples[nsamples * 99 / 100] : 0;
    printf("TUNNEL conns=%d requests=%ld seconds=%.3f rps=%.1f p50_us=%u p99_us=%u errors=%d\n", conns, requests,
           elapsed, requests / elapsed, p50, p99, errors);
    return 0;
}
