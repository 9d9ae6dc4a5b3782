"""The seccomp filter a sandbox worker loads on itself before it runs any env code.

The kernel then refuses, whatever Python or native code asks: creating processes (fork, vfork,
and clone without CLONE_THREAD, which is how glibc forks; clone3 answers ENOSYS so libc falls
back to clone), exec, sockets, ptrace and other processes' memory, mount-like calls and new
namespaces, and a few kernel interfaces env code has no use for (bpf, keyrings, io_uring,
modules, perf), System V IPC (siblings share the ipc namespace), and signals to any process but
itself (siblings serving other envs share the pid namespace), or making itself dumpable again.
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
    "shmget", "shmat", "msgget", "semget",
)
SELF_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: the target process
PR_SET_DUMPABLE = 4


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
    syscalls.load()
