package gguf

import "fmt"

// ValueType is a GGUF metadata value type (gguf_type, with ggml's numeric ids).
type ValueType uint32

// Metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// String returns ggml's short name of the type ("u32", "str", "arr", ...).
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// size is the encoded size of one scalar of type t (0 for strings, arrays and unknown types).
func (t ValueType) size() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// KV is one metadata entry. Value holds one of the Go types that GGUF values map to: uint8, int8,
// uint16, int16, uint32, int32, float32, bool, string, uint64, int64, float64, or a slice of one of
// them (an array; GGUF has no arrays of arrays).
type KV struct {
	Key   string
	Value any
}

// Type returns the value's GGUF type and, for arrays, the element type. ok is false when Value is
// not one of the types GGUF can store.
func (kv KV) Type() (typ, elem ValueType, ok bool) { return valueTypeOf(kv.Value) }

func (kv KV) String() string { return fmt.Sprintf("%s=%v", kv.Key, kv.Value) }

// valueTypeOf maps a Go value to its GGUF type (and element type for arrays).
func valueTypeOf(v any) (typ, elem ValueType, ok bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, true
	case int8:
		return TypeInt8, 0, true
	case uint16:
		return TypeUint16, 0, true
	case int16:
		return TypeInt16, 0, true
	case uint32:
		return TypeUint32, 0, true
	case int32:
		return TypeInt32, 0, true
	case float32:
		return TypeFloat32, 0, true
	case bool:
		return TypeBool, 0, true
	case string:
		return TypeString, 0, true
	case uint64:
		return TypeUint64, 0, true
	case int64:
		return TypeInt64, 0, true
	case float64:
		return TypeFloat64, 0, true
	case []uint8:
		return TypeArray, TypeUint8, true
	case []int8:
		return TypeArray, TypeInt8, true
	case []uint16:
		return TypeArray, TypeUint16, true
	case []int16:
		return TypeArray, TypeInt16, true
	case []uint32:
		return TypeArray, TypeUint32, true
	case []int32:
		return TypeArray, TypeInt32, true
	case []float32:
		return TypeArray, TypeFloat32, true
	case []bool:
		return TypeArray, TypeBool, true
	case []string:
		return TypeArray, TypeString, true
	case []uint64:
		return TypeArray, TypeUint64, true
	case []int64:
		return TypeArray, TypeInt64, true
	case []float64:
		return TypeArray, TypeFloat64, true
	}
	return 0, 0, false
}

// typeName describes a value's GGUF type for error messages ("u32", "arr[str]").
func typeName(v any) string {
	typ, elem, ok := valueTypeOf(v)
	switch {
	case !ok:
		return fmt.Sprintf("Go type %T", v)
	case typ == TypeArray:
		return "arr[" + elem.String() + "]"
	}
	return typ.String()
}

// Value types for Get.
type Value interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | uint64 | int64 | float64 |
		[]uint8 | []int8 | []uint16 | []int16 | []uint32 | []int32 | []float32 | []bool | []string |
		[]uint64 | []int64 | []float64
}

// Get returns the value of key as T. A missing key, or a value of another GGUF type (no
// conversions: a u32 is not an i32), is an error naming the key and both types. Array values are
// the file's slices; callers must not modify them. A nil m is an error.
func Get[T Value](m *Metadata, key string) (T, error) {
	var zero T
	if m == nil {
		return zero, fmt.Errorf("gguf: metadata key %q: nil metadata", key)
	}
	v, ok := m.Lookup(key)
	if !ok {
		return zero, fmt.Errorf("gguf: metadata key %q not found", key)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("gguf: metadata key %q is %s, not %s", key, typeName(v), typeName(zero))
	}
	return t, nil
}

// Metadata is the ordered key/value section of a file. The zero value is empty and ready to use.
type Metadata struct {
	kvs   []KV
	index map[string]int
}

// Len is the number of keys.
func (m *Metadata) Len() int { return len(m.kvs) }

// Keys lists the keys in file order.
func (m *Metadata) Keys() []string {
	keys := make([]string, len(m.kvs))
	for i, kv := range m.kvs {
		keys[i] = kv.Key
	}
	return keys
}

// KVs returns the entries in file order (the slice is shared; do not modify it).
func (m *Metadata) KVs() []KV { return m.kvs }

// Lookup returns the value of key and whether it exists.
func (m *Metadata) Lookup(key string) (any, bool) {
	i, ok := m.index[key]
	if !ok {
		return nil, false
	}
	return m.kvs[i].Value, true
}

// Has reports whether key exists.
func (m *Metadata) Has(key string) bool { _, ok := m.index[key]; return ok }

// Set adds key with value v at the end, or replaces the value of an existing key in place. v must
// be one of the types KV lists; keys must not be empty.
func (m *Metadata) Set(key string, v any) error {
	if key == "" {
		return fmt.Errorf("gguf: empty metadata key")
	}
	if _, _, ok := valueTypeOf(v); !ok {
		return fmt.Errorf("gguf: metadata key %q: %T is not a GGUF value type", key, v)
	}
	if key == KeyAlignment {
		a, ok := v.(uint32)
		if !ok {
			return fmt.Errorf("gguf: %s must be u32, not %s", KeyAlignment, typeName(v))
		}
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: %s %d is not a power of two", KeyAlignment, a)
		}
	}
	if i, ok := m.index[key]; ok {
		m.kvs[i].Value = v
		return nil
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	m.index[key] = len(m.kvs)
	m.kvs = append(m.kvs, KV{key, v})
	return nil
}

// Delete removes key (nothing happens when it is absent); the other keys keep their order.
func (m *Metadata) Delete(key string) {
	i, ok := m.index[key]
	if !ok {
		return
	}
	m.kvs = append(m.kvs[:i], m.kvs[i+1:]...)
	delete(m.index, key)
	for j := i; j < len(m.kvs); j++ {
		m.index[m.kvs[j].Key] = j
	}
}

// Alignment is general.alignment when set, else DefaultAlignment.
func (m *Metadata) Alignment() int64 {
	if a, err := Get[uint32](m, KeyAlignment); err == nil {
		return int64(a)
	}
	return DefaultAlignment
}

// GetUint8 returns a u8 value (see Get for the errors).
func (m *Metadata) GetUint8(key string) (uint8, error) { return Get[uint8](m, key) }

// GetInt8 returns an i8 value.
func (m *Metadata) GetInt8(key string) (int8, error) { return Get[int8](m, key) }

// GetUint16 returns a u16 value.
func (m *Metadata) GetUint16(key string) (uint16, error) { return Get[uint16](m, key) }

// GetInt16 returns an i16 value.
func (m *Metadata) GetInt16(key string) (int16, error) { return Get[int16](m, key) }

// GetUint32 returns a u32 value.
func (m *Metadata) GetUint32(key string) (uint32, error) { return Get[uint32](m, key) }

// GetInt32 returns an i32 value.
func (m *Metadata) GetInt32(key string) (int32, error) { return Get[int32](m, key) }

// GetUint64 returns a u64 value.
func (m *Metadata) GetUint64(key string) (uint64, error) { return Get[uint64](m, key) }

// GetInt64 returns an i64 value.
func (m *Metadata) GetInt64(key string) (int64, error) { return Get[int64](m, key) }

// GetFloat32 returns an f32 value.
func (m *Metadata) GetFloat32(key string) (float32, error) { return Get[float32](m, key) }

// GetFloat64 returns an f64 value.
func (m *Metadata) GetFloat64(key string) (float64, error) { return Get[float64](m, key) }

// GetBool returns a bool value.
func (m *Metadata) GetBool(key string) (bool, error) { return Get[bool](m, key) }

// GetString returns a string value.
func (m *Metadata) GetString(key string) (string, error) { return Get[string](m, key) }

// GetStrings returns an array of strings (e.g. tokenizer.ggml.tokens).
func (m *Metadata) GetStrings(key string) ([]string, error) { return Get[[]string](m, key) }

// GetInt32s returns an array of i32 (e.g. tokenizer.ggml.token_type).
func (m *Metadata) GetInt32s(key string) ([]int32, error) { return Get[[]int32](m, key) }

// GetUint32s returns an array of u32.
func (m *Metadata) GetUint32s(key string) ([]uint32, error) { return Get[[]uint32](m, key) }

// GetFloat32s returns an array of f32 (e.g. tokenizer.ggml.scores).
func (m *Metadata) GetFloat32s(key string) ([]float32, error) { return Get[[]float32](m, key) }

// GetArrayLen returns the element type and length of an array value.
func (m *Metadata) GetArrayLen(key string) (ValueType, int, error) {
	v, ok := m.Lookup(key)
	if !ok {
		return 0, 0, fmt.Errorf("gguf: metadata key %q not found", key)
	}
	typ, elem, _ := valueTypeOf(v)
	if typ != TypeArray {
		return 0, 0, fmt.Errorf("gguf: metadata key %q is %s, not an array", key, typeName(v))
	}
	return elem, arrayLen(v), nil
}

// GetUint returns any unsigned or non-negative signed integer value as a uint64 (for keys whose
// integer width differs between writers, such as context lengths).
func (m *Metadata) GetUint(key string) (uint64, error) {
	v, ok := m.Lookup(key)
	if !ok {
		return 0, fmt.Errorf("gguf: metadata key %q not found", key)
	}
	var s int64
	switch x := v.(type) {
	case uint8:
		return uint64(x), nil
	case uint16:
		return uint64(x), nil
	case uint32:
		return uint64(x), nil
	case uint64:
		return x, nil
	case int8:
		s = int64(x)
	case int16:
		s = int64(x)
	case int32:
		s = int64(x)
	case int64:
		s = x
	default:
		return 0, fmt.Errorf("gguf: metadata key %q is %s, not an integer", key, typeName(v))
	}
	if s < 0 {
		return 0, fmt.Errorf("gguf: metadata key %q is negative (%d)", key, s)
	}
	return uint64(s), nil
}

func arrayLen(v any) int {
	switch x := v.(type) {
	case []uint8:
		return len(x)
	case []int8:
		return len(x)
	case []uint16:
		return len(x)
	case []int16:
		return len(x)
	case []uint32:
		return len(x)
	case []int32:
		return len(x)
	case []float32:
		return len(x)
	case []bool:
		return len(x)
	case []string:
		return len(x)
	case []uint64:
		return len(x)
	case []int64:
		return len(x)
	case []float64:
		return len(x)
	}
	return 0
}
