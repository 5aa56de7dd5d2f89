/* B41: the network databases, read by glibc's nss (and its resolver) with its
 * own internal opens: getaddrinfo, getnameinfo, getservbyname, getprotobyname_r,
 * gethostbyname. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(void)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	int g = getaddrinfo("localhost", "http", &hints, &ai);
	int port = g == 0 ? ntohs(((struct sockaddr_in *)ai->ai_addr)->sin_port) : -1;
	printf("getaddrinfo %d %d\n", g, port);
	if (ai)
		freeaddrinfo(ai);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(80)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	char host[256], serv[64];
	int n = getnameinfo((struct sockaddr *)&sin, sizeof(sin), host, sizeof(host), serv,
			    sizeof(serv), 0);
	printf("getnameinfo %d %s\n", n, n == 0 ? serv : "-");
	struct servent *s = getservbyname("domain", "udp");
	printf("getservbyname %d\n", s ? ntohs(s->s_port) : -1);
	struct protoent pe, *pr = NULL;
	char buf[1024];
	int r = getprotobyname_r("udp", &pe, buf, sizeof(buf), &pr);
	printf("getprotobyname_r %d %d\n", r, pr ? pr->p_proto : -1);
	struct hostent *h = gethostbyname("localhost");
	printf("gethostbyname %s\n", h ? "found" : "none");
	return 0;
}
