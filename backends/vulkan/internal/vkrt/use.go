//go:build cgo && !novulkan

package vkrt

import "sync"

// useCount tracks the operations in progress on a device (creating buffers or command buffers,
// host reads and writes, recorded work until it has been waited for), so that Close, which
// destroys everything, waits for them instead of freeing memory under them. Acquiring never
// blocks (so operations may nest); it fails once Close has begun.
type useCount struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	closing bool
}

// acquire marks an operation in progress; it returns ErrClosed once Close has begun.
func (d *Device) acquire() error {
	u := &d.use
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closing {
		return ErrClosed
	}
	u.n++
	return nil
}

// release ends an operation acquire began.
func (d *Device) release() {
	u := &d.use
	u.mu.Lock()
	defer u.mu.Unlock()
	u.n--
	if u.n == 0 && u.cond != nil {
		u.cond.Broadcast()
	}
}

// Use marks an operation of the caller in progress on the device (a graph being recorded,
// submitted and waited for): Close waits until the returned function has been called. It returns
// ErrClosed once Close has begun. Uses may nest; the caller must not call Close while it holds one.
func (d *Device) Use() (func(), error) {
	if err := d.acquire(); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(d.release) }, nil
}

// beginClose makes every later acquire fail and waits for the operations in progress.
func (d *Device) beginClose() {
	u := &d.use
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closing = true
	if u.cond == nil {
		u.cond = sync.NewCond(&u.mu)
	}
	for u.n > 0 {
		u.cond.Wait()
	}
}
