//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// nastyKeys are keys a naive encoding would let escape or alias.
var nastyKeys = []struct {
	name string
	key  string
}{
	{"slash", "/"},
	{"double slash", "//"},
	{"dot", "."},
	{"dot dot", ".."},
	{"parent traversal", "../../x"},
	{"traversal in the middle", "a/../../b"},
	{"absolute path", "/etc/passwd"},
	{"NUL", "\x00"},
	{"NUL inside", "a\x00b"},
	{"non-UTF-8", "\xff\xfe\xfd"},
	{"newline", "a\nb"},
	{"backslash", `..\..\x`},
	{"temp-file lookalike", ".tmp-0123456789abcdef01234567"},
	{"looks like an encoded name", "kmfrgg"},
	{"lower case", "token"},
	{"upper case", "TOKEN"},
	{"mixed case", "Token"},
	{"base32 case twins a", "a"},
	{"base32 case twins A", "A"},
	{"150 bytes (longest base32 name)", strings.Repeat("x", maxShortKey)},
	{"151 bytes (shortest hashed name)", strings.Repeat("x", maxShortKey+1)},
	{"150 bytes of 0xff", strings.Repeat("\xff", maxShortKey)},
	{"1024 bytes", strings.Repeat("/..", ports.MaxKeyLen/3) + "z"},
	{"1024 bytes differing in the last byte", strings.Repeat("/..", ports.MaxKeyLen/3) + "Z"},
}

func TestNastyKeysRoundTripInsideTheDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()

	seen := map[string]bool{}
	for _, k := range nastyKeys {
		require.LessOrEqual(t, len(k.key), ports.MaxKeyLen, k.name)
		require.False(t, seen[k.key], "duplicate key in table: %s", k.name)
		seen[k.key] = true
		require.NoError(t, s.Set(ctx, k.key, []byte("value of "+k.name)), k.name)
		unlock, err := s.Lock(ctx, k.key)
		require.NoError(t, err, k.name)
		require.NoError(t, unlock())
	}
	for _, k := range nastyKeys {
		got, err := s.Get(ctx, k.key)
		require.NoError(t, err, k.name)
		assert.Equal(t, "value of "+k.name, string(got), k.name)
	}

	// Exactly one token file and one lock file per key, every name short
	// and plain, and nothing anywhere but the store's own entries.
	for _, sub := range []string{"tokens", "locks"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		require.NoError(t, err)
		assert.Len(t, entries, len(nastyKeys), sub)
		lower := map[string]bool{}
		for _, e := range entries {
			assert.True(t, e.Type().IsRegular(), e.Name())
			assert.LessOrEqual(t, len(e.Name()), 255, e.Name())
			assert.Regexp(t, `^(k[a-z2-7]+|h[0-9a-f]{64})$`, e.Name())
			assert.False(t, lower[strings.ToLower(e.Name())], "names alias on a case-insensitive filesystem")
			lower[strings.ToLower(e.Name())] = true
		}
	}
	var paths []string
	require.NoError(t, filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(parent, p)
		require.NoError(t, err)
		paths = append(paths, rel)
		return nil
	}))
	for _, p := range paths {
		assert.True(t, p == "." || p == "store" || strings.HasPrefix(p, "store/tokens") || strings.HasPrefix(p, "store/locks"),
			"unexpected path %q", p)
	}

	// Deleting each key removes exactly its own file.
	for i, k := range nastyKeys {
		require.NoError(t, s.Delete(ctx, k.key), k.name)
		_, err := s.Get(ctx, k.key)
		require.ErrorIs(t, err, ports.ErrNotFound, k.name)
		for _, other := range nastyKeys[i+1:] {
			got, err := s.Get(ctx, other.key)
			require.NoError(t, err, "deleting %s removed %s", k.name, other.name)
			require.Equal(t, "value of "+other.name, string(got))
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "tokens"))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestKeyNameIsInjectiveAndShort(t *testing.T) {
	names := map[string]string{}
	add := func(key string) {
		n := keyName(key)
		require.LessOrEqual(t, len(n), 255)
		if prev, ok := names[strings.ToLower(n)]; ok {
			require.Equal(t, prev, key, "two keys share the name %s", n)
		}
		names[strings.ToLower(n)] = key
	}
	for _, k := range nastyKeys {
		add(k.key)
	}
	// Every one- and two-byte key.
	for a := range 256 {
		add(string([]byte{byte(a)}))
		for b := range 256 {
			add(string([]byte{byte(a), byte(b)}))
		}
	}
	// Every length, so the short/long boundary is covered from both sides.
	for n := 1; n <= ports.MaxKeyLen; n++ {
		add(strings.Repeat("\x00", n))
	}
	assert.Equal(t, "k"+strings.Repeat("a", 240), keyName(strings.Repeat("\x00", maxShortKey)))
}

func TestInvalidKeysAndValueSizes(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		key  string
	}{
		{"empty", ""},
		{"one byte too long", strings.Repeat("k", ports.MaxKeyLen+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Get(ctx, tc.key)
			assert.ErrorIs(t, err, ports.ErrInvalidKey)
			assert.ErrorIs(t, s.Set(ctx, tc.key, []byte("v")), ports.ErrInvalidKey)
			assert.ErrorIs(t, s.Delete(ctx, tc.key), ports.ErrInvalidKey)
			_, err = s.Lock(ctx, tc.key)
			assert.ErrorIs(t, err, ports.ErrInvalidKey)
		})
	}
	for _, tc := range []struct {
		name  string
		value []byte
		err   error
	}{
		{"nil", nil, nil},
		{"empty", []byte{}, nil},
		{"binary", []byte{0, 0xff, '\n', 0}, nil},
		{"MaxValueLen", bytes.Repeat([]byte{0xa5}, ports.MaxValueLen), nil},
		{"MaxValueLen+1", bytes.Repeat([]byte{0xa5}, ports.MaxValueLen+1), ports.ErrValueTooLarge},
	} {
		t.Run("value "+tc.name, func(t *testing.T) {
			require.NoError(t, s.Set(ctx, "sizes", []byte("before")))
			err := s.Set(ctx, "sizes", tc.value)
			got, gerr := s.Get(ctx, "sizes")
			require.NoError(t, gerr)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, []byte("before"), got, "a refused Set changes nothing")
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, got)
			assert.True(t, bytes.Equal(tc.value, got))
		})
	}
}

func TestGetSetDeleteSemantics(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()

	_, err := s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound)
	require.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrNotFound)

	in := []byte("secret-1")
	require.NoError(t, s.Set(ctx, "k", in))
	in[0] = 'X' // Set kept a copy
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("secret-1"), got)
	got[0] = 'Y' // Get returned a copy
	again, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("secret-1"), again)

	require.NoError(t, s.Set(ctx, "k", []byte("secret-2")))
	got, err = s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("secret-2"), got)

	// Another handle on the same directory sees it.
	s2, err := Open(dir)
	require.NoError(t, err)
	defer s2.Close()
	got, err = s2.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("secret-2"), got)

	require.NoError(t, s2.Delete(ctx, "k"))
	_, err = s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound)
	require.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrNotFound)
}

func TestCorruptTokenFilesAreReportedAndKept(t *testing.T) {
	const key = "victim"
	valid := encodeToken(key, []byte("the-value"))
	flip := func(i int) []byte {
		b := bytes.Clone(valid)
		b[i] ^= 0x01
		return b
	}
	for _, tc := range []struct {
		name    string
		content []byte // nil: a directory is put there
	}{
		{"empty file", []byte{}},
		{"garbage", []byte("not a token file at all, but long enough to pass the size check.....")},
		{"truncated by one byte", valid[:len(valid)-1]},
		{"truncated to half", valid[:len(valid)/2]},
		{"one extra byte", append(bytes.Clone(valid), 0)},
		{"bit flip in magic", flip(0)},
		{"bit flip in key", flip(len(tokenMagic) + 4)},
		{"bit flip in value", flip(len(valid) - 33)},
		{"bit flip in checksum", flip(len(valid) - 1)},
		{"value length lies (checksum fixed up)", resum(func() []byte {
			b := bytes.Clone(valid[:len(valid)-32])
			b[len(tokenMagic)+4+len(key)+3]++
			return b
		}())},
		{"another key's file", encodeToken("intruder", []byte("their-value"))},
		{"too large", bytes.Repeat([]byte{'x'}, maxTokenFile+1)},
		{"a directory", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			ctx := t.Context()
			p := filepath.Join(dir, "tokens", keyName(key))
			if tc.content == nil {
				require.NoError(t, os.Mkdir(p, 0o700))
			} else {
				require.NoError(t, os.WriteFile(p, tc.content, 0o600))
			}

			_, err := s.Get(ctx, key)
			require.ErrorIs(t, err, ports.ErrCorrupt)
			assert.NotContains(t, err.Error(), key)
			err = s.Set(ctx, key, []byte("new"))
			require.ErrorIs(t, err, ports.ErrCorrupt, "Set must not replace a corrupt file")
			_, err = s.Get(ctx, key)
			require.ErrorIs(t, err, ports.ErrCorrupt)

			if tc.content != nil {
				after, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, tc.content, after, "corrupt file must stay byte-identical")
			} else {
				assert.DirExists(t, p)
			}
			assertNoTemps(t, dir)

			// An explicit Delete discards it; the key is usable again.
			require.NoError(t, s.Delete(ctx, key))
			_, err = s.Get(ctx, key)
			require.ErrorIs(t, err, ports.ErrNotFound)
			require.NoError(t, s.Set(ctx, key, []byte("fresh")))
			got, err := s.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, []byte("fresh"), got)
		})
	}
}

func TestTokenFileOutsideTheDirectoryIsNotFollowed(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	outside := filepath.Join(t.TempDir(), "outside")
	require.NoError(t, os.WriteFile(outside, encodeToken("k", []byte("planted")), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "tokens", keyName("k"))))

	_, err := s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrCorrupt)
	require.ErrorIs(t, s.Set(ctx, "k", []byte("v")), ports.ErrCorrupt)
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, encodeToken("k", []byte("planted")), b)
}

func TestAtomicWritesLeaveNoTempsAndIgnoreStrayOnes(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	stray := []byte("half-written leftovers of a crashed writer")
	strays := []string{
		filepath.Join(dir, "tokens", ".tmp-0123456789abcdef01234567"),
		filepath.Join(dir, ".tmp-0123456789abcdef01234567"),
	}
	for _, p := range strays {
		require.NoError(t, os.WriteFile(p, stray, 0o600))
	}

	for i := range 50 {
		require.NoError(t, s.Set(ctx, fmt.Sprintf("k%d", i%5), []byte(fmt.Sprint(i))))
	}
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ports.Identity{ServerID: "a"}}))
	require.NoError(t, s.Revoke(ctx, ports.Identity{ServerID: "a"}))
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ports.Identity{ServerID: "b"}}))

	for i := range 5 {
		got, err := s.Get(ctx, fmt.Sprintf("k%d", i))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(45+i), string(got))
	}
	list, err := s.List(ctx, "b")
	require.NoError(t, err)
	assert.Len(t, list, 1)

	// The strays are untouched, and they are the only temporary files.
	for _, p := range strays {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, stray, b)
		require.NoError(t, os.Remove(p))
	}
	assertNoTemps(t, dir)
	entries, err := os.ReadDir(filepath.Join(dir, "tokens"))
	require.NoError(t, err)
	assert.Len(t, entries, 5)
}

func TestReadersNeverSeeAMixedValue(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	a := bytes.Repeat([]byte{'a'}, ports.MaxValueLen)
	b := bytes.Repeat([]byte{'b'}, ports.MaxValueLen)
	require.NoError(t, s.Set(ctx, "k", a))
	other, err := Open(dir)
	require.NoError(t, err)
	defer other.Close()

	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := range 100 {
			v := a
			if i%2 == 1 {
				v = b
			}
			if !assert.NoError(t, s.Set(ctx, "k", v)) {
				return
			}
		}
	})
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				got, err := other.Get(ctx, "k")
				if !assert.NoError(t, err) {
					return
				}
				if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
					assert.Fail(t, "mixed or torn value read")
					return
				}
			}
		})
	}
	wg.Wait()
	assertNoTemps(t, dir)
}

// resum appends a valid checksum to a token body.
func resum(body []byte) []byte {
	sum := sha256.Sum256(body)
	return append(body, sum[:]...)
}

// assertNoTemps fails when a temporary file is left anywhere in dir.
func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		assert.False(t, strings.HasPrefix(d.Name(), tempPrefix), "temporary file left: %s", p)
		return nil
	}))
}
