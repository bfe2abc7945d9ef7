package keychainstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/keyring"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nastyKeys are keys that break naive encodings: path syntax, NUL, non-UTF-8,
// separators of the item name, case and base64 look-alikes.
var nastyKeys = map[string]string{
	"plain":          "server/token",
	"dotdot":         "..",
	"escape":         "a/../../b",
	"slash":          "/",
	"nul":            "a\x00b",
	"only nul":       "\x00",
	"non-utf8":       "\xff\xfe\xfd",
	"colon":          "a:b",
	"namespace-like": "mcpward:x:Zm9v",
	"base64 of foo":  "Zm9v",
	"foo":            "foo",
	"upper":          "A",
	"lower":          "a",
	"space":          " ",
	"newline":        "a\nb",
	"unicode":        "ключ🔑",
	"percent":        "%2F",
	"underscore hex": "_2f",
	"max 0xff":       strings.Repeat("\xff", ports.MaxKeyLen),
	"max a":          strings.Repeat("a", ports.MaxKeyLen),
	"max minus one":  strings.Repeat("a", ports.MaxKeyLen-1),
}

func allBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name       string
		opts       *Options
		wantErr    bool
		wantPrefix string
		wantColl   string
		wantSvc    string
		wantTO     time.Duration
	}{
		{name: "nil is defaults", opts: nil, wantPrefix: "mcpward::", wantColl: "login", wantSvc: "mcpward", wantTO: DefaultTimeout},
		{name: "zero is defaults", opts: &Options{}, wantPrefix: "mcpward::", wantColl: "login", wantSvc: "mcpward", wantTO: DefaultTimeout},
		{name: "all set", opts: &Options{ServiceName: "host-app.v2", Collection: "session", Namespace: "profile_1", Timeout: time.Second},
			wantPrefix: "host-app.v2:profile_1:", wantColl: "session", wantSvc: "host-app.v2", wantTO: time.Second},
		{name: "service with colon", opts: &Options{ServiceName: "a:b"}, wantErr: true},
		{name: "service with slash", opts: &Options{ServiceName: "a/b"}, wantErr: true},
		{name: "service too long", opts: &Options{ServiceName: strings.Repeat("s", 65)}, wantErr: true},
		{name: "namespace with colon", opts: &Options{Namespace: "x:"}, wantErr: true},
		{name: "namespace with NUL", opts: &Options{Namespace: "x\x00"}, wantErr: true},
		{name: "namespace too long", opts: &Options{Namespace: strings.Repeat("n", 65)}, wantErr: true},
		{name: "namespace max", opts: &Options{Namespace: strings.Repeat("n", 64)}, wantPrefix: "mcpward:" + strings.Repeat("n", 64) + ":", wantColl: "login", wantSvc: "mcpward", wantTO: DefaultTimeout},
		{name: "collection with dot", opts: &Options{Collection: "a.b"}, wantErr: true},
		{name: "collection with slash", opts: &Options{Collection: "../x"}, wantErr: true},
		{name: "negative timeout", opts: &Options{Timeout: -time.Second}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.opts)
			if tt.wantErr {
				require.Error(t, err)
				assert.Nil(t, s)
				assert.Equal(t, refusal.Config, refusal.ClassOf(err))
				assert.Equal(t, "keychain_options_invalid", refusal.ReasonOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantPrefix, s.prefix)
			assert.Equal(t, tt.wantColl, s.cfg.LibSecretCollectionName)
			assert.Equal(t, tt.wantSvc, s.cfg.ServiceName)
			assert.Equal(t, tt.wantTO, s.timeout)
		})
	}
}

func TestBackendsAreOSKeychainsOnly(t *testing.T) {
	s, err := New(nil)
	require.NoError(t, err)
	want := map[string][]keyring.BackendType{
		"linux":   {keyring.SecretServiceBackend},
		"darwin":  {keyring.KeychainBackend},
		"windows": {keyring.WinCredBackend},
	}[runtime.GOOS]
	assert.Equal(t, want, s.cfg.AllowedBackends)
	for _, b := range s.cfg.AllowedBackends {
		assert.NotContains(t, []keyring.BackendType{keyring.FileBackend, keyring.PassBackend, keyring.KeyCtlBackend, keyring.KWalletBackend, keyring.InvalidBackend}, b)
	}
	assert.Empty(t, s.cfg.FileDir, "no file backend directory")
	assert.Empty(t, s.cfg.PassDir, "no pass directory")
	assert.Nil(t, s.cfg.FilePasswordFunc, "no file backend password")
}

func TestNoBackendNeverOpensAllBackends(t *testing.T) {
	// keyring.Open treats a nil backend list as "all backends, file
	// included": with none for the platform the store must not call it.
	s, _, op := newFakeStore(t, nil)
	s.cfg.AllowedBackends = nil
	err := s.Set(context.Background(), "k", []byte("v"))
	require.ErrorIs(t, err, ports.ErrUnavailable)
	assert.Zero(t, op.opens())
}

func TestItemNameRoundTripAndInjective(t *testing.T) {
	s, err := New(&Options{Namespace: "ns"})
	require.NoError(t, err)
	seen := map[string]string{}
	for name, key := range nastyKeys {
		t.Run(name, func(t *testing.T) {
			item := s.itemName(key)
			require.True(t, strings.HasPrefix(item, "mcpward:ns:"))
			enc := strings.TrimPrefix(item, "mcpward:ns:")
			for i := 0; i < len(enc); i++ {
				c := enc[i]
				assert.True(t, isNameByte(c), "byte %q outside [A-Za-z0-9._-]", c)
			}
			dec, err := base64.RawURLEncoding.DecodeString(enc)
			require.NoError(t, err)
			assert.Equal(t, key, string(dec))
			if other, dup := seen[item]; dup {
				t.Fatalf("keys %q and %q share item name", name, other)
			}
			seen[item] = name
		})
	}
	assert.Len(t, seen, len(nastyKeys))
}

func TestNamespacesDoNotAlias(t *testing.T) {
	tests := []struct {
		name       string
		a, b       Options
		keyA, keyB string
	}{
		{name: "same key, namespaces differ", a: Options{Namespace: "x"}, b: Options{Namespace: "y"}, keyA: "k", keyB: "k"},
		{name: "empty vs set namespace", a: Options{}, b: Options{Namespace: "x"}, keyA: "k", keyB: "k"},
		{name: "services differ", a: Options{ServiceName: "a"}, b: Options{ServiceName: "b"}, keyA: "k", keyB: "k"},
		{name: "namespace prefix of another", a: Options{Namespace: "ab"}, b: Options{Namespace: "a"}, keyA: "k", keyB: "bk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sa, err := New(&tt.a)
			require.NoError(t, err)
			sb, err := New(&tt.b)
			require.NoError(t, err)
			na, nb := sa.itemName(tt.keyA), sb.itemName(tt.keyB)
			assert.NotEqual(t, na, nb)
			assert.False(t, strings.HasPrefix(na, sb.prefix), "%q under other prefix %q", na, sb.prefix)
			assert.False(t, strings.HasPrefix(nb, sa.prefix), "%q under other prefix %q", nb, sa.prefix)
		})
	}
}

func FuzzItemName(f *testing.F) {
	for _, k := range nastyKeys {
		f.Add(k, "a/../../b")
	}
	s, err := New(&Options{Namespace: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, k1, k2 string) {
		n1 := s.itemName(k1)
		dec, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(n1, s.prefix))
		if err != nil || string(dec) != k1 {
			t.Fatalf("item name of %q does not decode back", k1)
		}
		if (k1 == k2) != (n1 == s.itemName(k2)) {
			t.Fatalf("keys %q and %q: equality of item names differs from equality of keys", k1, k2)
		}
		if strings.ContainsAny(n1[len(s.prefix):], ":/\x00") {
			t.Fatalf("item name %q holds a separator", n1)
		}
	})
}

func TestRoundTripOnFake(t *testing.T) {
	ctx := context.Background()
	s, kr, _ := newFakeStore(t, &Options{Namespace: "rt"})
	for name, key := range nastyKeys {
		t.Run(name, func(t *testing.T) {
			val := append([]byte(name+"\x00"), allBytes(256)...)
			require.NoError(t, s.Set(ctx, key, val))
			got, err := s.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, val, got)
		})
	}
	// Every key is its own item: none overwrote another.
	for name, key := range nastyKeys {
		got, err := s.Get(ctx, key)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(got, []byte(name+"\x00")), "key %q reads another key's value", name)
	}
	assert.Len(t, kr.names(), len(nastyKeys))
}

func TestValuesOnFake(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newFakeStore(t, nil)
	tests := []struct {
		name    string
		value   []byte
		wantErr error
	}{
		{name: "empty", value: []byte{}},
		{name: "nil", value: nil},
		{name: "all bytes", value: allBytes(256)},
		{name: "max", value: allBytes(platformMaxValue)},
		{name: "max plus one", value: allBytes(platformMaxValue + 1), wantErr: ports.ErrValueTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Set(ctx, "v/"+tt.name, tt.value)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				_, err := s.Get(ctx, "v/"+tt.name)
				require.ErrorIs(t, err, ports.ErrNotFound, "a refused value is not stored")
				return
			}
			require.NoError(t, err)
			got, err := s.Get(ctx, "v/"+tt.name)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.True(t, bytes.Equal(tt.value, got))
		})
	}
}

func TestCopiesOnFake(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newFakeStore(t, nil)
	in := []byte("original")
	require.NoError(t, s.Set(ctx, "k", in))
	copy(in, "MUTATED!")
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "original", string(got), "Set kept the caller's slice")
	copy(got, "MUTATED!")
	again, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "original", string(again), "Get returned the stored slice")
}

func TestOverwriteAndDeleteOnFake(t *testing.T) {
	ctx := context.Background()
	s, kr, _ := newFakeStore(t, nil)
	require.NoError(t, s.Set(ctx, "k", []byte("v1")))
	require.NoError(t, s.Set(ctx, "k", []byte("v2")))
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "v2", string(got))
	require.NoError(t, s.Delete(ctx, "k"))
	_, err = s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound)
	// The fake's Remove, like the Secret Service's, succeeds for a missing
	// item: Delete must still say ErrNotFound.
	require.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrNotFound)
	assert.Empty(t, kr.names())
}

func TestInvalidKeyNeverReachesKeychain(t *testing.T) {
	ctx := context.Background()
	s, kr, op := newFakeStore(t, nil)
	for _, tt := range []struct {
		name string
		key  string
	}{
		{name: "empty", key: ""},
		{name: "one over max", key: strings.Repeat("k", ports.MaxKeyLen+1)},
		{name: "far over max", key: strings.Repeat("\xff", 10*ports.MaxKeyLen)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Get(ctx, tt.key)
			assert.ErrorIs(t, err, ports.ErrInvalidKey)
			assert.ErrorIs(t, s.Set(ctx, tt.key, []byte("v")), ports.ErrInvalidKey)
			assert.ErrorIs(t, s.Delete(ctx, tt.key), ports.ErrInvalidKey)
		})
	}
	assert.Zero(t, op.opens())
	assert.Zero(t, kr.calls.Load())
}

func TestErrorMapping(t *testing.T) {
	const secretKey = "sk-SECRETKEY/../x"
	secretValue := []byte("ghp_SECRETVALUE")
	// rawText is what keyring and D-Bus errors carry; none of it may leak.
	rawText := "org.freedesktop.DBus.Error.ServiceUnknown: item " + secretKey + " ghp_SECRETVALUE"
	var syntaxErr *json.SyntaxError
	require.Error(t, json.Unmarshal([]byte("not json"), new(keyring.Item)))
	{
		err := json.Unmarshal([]byte("not json"), new(keyring.Item))
		require.ErrorAs(t, err, &syntaxErr)
	}
	typeErr := json.Unmarshal([]byte(`"a string"`), new(keyring.Item))
	require.Error(t, typeErr)
	b64Err := json.Unmarshal([]byte(`{"Data":"!!!"}`), new(keyring.Item))
	require.Error(t, b64Err)

	tests := []struct {
		name       string
		arrange    func(*fakeKeyring, *fakeOpener)
		op         string // get, set, delete, clear
		want       error
		notWant    error
		wantPhrase string
	}{
		{name: "get missing", op: "get", want: ports.ErrNotFound, wantPhrase: "no item for key"},
		{name: "delete missing", op: "delete", want: ports.ErrNotFound, wantPhrase: "no item for key"},
		{name: "get keyring not found", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.getErr = keyring.ErrKeyNotFound }, want: ports.ErrNotFound},
		{name: "get dbus error", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.getErr = errors.New(rawText) }, want: ports.ErrUnavailable, wantPhrase: "refused the call or is locked"},
		{name: "set dbus error", op: "set", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.setErr = errors.New(rawText) }, want: ports.ErrUnavailable},
		{name: "delete lookup error", op: "delete", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.getErr = errors.New(rawText) }, want: ports.ErrUnavailable},
		{name: "delete remove error", op: "delete", arrange: func(f *fakeKeyring, _ *fakeOpener) {
			f.items["mcpward::"+base64.RawURLEncoding.EncodeToString([]byte(secretKey))] = keyring.Item{Key: "mcpward::" + base64.RawURLEncoding.EncodeToString([]byte(secretKey))}
			f.removeErr = errors.New(rawText)
		}, want: ports.ErrUnavailable},
		{name: "clear keys error", op: "clear", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.keysErr = errors.New(rawText) }, want: ports.ErrUnavailable},
		{name: "get undecodable json", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.getErr = fmt.Errorf("wrapped: %w", syntaxErr) }, want: ports.ErrCorrupt, wantPhrase: "cannot be decoded"},
		{name: "get wrong json type", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.getErr = typeErr }, want: ports.ErrCorrupt},
		{name: "get bad base64", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.getErr = b64Err }, want: ports.ErrCorrupt},
		{name: "delete of undecodable item removes it", op: "delete", arrange: func(f *fakeKeyring, _ *fakeOpener) {
			f.items["mcpward::"+base64.RawURLEncoding.EncodeToString([]byte(secretKey))] = keyring.Item{Key: "mcpward::" + base64.RawURLEncoding.EncodeToString([]byte(secretKey))}
			f.getErr = syntaxErr
		}},
		{name: "get item naming another key", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) {
			f.items["mcpward::"+base64.RawURLEncoding.EncodeToString([]byte(secretKey))] = keyring.Item{Key: "mcpward::" + base64.RawURLEncoding.EncodeToString([]byte(secretKey))}
			f.corruptKey = true
		}, want: ports.ErrCorrupt, wantPhrase: "names another key"},
		{name: "open fails", op: "set", arrange: func(_ *fakeKeyring, o *fakeOpener) { o.set(nil, keyring.ErrNoAvailImpl, false) }, want: ports.ErrUnavailable, wantPhrase: "not reachable"},
		{name: "open returns nil keyring", op: "get", arrange: func(_ *fakeKeyring, o *fakeOpener) { o.set(nil, nil, false) }, want: ports.ErrUnavailable},
		{name: "open panics", op: "get", arrange: func(_ *fakeKeyring, o *fakeOpener) { o.set(nil, nil, true) }, want: ports.ErrUnavailable, wantPhrase: "backend failed"},
		{name: "get panics", op: "get", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.panicIn = "get" }, want: ports.ErrUnavailable, wantPhrase: "backend failed"},
		{name: "set panics", op: "set", arrange: func(f *fakeKeyring, _ *fakeOpener) { f.panicIn = "set" }, want: ports.ErrUnavailable},
		{name: "remove panics", op: "delete", arrange: func(f *fakeKeyring, _ *fakeOpener) {
			f.items["mcpward::"+base64.RawURLEncoding.EncodeToString([]byte(secretKey))] = keyring.Item{Key: "mcpward::" + base64.RawURLEncoding.EncodeToString([]byte(secretKey))}
			f.panicIn = "remove"
		}, want: ports.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, kr, op := newFakeStore(t, nil)
			if tt.arrange != nil {
				tt.arrange(kr, op)
			}
			ctx := context.Background()
			var err error
			switch tt.op {
			case "get":
				var v []byte
				v, err = s.Get(ctx, secretKey)
				if err != nil {
					assert.Nil(t, v)
				}
			case "set":
				err = s.Set(ctx, secretKey, secretValue)
			case "delete":
				err = s.Delete(ctx, secretKey)
			case "clear":
				_, err = s.Clear(ctx)
			}
			if tt.want == nil {
				require.NoError(t, err)
				assert.Empty(t, kr.names())
				return
			}
			require.ErrorIs(t, err, tt.want)
			for _, other := range []error{ports.ErrNotFound, ports.ErrUnavailable, ports.ErrCorrupt, ports.ErrInvalidKey, ports.ErrValueTooLarge} {
				if other != tt.want {
					assert.NotErrorIs(t, err, other)
				}
			}
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "keychainstore: "+tt.op+": "), msg)
			assert.Contains(t, msg, tt.wantPhrase)
			for _, leak := range []string{secretKey, "SECRETKEY", "SECRETVALUE", "DBus", "freedesktop", "fake", base64.RawURLEncoding.EncodeToString([]byte(secretKey))} {
				assert.NotContains(t, msg, leak)
			}
		})
	}
}

func TestOpenFailureIsRetried(t *testing.T) {
	ctx := context.Background()
	s, kr, op := newFakeStore(t, nil)
	op.set(nil, keyring.ErrNoAvailImpl, false)
	_, err := s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.ErrorIs(t, s.Set(ctx, "k", []byte("v")), ports.ErrUnavailable)
	assert.Equal(t, 2, op.opens())

	op.set(kr, nil, false) // the keychain became reachable
	require.NoError(t, s.Set(ctx, "k", []byte("v")))
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "v", string(got))
	assert.Equal(t, 3, op.opens(), "an opened keyring is kept")
	require.Len(t, op.cfgs, 3)
	for _, cfg := range op.cfgs {
		assert.Equal(t, s.cfg.AllowedBackends, cfg.AllowedBackends)
		assert.NotEmpty(t, cfg.AllowedBackends)
	}
}

func TestPanicReleasesStore(t *testing.T) {
	ctx := context.Background()
	s, kr, _ := newFakeStore(t, nil)
	kr.panicIn = "set"
	require.ErrorIs(t, s.Set(ctx, "k", []byte("v")), ports.ErrUnavailable)
	kr.panicIn = ""
	require.NoError(t, s.Set(ctx, "k", []byte("v")), "the store is usable after a backend panic")
}

func TestTimeoutAndContext(t *testing.T) {
	s, kr, _ := newFakeStore(t, &Options{Timeout: 100 * time.Millisecond})
	require.NoError(t, s.Set(context.Background(), "k", []byte("v")))

	t.Run("canceled ctx never reaches keychain", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := kr.calls.Load()
		_, err := s.Get(ctx, "k")
		require.ErrorIs(t, err, ports.ErrUnavailable)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, before, kr.calls.Load())
	})

	t.Run("hung keychain is bounded", func(t *testing.T) {
		kr.block = make(chan struct{})
		start := time.Now()
		_, err := s.Get(context.Background(), "k")
		require.ErrorIs(t, err, ports.ErrUnavailable)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Contains(t, err.Error(), "did not answer in time")

		// The hung call still holds the store: the next call waits its
		// own bound and fails the same way instead of piling up.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		err = s.Set(ctx, "k", []byte("v2"))
		require.ErrorIs(t, err, ports.ErrUnavailable)
		require.ErrorIs(t, err, context.DeadlineExceeded)

		close(kr.block) // the keychain answers at last
		require.Eventually(t, func() bool {
			got, err := s.Get(context.Background(), "k")
			return err == nil && string(got) == "v"
		}, 2*time.Second, 10*time.Millisecond)
		kr.block = nil
	})
}

func TestConcurrentUseIsSerialized(t *testing.T) {
	ctx := context.Background()
	s, kr, _ := newFakeStore(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				key := fmt.Sprintf("g%d/k%d", g, i)
				val := []byte(key)
				if err := s.Set(ctx, key, val); err != nil {
					errs <- err
					return
				}
				got, err := s.Get(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, val) {
					errs <- fmt.Errorf("%s: got %q", key, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.False(t, kr.overlap.Load(), "two keychain calls overlapped")
	assert.Len(t, kr.names(), 80)
}

func TestClearOnFake(t *testing.T) {
	ctx := context.Background()
	mine, kr, op := newFakeStore(t, &Options{Namespace: "a"})
	other, err := New(&Options{Namespace: "ab"})
	require.NoError(t, err)
	other.open = op.open
	def, err := New(nil)
	require.NoError(t, err)
	def.open = op.open
	for _, k := range []string{"1", "2", "a/../../b"} {
		require.NoError(t, mine.Set(ctx, k, []byte("v")))
		require.NoError(t, other.Set(ctx, k, []byte("v")))
		require.NoError(t, def.Set(ctx, k, []byte("v")))
	}
	kr.items["unrelated"] = keyring.Item{Key: "unrelated"}
	n, err := mine.Clear(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	for _, k := range []string{"1", "2", "a/../../b"} {
		_, err := mine.Get(ctx, k)
		assert.ErrorIs(t, err, ports.ErrNotFound)
		_, err = other.Get(ctx, k)
		assert.NoError(t, err, "another namespace's item was removed")
		_, err = def.Get(ctx, k)
		assert.NoError(t, err, "the default namespace's item was removed")
	}
	assert.Len(t, kr.names(), 7)
}
