/* SPDX-License-Identifier: MIT */
/*
 * switchyard/io.h - copies to and from device-like memory: a mapped PCI BAR
 * (/sys/bus/pci/devices/.../resource0, VFIO), an FPGA's registers, a UIO
 * region. Such memory is not memory: a read can have side effects (a FIFO
 * pops), a write twice is two writes, and every access is a bus
 * transaction, so a byte access where a wide one would do costs a whole
 * transaction per byte. memcpy() is wrong there: it may touch a byte twice
 * (an overlapping last word), read the destination, use vector or
 * "rep movs" accesses of any width, and its byte-at-a-time paths are the
 * ones the kernel's memcpy_toio() fell into for years (the 2018/2019
 * thread "x86: only use ERMS for user copies for larger sizes").
 *
 *   switchyard_memcpy_toio(bar + 0x100, buf, len);
 *   switchyard_memcpy_fromio(buf, bar + 0x100, len);
 *   switchyard_memcpy_toio_width(regs, buf, len, 4);   // no 8-byte access
 *
 * What every call here guarantees, for the device range [dev, dev + n):
 *  - every device byte in it is accessed exactly once: written once by a
 *    copy to the device (never read), read once by a copy from it (never
 *    written); no byte outside it is accessed;
 *  - each device access is one load or store instruction of 1, 2, 4 or 8
 *    bytes, naturally aligned (its address a multiple of its width);
 *  - each is as wide as possible: at device address a, with r bytes left
 *    and a maximum width W, the width is the largest power of two w with
 *    w <= W, w <= r and a % w == 0. That gives the fewest naturally aligned
 *    accesses that cover the range (bytes up to 2-, 4-, 8-byte alignment,
 *    then W-byte accesses, then 4, 2, 1 for what is left);
 *  - the accesses are issued in ascending address order, in program order
 *    (volatile accesses). No barrier is added before or after: a caller
 *    that must order the copy against a later doorbell write, or that maps
 *    the device write-combining, adds its own fence.
 * The normal-memory side (src of a copy to the device, dst of a copy from
 * it) is ordinary memory: it may be unaligned, and no promise is made
 * about the width or number of its accesses (the compiler chooses them;
 * ordinary memory has no side effects to count).
 *
 * n == 0: nothing is accessed, and neither pointer is dereferenced (they
 * may be NULL). The two buffers must not overlap (the behaviour is
 * undefined if they do); the device range must be mapped for the whole
 * copy. The widest access is 8 bytes where one instruction can make it
 * (64-bit targets); on a 32-bit target, widths above 4 are treated as 4.
 *
 * Thread-safe and async-signal-safe: no lock, no state, no allocation.
 * Two threads copying to the same device range at once interleave their
 * accesses (each access is whole; the copies are not atomic).
 */
#ifndef SWITCHYARD_IO_H
#define SWITCHYARD_IO_H

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * switchyard_memcpy_toio - copy n bytes from normal memory at src to the
 * device at dst, with accesses up to 8 bytes wide (see above).
 */
SWITCHYARD_API void switchyard_memcpy_toio(volatile void *dst,
					   const void *src, size_t n);

/*
 * switchyard_memcpy_fromio - copy n bytes from the device at src to normal
 * memory at dst, with accesses up to 8 bytes wide (see above).
 */
SWITCHYARD_API void switchyard_memcpy_fromio(void *dst,
					     const volatile void *src,
					     size_t n);

/*
 * switchyard_memcpy_toio_width, switchyard_memcpy_fromio_width - the same,
 * with device accesses at most max_width bytes wide, for devices that
 * cannot take wider ones (a 32-bit register file: 4; a device that only
 * takes bytes: 1). max_width is 1, 2, 4 or 8. Returns 0, or -EINVAL for
 * any other max_width, in which case nothing is accessed (whatever n is).
 */
SWITCHYARD_API int switchyard_memcpy_toio_width(volatile void *dst,
						const void *src, size_t n,
						unsigned int max_width);
SWITCHYARD_API int switchyard_memcpy_fromio_width(void *dst,
						  const volatile void *src,
						  size_t n,
						  unsigned int max_width);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_IO_H */
