/*
 * libsystemd for AFProxySystemd, its only user.
 *
 * Why this file exists: SwiftPM reaches a system library through a module map and a header.
 * The calls afproxy makes (sd_notify, sd_listen_fds_with_names, sd_is_socket,
 * sd_watchdog_enabled, sd_journal_sendv, sd_pid_get_unit) are not variadic, so Swift calls them directly and no
 * wrapper is needed; sd_journal_send, which is variadic, is not used.
 */
#ifndef AFPROXY_CSYSTEMD_SHIM_H
#define AFPROXY_CSYSTEMD_SHIM_H

#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>

#endif
