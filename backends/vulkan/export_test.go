//go:build cgo && !novulkan

package vulkan

// LimitGroupsForTest caps the workgroup counts the op encoders dispatch on be's device at max (per
// dimension; 0 keeps the device's limit), so small tensors take the grid-stride paths that large
// ones take at the device's real limits. It returns a function that restores the limits.
func LimitGroupsForTest(be *Backend, max [3]uint32) (restore func()) {
	g := be.dev.gpu
	old := g.MaxComputeWorkGroupCount
	for i, m := range max {
		if m != 0 {
			g.MaxComputeWorkGroupCount[i] = m
		}
	}
	return func() { g.MaxComputeWorkGroupCount = old }
}
