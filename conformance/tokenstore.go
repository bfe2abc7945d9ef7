package conformance

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// RunTokenStore runs the ports.TokenStore conformance suite: one subtest per
// behaviour of the port's doc comment. mk is called once per subtest and must
// return a Harness on a fresh, empty backing store; every handle its Open
// returns must share that store. With a Location and Attach, the suite also
// checks that a value written in another process is visible (see the
// package doc for how child processes are started).
//
// A host calls it from a test of its own:
//
//	func TestTokenStore(t *testing.T) {
//		conformance.RunTokenStore(t, func(t *testing.T) conformance.Harness[ports.TokenStore] {
//			s := mystore.New(t.TempDir())
//			return conformance.Harness[ports.TokenStore]{Open: func(*testing.T) ports.TokenStore { return s }}
//		})
//	}
func RunTokenStore(t *testing.T, mk func(t *testing.T) Harness[ports.TokenStore]) {
	s := newSuite(t, "tokenstore", mk)
	if runChild(t, s, tokenRoles) {
		return
	}
	ts := tokenSuite{s}
	t.Run("GetMissingIsErrNotFound", ts.getMissing)
	t.Run("SetThenGet", ts.setThenGet)
	t.Run("Overwrite", ts.overwrite)
	t.Run("Delete", ts.delete)
	t.Run("DeleteMissingIsErrNotFound", ts.deleteMissing)
	t.Run("GetReturnsCopy", ts.getReturnsCopy)
	t.Run("SetKeepsCopy", ts.setKeepsCopy)
	t.Run("EmptyValue", ts.emptyValue)
	t.Run("BinaryValue", ts.binaryValue)
	t.Run("MaxValueLen", ts.maxValueLen)
	t.Run("OversizeValue", ts.oversizeValue)
	t.Run("InvalidKeys", ts.invalidKeys)
	t.Run("MaxKeyLen", ts.maxKeyLen)
	t.Run("KeysAreDistinct", ts.keysAreDistinct)
	t.Run("CrossHandle", ts.crossHandle)
	t.Run("ConcurrentDistinctKeys", ts.concurrentDistinctKeys)
	t.Run("ConcurrentSameKey", ts.concurrentSameKey)
	t.Run("CrossProcess", ts.crossProcess)
}

type tokenSuite struct{ *suite[ports.TokenStore] }

func (s tokenSuite) open(t *testing.T) ports.TokenStore {
	t.Helper()
	return s.harness(t).Open(t)
}

// mustGet gets key and fails t unless it is there.
func mustGet(t *testing.T, st ports.TokenStore, key string) []byte {
	t.Helper()
	v, err := st.Get(t.Context(), key)
	require.NoError(t, err, "Get(%s)", quoteKey(key))
	return v
}

func (s tokenSuite) getMissing(t *testing.T) {
	st := s.open(t)
	v, err := st.Get(t.Context(), "never-set")
	require.ErrorIs(t, err, ports.ErrNotFound, "Get of a key never set")
	assert.Empty(t, v)
}

func (s tokenSuite) setThenGet(t *testing.T) {
	st := s.open(t)
	require.NoError(t, st.Set(t.Context(), "k", []byte("value-1")))
	assert.Equal(t, []byte("value-1"), mustGet(t, st, "k"))
	assert.Equal(t, []byte("value-1"), mustGet(t, st, "k"), "a second Get returns the same value")
}

func (s tokenSuite) overwrite(t *testing.T) {
	st := s.open(t)
	require.NoError(t, st.Set(t.Context(), "k", []byte("a much longer first value")))
	require.NoError(t, st.Set(t.Context(), "k", []byte("short")))
	assert.Equal(t, []byte("short"), mustGet(t, st, "k"), "Set replaces the whole previous value")
	require.NoError(t, st.Set(t.Context(), "k", []byte("third, and longer than short")))
	assert.Equal(t, []byte("third, and longer than short"), mustGet(t, st, "k"))
}

func (s tokenSuite) delete(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	require.NoError(t, st.Set(ctx, "k", []byte("v")))
	require.NoError(t, st.Set(ctx, "other", []byte("w")))
	require.NoError(t, st.Delete(ctx, "k"))
	_, err := st.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound, "Get after Delete")
	assert.Equal(t, []byte("w"), mustGet(t, st, "other"), "Delete removes only its key")
	require.NoError(t, st.Set(ctx, "k", []byte("again")))
	assert.Equal(t, []byte("again"), mustGet(t, st, "k"), "a deleted key can be set again")
}

func (s tokenSuite) deleteMissing(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	require.ErrorIs(t, st.Delete(ctx, "never-set"), ports.ErrNotFound, "Delete of a key never set")
	require.NoError(t, st.Set(ctx, "k", []byte("v")))
	require.NoError(t, st.Delete(ctx, "k"))
	require.ErrorIs(t, st.Delete(ctx, "k"), ports.ErrNotFound, "Delete of a key already deleted")
}

func (s tokenSuite) getReturnsCopy(t *testing.T) {
	st := s.open(t)
	require.NoError(t, st.Set(t.Context(), "k", []byte("original")))
	v := mustGet(t, st, "k")
	for i := range v {
		v[i] = 'X'
	}
	assert.Equal(t, []byte("original"), mustGet(t, st, "k"),
		"changing the slice Get returned must not change the stored value")
}

func (s tokenSuite) setKeepsCopy(t *testing.T) {
	st := s.open(t)
	v := []byte("original")
	require.NoError(t, st.Set(t.Context(), "k", v))
	for i := range v {
		v[i] = 'X'
	}
	assert.Equal(t, []byte("original"), mustGet(t, st, "k"),
		"changing the slice given to Set after it returned must not change the stored value")
}

// emptyValue: a zero-length value is a value like any other. The port lists
// no error for it, so it round-trips (as a zero-length slice, nil or not)
// and is not the same as a missing key.
func (s tokenSuite) emptyValue(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	for _, v := range [][]byte{{}, nil} {
		require.NoError(t, st.Set(ctx, "k", []byte("not empty")))
		require.NoError(t, st.Set(ctx, "k", v), "Set of a zero-length value (%#v)", v)
		got, err := st.Get(ctx, "k")
		require.NoError(t, err, "Get of a key holding a zero-length value is not ErrNotFound")
		assert.Empty(t, got)
		require.NoError(t, st.Delete(ctx, "k"), "a key holding a zero-length value exists")
	}
}

func (s tokenSuite) binaryValue(t *testing.T) {
	st := s.open(t)
	v := make([]byte, 0, 512)
	for i := range 256 {
		v = append(v, byte(i))
	}
	v = append(v, "\x00\n\r\xff{\"}\x00"...)
	require.NoError(t, st.Set(t.Context(), "k", v))
	assert.Equal(t, v, mustGet(t, st, "k"), "every byte value, NUL included, round-trips")
}

func (s tokenSuite) maxValueLen(t *testing.T) {
	st := s.open(t)
	v := make([]byte, ports.MaxValueLen)
	for i := range v {
		v[i] = byte(i*7 + i/251)
	}
	require.NoError(t, st.Set(t.Context(), "k", v), "every store keeps MaxValueLen bytes")
	got := mustGet(t, st, "k")
	require.Len(t, got, ports.MaxValueLen)
	assert.True(t, bytes.Equal(v, got), "a MaxValueLen value round-trips byte for byte")
}

// oversizeValue: a store may keep more than MaxValueLen, but when it
// refuses a value the error is ErrValueTooLarge and the old value stays.
func (s tokenSuite) oversizeValue(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	require.NoError(t, st.Set(ctx, "k", []byte("old")))
	big := bytes.Repeat([]byte("0123456789abcdef"), 4*ports.MaxValueLen/16)
	err := st.Set(ctx, "k", big)
	if err != nil {
		require.ErrorIs(t, err, ports.ErrValueTooLarge, "a refused oversize value")
		assert.Equal(t, []byte("old"), mustGet(t, st, "k"), "a refused Set leaves the old value")
		return
	}
	assert.True(t, bytes.Equal(big, mustGet(t, st, "k")), "an accepted oversize value round-trips")
}

func (s tokenSuite) invalidKeys(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	for _, k := range []string{"", strings.Repeat("k", ports.MaxKeyLen+1)} {
		_, err := st.Get(ctx, k)
		assert.ErrorIs(t, err, ports.ErrInvalidKey, "Get(%s)", quoteKey(k))
		assert.ErrorIs(t, st.Set(ctx, k, []byte("v")), ports.ErrInvalidKey, "Set(%s)", quoteKey(k))
		assert.ErrorIs(t, st.Delete(ctx, k), ports.ErrInvalidKey, "Delete(%s)", quoteKey(k))
	}
}

func (s tokenSuite) maxKeyLen(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	k := strings.Repeat("\xff/", ports.MaxKeyLen/2)
	require.Len(t, k, ports.MaxKeyLen)
	require.NoError(t, st.Set(ctx, k, []byte("v")), "a MaxKeyLen-byte key is valid")
	assert.Equal(t, []byte("v"), mustGet(t, st, k))
	require.NoError(t, st.Delete(ctx, k))
	_, err := st.Get(ctx, k)
	require.ErrorIs(t, err, ports.ErrNotFound)
}

// keysAreDistinct sets every DistinctKeys key to its own value, then deletes
// every other one: a key that aliases another shows as a wrong value or a
// wrong ErrNotFound.
func (s tokenSuite) keysAreDistinct(t *testing.T) {
	st := s.open(t)
	ctx := t.Context()
	keys := DistinctKeys()
	val := func(i int) []byte { return fmt.Appendf(nil, "value-%d", i) }
	for i, k := range keys {
		require.NoError(t, st.Set(ctx, k, val(i)), "Set(%s)", quoteKey(k))
	}
	for i, k := range keys {
		got, err := st.Get(ctx, k)
		if assert.NoError(t, err, "Get(%s)", quoteKey(k)) {
			assert.Equal(t, string(val(i)), string(got), "key %s aliases another key", quoteKey(k))
		}
	}
	for i, k := range keys {
		if i%2 == 0 {
			require.NoError(t, st.Delete(ctx, k), "Delete(%s)", quoteKey(k))
		}
	}
	for i, k := range keys {
		got, err := st.Get(ctx, k)
		if i%2 == 0 {
			assert.ErrorIs(t, err, ports.ErrNotFound, "deleted key %s still has a value %q", quoteKey(k), got)
		} else if assert.NoError(t, err, "key %s lost its value when another key was deleted", quoteKey(k)) {
			assert.Equal(t, string(val(i)), string(got), "key %s", quoteKey(k))
		}
	}
}

func (s tokenSuite) crossHandle(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	ctx := t.Context()
	require.NoError(t, a.Set(ctx, "k", []byte("from a")))
	assert.Equal(t, []byte("from a"), mustGet(t, b, "k"), "a value set through one handle is visible through another")
	require.NoError(t, b.Set(ctx, "k", []byte("from b")))
	assert.Equal(t, []byte("from b"), mustGet(t, a, "k"), "an overwrite through one handle is visible through another")
	require.NoError(t, b.Delete(ctx, "k"))
	_, err := a.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound, "a delete through one handle is visible through another")
}

func (s tokenSuite) concurrentDistinctKeys(t *testing.T) {
	h := s.harness(t)
	const writers, perWriter = 8, 16
	handles := []ports.TokenStore{h.Open(t), h.Open(t)}
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Go(func() {
			st := handles[w%len(handles)]
			for i := range perWriter {
				k := fmt.Sprintf("w%d/k%d", w, i)
				if err := st.Set(ctx, k, []byte(k)); err != nil {
					errs <- fmt.Errorf("Set(%q): %w", k, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for w := range writers {
		for i := range perWriter {
			k := fmt.Sprintf("w%d/k%d", w, i)
			got, err := handles[0].Get(ctx, k)
			if assert.NoError(t, err, "a concurrent write to %q was lost", k) {
				assert.Equal(t, k, string(got))
			}
		}
	}
}

// concurrentSameKey: writers race on one key while readers read it. Every
// read sees one written value whole (Set is atomic), and afterwards the key
// holds one of them (last writer wins).
func (s tokenSuite) concurrentSameKey(t *testing.T) {
	h := s.harness(t)
	const writers, writes, size = 4, 20, 8 << 10
	handles := []ports.TokenStore{h.Open(t), h.Open(t)}
	ctx := t.Context()
	value := func(w int) []byte { return bytes.Repeat([]byte{byte('A' + w)}, size) }
	whole := func(v []byte) error {
		if len(v) != size {
			return fmt.Errorf("read a value of %d bytes, every write was %d bytes", len(v), size)
		}
		if v[0] < 'A' || v[0] >= byte('A'+writers) {
			return fmt.Errorf("read a value starting %q, never written", v[0])
		}
		if i := bytes.IndexFunc(v, func(r rune) bool { return r != rune(v[0]) }); i >= 0 {
			return fmt.Errorf("read a mix of two writes (byte %d is %q, byte 0 is %q): Set is not atomic", i, v[i], v[0])
		}
		return nil
	}
	require.NoError(t, handles[0].Set(ctx, "k", value(0)))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error
		stop    = make(chan struct{})
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failure == nil {
			failure = err
		}
	}
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			st := handles[r%len(handles)]
			for {
				select {
				case <-stop:
					return
				default:
				}
				v, err := st.Get(ctx, "k")
				if err != nil {
					fail(fmt.Errorf("Get during concurrent Sets: %w", err))
					return
				}
				if err := whole(v); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	for w := range writers {
		wg.Go(func() {
			st := handles[w%len(handles)]
			for range writes {
				if err := st.Set(ctx, "k", value(w)); err != nil {
					fail(fmt.Errorf("Set: %w", err))
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	require.NoError(t, failure)
	for _, st := range handles {
		require.NoError(t, whole(mustGet(t, st, "k")), "after the writers finished")
	}
}

// tokenRoles are the roles of a TokenStore child process.
var tokenRoles = map[string]childRole[ports.TokenStore]{
	// set sets Key to Value and says "set".
	"set": func(t *testing.T, st ports.TokenStore, a childArg) {
		require.NoError(t, st.Set(t.Context(), string(a.Key), a.Value))
		say("set")
	},
	// get says "value <hex>" or "notfound".
	"get": func(t *testing.T, st ports.TokenStore, a childArg) {
		v, err := st.Get(t.Context(), string(a.Key))
		if err != nil {
			require.ErrorIs(t, err, ports.ErrNotFound)
			say("notfound")
			return
		}
		say("value %x", v)
	},
}

func (s tokenSuite) crossProcess(t *testing.T) {
	h := s.harness(t)
	crossProcess(t, h)
	st := h.Open(t)
	ctx := t.Context()
	key := "cross/process\x00\xff"

	c := s.startChild(t, "set", h.Location, childArg{Key: []byte(key), Value: []byte("from the child")})
	c.expect("set", childWait)
	c.finish(childWait)
	got, err := st.Get(ctx, key)
	require.NoError(t, err, "a value set by another process is visible once its Set returned")
	assert.Equal(t, "from the child", string(got))

	require.NoError(t, st.Set(ctx, key, []byte("from the parent")))
	c = s.startChild(t, "get", h.Location, childArg{Key: []byte(key)})
	c.expect(fmt.Sprintf("value %x", "from the parent"), childWait)
	c.finish(childWait)

	require.NoError(t, st.Delete(ctx, key))
	c = s.startChild(t, "get", h.Location, childArg{Key: []byte(key)})
	c.expect("notfound", childWait)
	c.finish(childWait)
}

// childWait bounds how long the parent waits for a child to start and
// answer: a re-executed race-enabled test binary on a loaded machine.
const childWait = 60 * time.Second
