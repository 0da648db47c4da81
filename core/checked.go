package core

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// MaxTensorBytes is the largest byte span a tensor may cover: what an int64 byte count and the
// platform's address space (its int) can both hold, and at most 2⁶² bytes (more than any 64-bit
// machine addresses), which leaves every offset+size sum over two tensors room not to overflow.
// Constructors reject larger tensors with an error wrapping ErrOverflow.
const MaxTensorBytes int64 = min(math.MaxInt, 1<<62)

// ErrOverflow is wrapped by every error about a size, stride or offset whose arithmetic would
// overflow (errors.Is(err, ErrOverflow) holds).
var ErrOverflow = errors.New("integer overflow")

// CheckedAdd returns a+b and whether the sum fits in an int64.
func CheckedAdd(a, b int64) (int64, bool) {
	s := a + b
	// Overflow happened iff a and b have the same sign and s has the other one.
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return 0, false
	}
	return s, true
}

// CheckedMul returns a*b and whether the product fits in an int64.
func CheckedMul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	ua, ub := absU64(a), absU64(b)
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return int64(-lo), true // -lo wraps to the right two's complement value, MinInt64 included
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func absU64(v int64) uint64 {
	if v < 0 {
		return uint64(-v) // MinInt64 maps to 1<<63, its magnitude
	}
	return uint64(v)
}

// CheckedAlignUp rounds n ≥ 0 up to a multiple of a > 0 and reports whether the result fits in an
// int64 (false also for n < 0 or a ≤ 0).
func CheckedAlignUp(n, a int64) (int64, bool) {
	if n < 0 || a <= 0 {
		return 0, false
	}
	r := n % a
	if r == 0 {
		return n, true
	}
	return CheckedAdd(n, a-r)
}

// checkedProduct multiplies vs, reporting overflow.
func checkedProduct(vs ...int64) (int64, bool) {
	p := int64(1)
	for _, v := range vs {
		var ok bool
		if p, ok = CheckedMul(p, v); !ok {
			return 0, false
		}
	}
	return p, true
}

// overflowf returns an error wrapping ErrOverflow.
func overflowf(format string, args ...any) error {
	return fmt.Errorf("tandem: "+format+": %w", append(args, ErrOverflow)...)
}

// overflowErr is overflowf without the "tandem: " prefix, for errors that get wrapped.
func overflowErr(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrOverflow)...)
}

// layoutBytes is the byte span (ggml_nbytes) of a tensor of type typ, shape ne and strides nb,
// checked: negative sizes or strides, overflowing arithmetic and spans past MaxTensorBytes are
// errors. An empty shape spans 0 bytes.
func layoutBytes(typ Type, ne, nb [MaxDims]int64) (int64, error) {
	if n, ok := layoutBytesSmall(typ, ne, nb); ok {
		return n, nil
	}
	return layoutBytesChecked(typ, ne, nb)
}

// layoutBytesChecked is layoutBytes with every product and sum checked for overflow.
func layoutBytesChecked(typ Type, ne, nb [MaxDims]int64) (int64, error) {
	for i := 0; i < MaxDims; i++ {
		if ne[i] < 0 {
			return 0, fmt.Errorf("negative size %d in dimension %d", ne[i], i)
		}
		if nb[i] < 0 {
			return 0, fmt.Errorf("negative stride %d in dimension %d", nb[i], i)
		}
	}
	if _, ok := checkedProduct(ne[:]...); !ok {
		return 0, overflowErr("element count of shape %v overflows int64", ne)
	}
	for i := 0; i < MaxDims; i++ {
		if ne[i] == 0 {
			return 0, nil
		}
	}
	bs := typ.BlockSize()
	var n int64
	var ok bool
	if bs == 1 {
		n = typ.Size()
		for i := 0; i < MaxDims; i++ {
			var d int64
			if d, ok = CheckedMul(ne[i]-1, nb[i]); ok {
				n, ok = CheckedAdd(n, d)
			}
			if !ok {
				return 0, overflowErr("byte size of shape %v with strides %v overflows int64", ne, nb)
			}
		}
	} else {
		if n, ok = CheckedMul(ne[0]/bs, nb[0]); !ok {
			return 0, overflowErr("byte size of shape %v with strides %v overflows int64", ne, nb)
		}
		for i := 1; i < MaxDims; i++ {
			var d int64
			if d, ok = CheckedMul(ne[i]-1, nb[i]); ok {
				n, ok = CheckedAdd(n, d)
			}
			if !ok {
				return 0, overflowErr("byte size of shape %v with strides %v overflows int64", ne, nb)
			}
		}
	}
	if n > MaxTensorBytes {
		return 0, overflowErr("shape %v with strides %v spans %d bytes, more than the address space holds", ne, nb, n)
	}
	return n, nil
}

// layoutBytesSmall is layoutBytes for the shapes that cannot overflow, every tensor's in practice:
// no negative count or stride, a product of counts under 2^62 and every count-stride product under
// 2^59 (bit lengths say so without multiplying), so plain arithmetic gives the exact result. It
// reports false for every other shape, which the checked path then sizes or rejects. (Data calls
// layoutBytes for every tensor a kernel touches, so this is on every node's path.)
func layoutBytesSmall(typ Type, ne, nb [MaxDims]int64) (int64, bool) {
	if (ne[0] | ne[1] | ne[2] | ne[3] | nb[0] | nb[1] | nb[2] | nb[3]) < 0 {
		return 0, false
	}
	l := [MaxDims]int{bits.Len64(uint64(ne[0])), bits.Len64(uint64(ne[1])), bits.Len64(uint64(ne[2])), bits.Len64(uint64(ne[3]))}
	if l[0]+l[1]+l[2]+l[3] > 62 {
		return 0, false // the checked path rejects an overflowing count even with a zero in it
	}
	if ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0 {
		return 0, true
	}
	for i := 0; i < MaxDims; i++ {
		if l[i]+bits.Len64(uint64(nb[i])) > 59 {
			return 0, false
		}
	}
	bs := typ.BlockSize()
	if bs <= 0 {
		return 0, false
	}
	// Four terms under 2^59 and a type size under 2^59: the sum stays under 2^62.
	var n int64
	if bs == 1 {
		n = typ.Size() + (ne[0]-1)*nb[0]
	} else {
		n = ne[0] / bs * nb[0]
	}
	n += (ne[1]-1)*nb[1] + (ne[2]-1)*nb[2] + (ne[3]-1)*nb[3]
	if n > MaxTensorBytes || typ.Size() >= 1<<59 {
		return 0, false
	}
	return n, true
}

// checkedStrides returns the contiguous strides of shape ne in type typ, or an overflow error.
func checkedStrides(typ Type, ne [MaxDims]int64) ([MaxDims]int64, error) {
	var nb [MaxDims]int64
	nb[0] = typ.Size()
	var ok bool
	if nb[1], ok = CheckedMul(nb[0], ne[0]/typ.BlockSize()); !ok {
		return nb, overflowErr("row of %d %v elements overflows int64 bytes", ne[0], typ)
	}
	for i := 2; i < MaxDims; i++ {
		if nb[i], ok = CheckedMul(nb[i-1], ne[i-1]); !ok {
			return nb, overflowErr("strides of shape %v in %v overflow int64", ne, typ)
		}
	}
	return nb, nil
}

// CheckedBytes is NBytes with checks: it returns an error for a nil tensor, negative sizes or
// strides, or a span that overflows int64 or exceeds MaxTensorBytes (fields changed by hand after
// construction included).
func (t *Tensor) CheckedBytes() (int64, error) {
	if t == nil {
		return 0, fmt.Errorf("tandem: %w", errNilTensor)
	}
	n, err := layoutBytes(t.Type, t.Ne, t.Nb)
	if err != nil {
		return 0, fmt.Errorf("tandem: %w", err)
	}
	return n, nil
}
