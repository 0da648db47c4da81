package tests

// The GPU backends' expected-unsupported sweep cases, by rule (gpuUnsupported lives in the test
// build, so this registration does too).
func init() {
	for _, c := range sweepSelection() {
		if why := sweepGPUReason(c); why != "" {
			gpuUnsupported[c.Name] = why
		}
	}
}
