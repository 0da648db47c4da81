//go:build !amd64 || purego

package kern

func q4kSums(nb int, x, y []byte, out []int32)   { q4kSumsGo(nb, x, y, out) }
func q5kSums(nb int, x, y []byte, out []int32)   { q5kSumsGo(nb, x, y, out) }
func q6kSums(nb int, x, y []byte, out []int32)   { q6kSumsGo(nb, x, y, out) }
func iq4xsSums(nb int, x, y []byte, out []int32) { iq4xsSumsGo(nb, x, y, out) }
func iq4nlSums(nb int, x, y []byte, out []int32) { iq4nlSumsGo(nb, x, y, out) }

func quantizeRowQ8_K(nb int, x []float32, dst []byte) bool { return false }
