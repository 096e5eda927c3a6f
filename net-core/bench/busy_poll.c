// SPDX-License-Identifier: GPL-2.0
/*
 * busy_poll - a UDP socket that busy polls its NAPI, for the bench's
 * busy poll cases (scripts/bench/guest/bench.sh).
 *
 * usage: busy_poll ADDR PORT BUDGET
 *
 * Binds a UDP socket to ADDR:PORT (IPv4) with SO_BUSY_POLL,
 * SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET BUDGET, prints "ready",
 * waits up to 20 s for a first packet (it gives the socket the NAPI id
 * of the queue that receives it) and prints "napi <id>". Then it calls
 * recvfrom(MSG_DONTWAIT) in a loop, each call polls that NAPI once
 * (sk_busy_loop(), non-blocking), until SIGINT or SIGTERM; it prints
 * "napi <id> polls <calls> packets <received>" and exits 0 (1 when no
 * packet came, or on an error).
 *
 * The frames the XDP program redirects, drops or transmits never reach
 * the socket: the busy poller only runs the NAPI that processes them.
 * Static binary, no libraries: the bench guest has none to offer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif
#ifndef SO_INCOMING_NAPI_ID
#define SO_INCOMING_NAPI_ID 56
#endif

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int set_int(int fd, int opt, int val, const char *name)
{
	if (setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val))) {
		fprintf(stderr, "busy_poll: setsockopt(%s): %s\n", name,
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long long polls = 0, pkts = 0;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct pollfd pfd;
	unsigned int napi_id = 0;
	socklen_t len = sizeof(napi_id);
	char buf[2048];
	int fd;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: busy_poll ADDR PORT BUDGET\n");
		return 2;
	}
	addr.sin_port = htons(atoi(argv[2]));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("busy_poll: socket");
		return 1;
	}
	if (set_int(fd, SO_BUSY_POLL, 1000, "SO_BUSY_POLL") ||
	    set_int(fd, SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL") ||
	    set_int(fd, SO_BUSY_POLL_BUDGET, atoi(argv[3]),
		    "SO_BUSY_POLL_BUDGET"))
		return 1;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("busy_poll: bind");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);

	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, 20000) != 1) {
		fprintf(stderr, "busy_poll: no packet within 20 s\n");
		return 1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &napi_id, &len) ||
	    !napi_id) {
		fprintf(stderr, "busy_poll: the socket learned no NAPI id\n");
		return 1;
	}
	printf("napi %u\n", napi_id);
	fflush(stdout);

	while (!stop) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		polls++;
		if (n >= 0) {
			pkts++;
		} else if (errno != EAGAIN && errno != EINTR) {
			perror("busy_poll: recv");
			return 1;
		}
	}
	printf("napi %u polls %llu packets %llu\n", napi_id, polls, pkts);
	return 0;
}
