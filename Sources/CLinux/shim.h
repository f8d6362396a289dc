// Linux interfaces the Glibc module does not export: readiness notification (epoll) and
// returning freed heap memory to the system (malloc_trim).
#include <sys/epoll.h>
#include <malloc.h>
