#!/usr/bin/env bash
# On the GPU machine: which part of archbuild's offline build step stops a
# setup.py that asks torch for the GPUs (torch.cuda.device_count(), then
# get_device_capability) from initialising CUDA. autoawq-kernels' build got
# "CUDA error 304: OS call failed" inside the step while the same call works
# outside it. Each line tries one of the step's ingredients alone, then all
# together: its capability drop (a root step keeps 8), no_new_privs, its PID
# namespace with its own /proc, its network and mount namespaces, and each
# host socket file covered with /dev/null as the step covers them.
#
# Usage: bench/build_step_cuda_probe.sh [PYTHON]   (default /opt/torch/.venv/bin/python)
set -uo pipefail
python=${1:-/opt/torch/.venv/bin/python}
check='import torch; n = torch.cuda.device_count(); print(n, [torch.cuda.get_device_capability(i) for i in range(n)])'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/capdrop.c" <<'C'
/* capdrop CMD...: keep only the capabilities archbuild's root build step keeps, then exec CMD */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
static int kept(int c) {
  int k[] = {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETGID, CAP_SETUID};
  for (unsigned i = 0; i < 8; i++) if (k[i] == c) return 1;
  return 0;
}
int main(int argc, char** argv) {
  (void)argc;
  for (int c = 0; c <= 63; c++) if (!kept(c)) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2] = {{0}};
  syscall(SYS_capget, &h, d);
  for (int c = 0; c < 64; c++) {
    if (kept(c)) continue;
    unsigned b = 1u << (c % 32);
    d[c / 32].effective &= ~b; d[c / 32].permitted &= ~b; d[c / 32].inheritable &= ~b;
  }
  syscall(SYS_capset, &h, d);
  execvp(argv[1], argv + 1);
  perror("exec");
  return 3;
}
C
cc=$(command -v cc || command -v gcc || echo /opt/gcc/bin/gcc)
"$cc" -O2 -o "$work/capdrop" "$work/capdrop.c" || { echo "no C compiler: the capability line is skipped"; }
try() { echo "$1: $(timeout 120 "${@:2}" 2>&1 | tail -1)"; }
try "as is" "$python" -c "$check"
[[ -x $work/capdrop ]] && try "capabilities dropped" "$work/capdrop" "$python" -c "$check"
try "no_new_privs" setpriv --no-new-privs "$python" -c "$check"
try "PID namespace, own /proc" unshare -p -f --mount-proc "$python" -c "$check"
try "PID namespace, host /proc" unshare -p -f "$python" -c "$check"
try "network + mount namespaces" unshare -n -m "$python" -c "$check"
[[ -x $work/capdrop ]] && try "all of them" unshare -n -m -p -f --mount-proc "$work/capdrop" "$python" -c "$check"
sockets=$( (awk 'NR>1 && $8 ~ /^\// {print $8}' /proc/net/unix; find /tmp /run /var/run /dev/shm -type s 2>/dev/null) | sort -u)
for socket in $sockets; do
  try "covered $socket" unshare -m sh -c "mount --bind /dev/null '$socket' && exec '$python' -c '$check'"
done
ls -la /dev/nvidia* 2>&1 | head
