#include "process/unix_socket_filter.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

namespace archbuild {

namespace {

constexpr uint32_t kRefuse = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
constexpr uint32_t kArch = offsetof(seccomp_data, arch);
constexpr uint32_t kNr = offsetof(seccomp_data, nr);
constexpr uint32_t kFirstArgument = offsetof(seccomp_data, args);  // its low 32 bits: little-endian machines

sock_filter load(uint32_t offset) { return BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset); }
sock_filter ret(uint32_t action) { return BPF_STMT(BPF_RET | BPF_K, action); }
// A jump's offsets count from the instruction after it.
sock_filter if_equal(uint32_t value, uint8_t true_offset, uint8_t false_offset) {
  return BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, true_offset, false_offset);
}

#if defined(__x86_64__)
sock_filter if_at_least(uint32_t value, uint8_t true_offset, uint8_t false_offset) {
  return BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, value, true_offset, false_offset);
}

// 0 arch; 1 x86-64? -> 6; 2 i386? -> 3, else allow (12); 3-5 i386 socketcall
// (102) or socket (359): refuse (11); 6-7 an x32 call (nr with bit 30):
// refuse; 8 socket? -> 9, else allow; 9-10 AF_UNIX: refuse; 11 refuse; 12 allow.
const sock_filter kProgram[] = {
    load(kArch),
    if_equal(AUDIT_ARCH_X86_64, 4, 0),
    if_equal(AUDIT_ARCH_I386, 0, 9),
    load(kNr),
    if_equal(102, 6, 0),
    if_equal(359, 5, 6),
    load(kNr),
    if_at_least(0x40000000, 3, 0),
    if_equal(__NR_socket, 0, 3),
    load(kFirstArgument),
    if_equal(AF_UNIX, 0, 1),
    ret(kRefuse),
    ret(SECCOMP_RET_ALLOW),
};
#elif defined(__aarch64__)
// 0 arch; 1 aarch64? -> 2, else allow (7); 2-3 socket? -> 4, else allow;
// 4-5 AF_UNIX: refuse (6); 7 allow.
const sock_filter kProgram[] = {
    load(kArch),
    if_equal(AUDIT_ARCH_AARCH64, 0, 5),
    load(kNr),
    if_equal(__NR_socket, 0, 3),
    load(kFirstArgument),
    if_equal(AF_UNIX, 0, 1),
    ret(kRefuse),
    ret(SECCOMP_RET_ALLOW),
};
#endif

}  // namespace

int refuse_unix_sockets() {
#if defined(__x86_64__) || defined(__aarch64__)
  sock_fprog program{static_cast<unsigned short>(sizeof kProgram / sizeof kProgram[0]),
                     const_cast<sock_filter*>(kProgram)};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) return errno;
  return 0;
#else
  return ENOSYS;  // a machine archbuild has no filter for: the covers alone
#endif
}

}  // namespace archbuild
