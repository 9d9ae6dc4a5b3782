"""The seccomp filter a sandbox worker loads on itself before it runs any env code.

The kernel then refuses, whatever Python or native code asks: creating processes (fork, vfork,
and clone without CLONE_THREAD, which is how glibc forks; clone3 answers ENOSYS so libc falls
back to clone), exec, sockets, ptrace and other processes' memory, mount-like calls and new
namespaces, and a few kernel interfaces env code has no use for (bpf, keyrings, io_uring,
modules, perf), System V IPC and POSIX message queues (siblings share the ipc namespace),
anonymous files (memfd_create, memfd_secret: their pages are not address space, so RLIMIT_AS does
not count them and a worker could hold any amount across jobs; /dev/shm is read-only, and files in
the scratch are capped by its tmpfs size), and
signals to any process but itself (siblings serving other envs share the pid namespace and the
user, so the kernel would let them signal each other), or making itself dumpable again. For the
same reason it refuses every call that changes *another* process of the same user without a
ptrace check: resource limits (prlimit on a sibling's or the fork server's RLIMIT_AS, CPU,
NOFILE...), scheduling (nice, affinity, policy, I/O priority), and signal ownership of a file
(F_SETOWN/F_SETSIG, FIOSETOWN/SIOCSPGRP: SIGIO, or any signal, to a process of its choosing).
The worker's limits are set before the filter is loaded (setrlimit, which glibc makes
prlimit(0, ...), is refused after it).
Threads keep working. A filter cannot be removed once loaded, and syscalls of
another architecture (the 32-bit ABI) kill the process (libseccomp's default).
"""

from __future__ import annotations

import errno

__all__ = ["DENIED", "load_filter"]

CLONE_THREAD = 0x00010000
DENIED = (
    "fork", "vfork", "execve", "execveat", "socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree", "fsopen", "fsmount",
    "fspick", "mount_setattr", "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "open_by_handle_at", "name_to_handle_at", "reboot", "swapon", "swapoff",
    "syslog", "acct", "quotactl", "personality", "pidfd_getfd", "pidfd_open", "pidfd_send_signal", "tkill",
    "shmget", "shmat", "msgget", "semget", "mq_open", "memfd_create", "memfd_secret",
)
SELF_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: the target process
PR_SET_DUMPABLE = 4
NOT_SELF = ("sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr")  # first argument: 0 only
F_SETOWN, F_SETSIG, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP = 8, 10, 15, 0x8901, 0x8902
LOW32 = 0xFFFFFFFF  # the kernel reads these arguments as 32-bit ints: higher bits must not dodge an equality test


def load_filter(own_pid: int) -> None:
    """Load the filter on this process (and the threads it starts later); it stays for life."""
    import pyseccomp as seccomp

    deny = seccomp.ERRNO(errno.EPERM)
    syscalls = seccomp.SyscallFilter(seccomp.ALLOW)
    syscalls.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    syscalls.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for name in DENIED:
        try:
            syscalls.add_rule(deny, name)
        except OSError:  # a syscall this kernel/architecture does not have
            continue
    for name in SELF_ONLY:
        syscalls.add_rule(deny, name, seccomp.Arg(0, seccomp.NE, own_pid))
    syscalls.add_rule(deny, "prctl", seccomp.Arg(0, seccomp.EQ, PR_SET_DUMPABLE))
    # another process's limits (new limits given, a pid that is not its own); reading them stays allowed
    syscalls.add_rule(deny, "prlimit64", seccomp.Arg(0, seccomp.NE, own_pid), seccomp.Arg(2, seccomp.NE, 0))
    syscalls.add_rule(deny, "setrlimit")
    syscalls.add_rule(deny, "setpriority", seccomp.Arg(0, seccomp.NE, 0))  # PRIO_PROCESS only,
    syscalls.add_rule(deny, "setpriority", seccomp.Arg(1, seccomp.NE, 0))  # of itself only
    syscalls.add_rule(deny, "ioprio_set", seccomp.Arg(0, seccomp.NE, 1))  # IOPRIO_WHO_PROCESS only,
    syscalls.add_rule(deny, "ioprio_set", seccomp.Arg(1, seccomp.NE, 0))  # of itself only
    for name in NOT_SELF:
        syscalls.add_rule(deny, name, seccomp.Arg(0, seccomp.NE, 0))
    for name in ("fcntl", "fcntl64"):
        for command in (F_SETOWN, F_SETSIG, F_SETOWN_EX):
            try:
                syscalls.add_rule(deny, name, seccomp.Arg(1, seccomp.MASKED_EQ, LOW32, command))
            except OSError:  # fcntl64 exists on 32-bit architectures only
                break
    for command in (FIOSETOWN, SIOCSPGRP):
        syscalls.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, LOW32, command))
    syscalls.load()
