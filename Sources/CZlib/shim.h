#ifndef BANGBANG_CZLIB_SHIM_H
#define BANGBANG_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit2/inflateInit2 are macros over the *_ functions; Swift cannot call macros. */
static inline int bangbang_deflateInit2(z_streamp strm, int level, int method, int windowBits,
                                        int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}
static inline int bangbang_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
#endif
