package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// denied are the system calls a test run never needs and which reach the
// kernel's least-trodden paths: tracing and reading other processes,
// mounting and namespaces (a nested user namespace gives root in it),
// keyrings, BPF and perf, userfaultfd (a staple of kernel exploits),
// modules, kexec, the clock, swap, reboot, io_uring. Each fails with EPERM.
var denied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"clock_settime", "clock_adjtime", "settimeofday", "adjtimex",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "syslog", "vhangup", "iopl", "ioperm", "lookup_dcookie",
	"open_by_handle_at", "io_uring_setup", "io_uring_enter", "io_uring_register",
	// Memory no watchdog sees: SysV shared memory, message queues and
	// semaphores are the kernel's, held after their maker exits, and a
	// memfd is a file in no directory the run's disk budget walks.
	"shmget", "msgget", "semget", "memfd_create", "memfd_secret",
}

// deniedFamilies are the socket families a run never needs: the host's
// hypervisor sockets and the kernel's own messages (routes, audit, its
// uevents). A run reaches the network through its proxy (AF_INET to it)
// and talks to its browser over AF_UNIX.
var deniedFamilies = []uint64{unix.AF_VSOCK, unix.AF_NETLINK, unix.AF_PACKET, unix.AF_KEY, unix.AF_ALG, unix.AF_BLUETOOTH}

// newNamespaces are clone's flags that make a namespace.
var newNamespaces = []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC,
	unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET}

// seccompFilter assembles the filter every run's command starts under
// (bubblewrap's --seccomp: a BPF program of struct sock_filter), for the
// host's architecture. It allows everything but the denied calls and a
// clone that makes a namespace. clone3, whose flags a filter cannot read,
// answers ENOSYS, so the C library falls back to clone; a system call of
// another ABI (i386's int 0x80 on x86_64) answers ENOSYS too, so the list
// cannot be sidestepped through another table.
func seccompFilter() ([]byte, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	clone := seccomp.SyscallGroup{Action: seccomp.ActionErrno}
	for _, flag := range newNamespaces {
		clone.NamesWithCondtions = append(clone.NamesWithCondtions, seccomp.NameWithConditions{Name: "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: flag}}})
	}
	families := seccomp.SyscallGroup{Action: seccomp.ActionErrno}
	for _, f := range deniedFamilies {
		families.NamesWithCondtions = append(families.NamesWithCondtions, seccomp.NameWithConditions{Name: "socket",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: f}}})
	}
	var names []string
	for _, n := range denied {
		if _, ok := info.SyscallNames[n]; ok { // some are not on every architecture
			names = append(names, n)
		}
	}
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{Names: names, Action: seccomp.ActionErrno}, clone, families}}
	body, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	clone3, ok := info.SyscallNames["clone3"]
	if !ok {
		return nil, fmt.Errorf("sandbox: seccomp: no clone3 on %s", info.Name)
	}
	const archOffset, nrOffset = 4, 0 // in struct seccomp_data
	enosys := uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)
	prog := append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: enosys},
		bpf.LoadAbsolute{Off: nrOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(clone3), SkipFalse: 1},
		bpf.RetConstant{Val: enosys},
	}, body...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	var b bytes.Buffer
	for _, ins := range raw {
		// struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }
		_ = binary.Write(&b, binary.NativeEndian, ins.Op)
		b.WriteByte(ins.Jt)
		b.WriteByte(ins.Jf)
		_ = binary.Write(&b, binary.NativeEndian, ins.K)
	}
	return b.Bytes(), nil
}
