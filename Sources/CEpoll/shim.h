// Linux readiness notification (epoll), which the Glibc module does not export.
#include <sys/epoll.h>
