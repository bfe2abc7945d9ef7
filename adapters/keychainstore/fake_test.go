package keychainstore

import (
	"encoding/json"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/keyring"
)

// fakeKeyring is an in-memory keyring.Keyring with the Secret Service
// backend's quirks (Remove of a missing item succeeds) and failure knobs. It
// records whether two calls ever overlapped, since the real backends are not
// safe for concurrent use.
type fakeKeyring struct {
	mu    sync.Mutex
	items map[string]keyring.Item

	// Knobs, set before use.
	getErr, setErr, removeErr, keysErr error
	panicIn                            string        // "get", "set", "remove" or "keys"
	block                              chan struct{} // when non-nil, calls wait for it to close
	corruptKey                         bool          // Get returns an item naming another key

	calls   atomic.Int32
	active  atomic.Int32
	overlap atomic.Bool
}

func newFakeKeyring() *fakeKeyring {
	return &fakeKeyring{items: map[string]keyring.Item{}}
}

func (f *fakeKeyring) enter(method string) func() {
	f.calls.Add(1)
	if f.active.Add(1) > 1 {
		f.overlap.Store(true)
	}
	time.Sleep(50 * time.Microsecond) // widen the window for overlap detection
	if f.block != nil {
		<-f.block
	}
	if f.panicIn == method {
		f.active.Add(-1)
		panic("fake keyring: " + method)
	}
	return func() { f.active.Add(-1) }
}

func (f *fakeKeyring) Get(key string) (keyring.Item, error) {
	defer f.enter("get")()
	if f.getErr != nil {
		return keyring.Item{}, f.getErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[key]
	if !ok {
		return keyring.Item{}, keyring.ErrKeyNotFound
	}
	// Round-trip through JSON as the Secret Service backend does.
	b, err := json.Marshal(it)
	if err != nil {
		return keyring.Item{}, err
	}
	var out keyring.Item
	if err := json.Unmarshal(b, &out); err != nil {
		return keyring.Item{}, err
	}
	if f.corruptKey {
		out.Key += "x"
	}
	return out, nil
}

func (f *fakeKeyring) GetMetadata(string) (keyring.Metadata, error) {
	return keyring.Metadata{}, keyring.ErrMetadataNeedsCredentials
}

func (f *fakeKeyring) Set(it keyring.Item) error {
	defer f.enter("set")()
	if f.setErr != nil {
		return f.setErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items[it.Key] = it // keyring.Item.Data is kept as given: Store must copy
	return nil
}

func (f *fakeKeyring) Remove(key string) error {
	defer f.enter("remove")()
	if f.removeErr != nil {
		return f.removeErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.items, key) // missing: nil, like the Secret Service backend
	return nil
}

func (f *fakeKeyring) Keys() ([]string, error) {
	defer f.enter("keys")()
	if f.keysErr != nil {
		return nil, f.keysErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.items {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func (f *fakeKeyring) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.items {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fakeOpener counts opens and returns kr, or err while err is non-nil.
type fakeOpener struct {
	mu    sync.Mutex
	kr    keyring.Keyring
	err   error
	panic bool
	cfgs  []keyring.Config
}

func (o *fakeOpener) open(cfg keyring.Config) (keyring.Keyring, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cfgs = append(o.cfgs, cfg)
	if o.panic {
		panic("fake open")
	}
	if o.err != nil {
		return nil, o.err
	}
	return o.kr, nil
}

func (o *fakeOpener) opens() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.cfgs)
}

func (o *fakeOpener) set(kr keyring.Keyring, err error, panics bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kr, o.err, o.panic = kr, err, panics
}

// newFakeStore returns a Store over a fresh fakeKeyring.
func newFakeStore(t *testing.T, opts *Options) (*Store, *fakeKeyring, *fakeOpener) {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	kr := newFakeKeyring()
	op := &fakeOpener{kr: kr}
	s.open = op.open
	if len(s.cfg.AllowedBackends) == 0 {
		t.Skip("no OS keychain backend on this platform")
	}
	return s, kr, op
}
