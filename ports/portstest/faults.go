package portstest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Faults injects failures into a fake's methods and counts their calls.
// Method names are the port's method names ("Get", "Lock", "Connect", ...);
// only methods that return an error can fail or are counted. A fake made by
// its constructor panics when given a method name it does not have, so a
// typo cannot make a check vacuous.
//
// An injected failure takes effect before the fake does anything else: the
// call has no effect and is not recorded, except in Calls.
//
// The zero value injects nothing. Safe for concurrent use.
type Faults struct {
	mu      sync.Mutex
	methods []string // fallible methods of the fake; nil accepts any name
	always  map[string]error
	once    map[string][]error
	calls   map[string]int
}

// Fail makes every later call of method return err, until Clear or until
// Fail is called again for method; a nil err stops failing method.
// Failures queued by FailOnce are returned first.
func (f *Faults) Fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.check(method)
	if err == nil {
		delete(f.always, method)
		return
	}
	if f.always == nil {
		f.always = make(map[string]error)
	}
	f.always[method] = err
}

// FailOnce queues err for one call of method: successive FailOnce calls
// fail successive calls of method, in order. A nil err queues a call that
// the queue lets through (it can still fail by Fail).
func (f *Faults) FailOnce(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.check(method)
	if f.once == nil {
		f.once = make(map[string][]error)
	}
	f.once[method] = append(f.once[method], err)
}

// Clear removes every failure set by Fail and FailOnce. It does not reset
// the call counts.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.always = nil
	f.once = nil
}

// Calls reports how many times method has been called, failed calls
// included.
func (f *Faults) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.check(method)
	return f.calls[method]
}

// setMethods declares the fake's fallible methods; constructors call it.
func (f *Faults) setMethods(methods ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = methods
}

// hit counts one call of method and returns the failure injected for it,
// or nil.
func (f *Faults) hit(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.check(method)
	if f.calls == nil {
		f.calls = make(map[string]int)
	}
	f.calls[method]++
	if q := f.once[method]; len(q) > 0 {
		f.once[method] = q[1:]
		if q[0] != nil {
			return q[0]
		}
	}
	return f.always[method]
}

// check panics if the fake declared its methods and method is not one of
// them. f.mu is held.
func (f *Faults) check(method string) {
	if f.methods != nil && !slices.Contains(f.methods, method) {
		panic(fmt.Sprintf("portstest: no fallible method %q (have %s)", method, strings.Join(f.methods, ", ")))
	}
}
