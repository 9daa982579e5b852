/*
 * The kernel's rtnetlink and sock_diag ABI for AFProxyNetwork, its only user.
 *
 * Why this file exists: Glibc's Swift module does not include <linux/netlink.h>,
 * <linux/rtnetlink.h> or <linux/if.h>, so sockaddr_nl, the RTM_* message types, the RTMGRP_*
 * groups, the IFLA_/RTA_ attribute numbers and the IFF_ flags would otherwise be copied into
 * Swift by hand. Only includes: the messages themselves are parsed from bytes in Swift
 * (NetlinkMessage), the function-like NLMSG_ and RTA_ macros do not reach Swift anyway.
 */
#ifndef AFPROXY_CNETLINK_SHIM_H
#define AFPROXY_CNETLINK_SHIM_H

#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_arp.h>
/* The socket-diagnostics ABI (inet_diag): the client-process lookup asks the kernel for one TCP
 * socket by its addresses (SOCK_DIAG_BY_FAMILY, struct inet_diag_req_v2 and inet_diag_msg). */
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
/* Not in Glibc's Swift module either: the eventfd that wakes the watcher's thread to stop. */
#include <sys/eventfd.h>

#endif
