/*
 * splice(2), pipe2(2) and F_SETPIPE_SZ for AFProxyTunnel's kernel relay (SpliceRelay), its only
 * user, and the epoll API its watcher thread waits with.
 *
 * Why this file exists: Glibc declares splice, pipe2 and F_SETPIPE_SZ only under _GNU_SOURCE,
 * which its Swift module is not built with, and the module leaves <sys/epoll.h> out. The .c file
 * defines _GNU_SOURCE and wraps the three calls; nothing else is done in C.
 */
#ifndef AFPROXY_CSPLICE_H
#define AFPROXY_CSPLICE_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/epoll.h>

/* splice(from, NULL, to, NULL, length, SPLICE_F_NONBLOCK | SPLICE_F_MOVE). */
ssize_t afproxy_splice(int from, int to, size_t length);

/* A non-blocking, close-on-exec pipe, fds[0] its read end; asks for `size` bytes of buffer and
 * answers what the kernel granted (F_GETPIPE_SZ), or -1 with errno set (the pipe is closed). */
int afproxy_splice_pipe(int fds[2], int size);

#endif
