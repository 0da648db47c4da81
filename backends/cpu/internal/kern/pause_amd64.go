//go:build amd64 && !purego

package kern

// Pause tells the processor that the caller is spinning on a shared variable (x86 PAUSE): the
// loop backs off the memory pipeline and the sibling hyperthread, and a hypervisor that watches
// for pause loops (KVM's pause-loop exiting) can give the physical core to the virtual CPU the
// spinner waits for, one the host descheduled. Every x86-64 processor has it.
func Pause()
