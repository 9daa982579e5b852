#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "CSplice.h"

ssize_t afproxy_splice(int from, int to, size_t length) {
    return splice(from, NULL, to, NULL, length, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
}

int afproxy_splice_pipe(int fds[2], int size) {
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return -1;
    /* A smaller grant (pipe-max-size, or the user's pipe quota) is fine: the relay moves what
     * the pipe holds. Only a pipe of no size at all is refused. */
    (void)fcntl(fds[0], F_SETPIPE_SZ, size);
    int granted = fcntl(fds[0], F_GETPIPE_SZ);
    if (granted <= 0) {
        int saved = errno;
        close(fds[0]);
        close(fds[1]);
        errno = saved;
        return -1;
    }
    return granted;
}
