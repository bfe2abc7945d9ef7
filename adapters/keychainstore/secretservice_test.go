//go:build linux

package keychainstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/99designs/keyring"
	"github.com/godbus/dbus"
	"github.com/mcpward/mcpward/ports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests use the real Secret Service of the session they run in. Run
// them through scripts/keyring-session.sh (make test-keychain), which starts
// a fresh, unlocked gnome-keyring in a private D-Bus session with a
// temporary HOME and sets MCPWARD_TEST_SECRET_SERVICE=1.

const envSecretService = "MCPWARD_TEST_SECRET_SERVICE"

const (
	secretsDest = "org.freedesktop.secrets"
	secretsPath = dbus.ObjectPath("/org/freedesktop/secrets")
	loginPath   = dbus.ObjectPath("/org/freedesktop/secrets/collection/login")
)

// testStart is when this test binary started: files written under HOME after
// it are checked for plaintext fallbacks.
var testStart = time.Now().Add(-time.Second)

func requireSecretService(t *testing.T) {
	t.Helper()
	if os.Getenv(envSecretService) != "1" {
		t.Skip("real Secret Service tests skipped: run under scripts/keyring-session.sh " +
			"(HOME=$(mktemp -d) dbus-run-session -- sh scripts/keyring-session.sh go test ./...), which sets " +
			envSecretService + "=1")
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// newSecretServiceStore returns a Store on the session's Secret Service in a
// fresh namespace, and removes every item of that namespace at cleanup,
// checking that none is left.
func newSecretServiceStore(t *testing.T, ns string) *Store {
	t.Helper()
	requireSecretService(t)
	if ns == "" {
		ns = "test-" + randomHex(t, 6)
	}
	s, err := New(&Options{Namespace: ns, Timeout: 15 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_, err := s.Clear(ctx)
		require.NoError(t, err)
		assert.Empty(t, itemNames(t, s.prefix), "items left behind")
	})
	return s
}

// itemNames lists the Secret Service item names starting with prefix,
// through a keyring handle of its own.
func itemNames(t *testing.T, prefix string) []string {
	t.Helper()
	kr, err := keyring.Open(keyring.Config{
		AllowedBackends:         []keyring.BackendType{keyring.SecretServiceBackend},
		LibSecretCollectionName: DefaultCollection,
	})
	require.NoError(t, err)
	names, err := kr.Keys()
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// assertNoPlaintext checks every file written under HOME since the test
// binary started: none may hold a marker (raw, base64 or hex), and none may
// lie outside gnome-keyring's own directories and Go's caches — a keyring
// file or pass backend would write there.
func assertNoPlaintext(t *testing.T, markers ...[]byte) {
	t.Helper()
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	var needles [][]byte
	for _, m := range markers {
		needles = append(needles, m,
			[]byte(base64.StdEncoding.EncodeToString(m)),
			[]byte(base64.RawURLEncoding.EncodeToString(m)),
			[]byte(hex.EncodeToString(m)))
	}
	allowed := []string{
		filepath.Join(home, ".local", "share", "keyrings"),
		filepath.Join(home, ".run"),
	}
	// Go's own caches and telemetry (go test runs vet) are not ours.
	skip := []string{
		filepath.Join(home, ".cache", "go-build"), filepath.Join(home, "go", "pkg"),
		filepath.Join(home, ".config", "go"), os.Getenv("GOCACHE"), os.Getenv("GOMODCACHE"),
	}
	under := func(p string, dirs []string) bool {
		for _, d := range dirs {
			if d != "" && (p == d || strings.HasPrefix(p, d+string(filepath.Separator))) {
				return true
			}
		}
		return false
	}
	checked := 0
	err = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished or unreadable: not ours
		}
		if d.IsDir() {
			if under(p, skip) {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.ModTime().Before(testStart) {
			return nil
		}
		assert.True(t, under(p, allowed), "file written under HOME outside the keyring's directories: %s", p)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		checked++
		for _, n := range needles {
			assert.False(t, bytes.Contains(b, n), "plaintext value in %s", p)
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("checked %d files written under HOME", checked)
}

func TestSecretServiceRoundTrip(t *testing.T) {
	s := newSecretServiceStore(t, "")
	ctx := context.Background()
	marker := []byte("canary-" + randomHex(t, 16))

	_, err := s.Get(ctx, "token")
	require.ErrorIs(t, err, ports.ErrNotFound)
	require.ErrorIs(t, s.Delete(ctx, "token"), ports.ErrNotFound, "the backend's remove of a missing item succeeds; Delete must not")

	require.NoError(t, s.Set(ctx, "token", marker))
	got, err := s.Get(ctx, "token")
	require.NoError(t, err)
	assert.Equal(t, marker, got)

	require.NoError(t, s.Set(ctx, "token", []byte("second")))
	got, err = s.Get(ctx, "token")
	require.NoError(t, err)
	assert.Equal(t, "second", string(got))
	assert.Len(t, itemNames(t, s.prefix), 1, "overwrite replaced the item")

	require.NoError(t, s.Set(ctx, "token", marker))
	require.NoError(t, s.Delete(ctx, "token"))
	_, err = s.Get(ctx, "token")
	require.ErrorIs(t, err, ports.ErrNotFound)
	require.ErrorIs(t, s.Delete(ctx, "token"), ports.ErrNotFound)
	assertNoPlaintext(t, marker)
}

func TestSecretServiceNastyKeys(t *testing.T) {
	s := newSecretServiceStore(t, "")
	ctx := context.Background()
	for name, key := range nastyKeys {
		require.NoError(t, s.Set(ctx, key, []byte("value of "+name)), name)
	}
	assert.Len(t, itemNames(t, s.prefix), len(nastyKeys), "one item per key")
	for name, key := range nastyKeys {
		t.Run(name, func(t *testing.T) {
			got, err := s.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, "value of "+name, string(got))
		})
	}
	for name, key := range nastyKeys {
		require.NoError(t, s.Delete(ctx, key), name)
		_, err := s.Get(ctx, key)
		require.ErrorIs(t, err, ports.ErrNotFound, name)
	}
	assert.Empty(t, itemNames(t, s.prefix))
}

func TestSecretServiceValues(t *testing.T) {
	s := newSecretServiceStore(t, "")
	ctx := context.Background()
	reversed := allBytes(ports.MaxValueLen)
	for i := range reversed {
		reversed[i] = 255 - reversed[i]
	}
	random := make([]byte, ports.MaxValueLen)
	_, err := rand.Read(random)
	require.NoError(t, err)
	tests := []struct {
		name    string
		value   []byte
		wantErr error
	}{
		{name: "16 KiB every byte value", value: allBytes(ports.MaxValueLen)},
		{name: "16 KiB reversed", value: reversed},
		{name: "16 KiB random", value: random},
		{name: "NUL only", value: []byte{0}},
		{name: "invalid UTF-8", value: []byte{0xff, 0xfe, 0xc0, 0x80}},
		{name: "empty", value: []byte{}},
		{name: "one over max", value: allBytes(ports.MaxValueLen + 1), wantErr: ports.ErrValueTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Set(ctx, tt.name, tt.value)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				_, err := s.Get(ctx, tt.name)
				require.ErrorIs(t, err, ports.ErrNotFound)
				return
			}
			require.NoError(t, err)
			got, err := s.Get(ctx, tt.name)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.True(t, bytes.Equal(tt.value, got), "value changed: %d bytes in, %d out", len(tt.value), len(got))
		})
	}
}

func TestSecretServiceTwoHandles(t *testing.T) {
	a := newSecretServiceStore(t, "")
	ns := strings.TrimSuffix(strings.TrimPrefix(a.prefix, DefaultServiceName+":"), ":")
	b, err := New(&Options{Namespace: ns, Timeout: 15 * time.Second})
	require.NoError(t, err)
	other := newSecretServiceStore(t, "")
	ctx := context.Background()

	require.NoError(t, a.Set(ctx, "k", []byte("from a")))
	got, err := b.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "from a", string(got))

	require.NoError(t, b.Set(ctx, "k", []byte("from b")))
	got, err = a.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "from b", string(got))

	_, err = other.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound, "another namespace sees the key")

	require.NoError(t, b.Delete(ctx, "k"))
	_, err = a.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func TestSecretServiceSecondProcess(t *testing.T) {
	s := newSecretServiceStore(t, "")
	ns := strings.TrimSuffix(strings.TrimPrefix(s.prefix, DefaultServiceName+":"), ":")
	ctx := context.Background()
	key := "server/a/../../b\x00"
	val := allBytes(ports.MaxValueLen)

	require.NoError(t, s.Set(ctx, key, val))
	res := runHelper(t, os.Environ(), "get", ns, key, nil)
	require.Equal(t, "ok", res["get"])
	assert.Equal(t, hex.EncodeToString(val), res["value"], "the other process read another value")

	res = runHelper(t, os.Environ(), "set", ns, key, []byte("written by child"))
	require.Equal(t, "ok", res["set"])
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "written by child", string(got))

	res = runHelper(t, os.Environ(), "delete", ns, key, nil)
	require.Equal(t, "ok", res["delete"])
	_, err = s.Get(ctx, key)
	require.ErrorIs(t, err, ports.ErrNotFound)
	res = runHelper(t, os.Environ(), "delete", ns, key, nil)
	require.Equal(t, "not_found", res["delete"])
}

func TestSecretServiceCorruptItem(t *testing.T) {
	s := newSecretServiceStore(t, "")
	ctx := context.Background()
	_, err := exec.LookPath("secret-tool")
	require.NoError(t, err, "secret-tool missing (apt-get install libsecret-tools)")
	name := s.itemName("corrupt")
	cmd := exec.Command("secret-tool", "store", "--label="+name, "profile", name)
	cmd.Stdin = strings.NewReader("this is not JSON")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "secret-tool store: %s", out)
	t.Cleanup(func() { _ = exec.Command("secret-tool", "clear", "profile", name).Run() })

	for i := 0; i < 2; i++ {
		_, err = s.Get(ctx, "corrupt")
		require.ErrorIs(t, err, ports.ErrCorrupt, "read %d", i)
		assert.NotContains(t, err.Error(), "JSON")
	}
	require.NoError(t, s.Delete(ctx, "corrupt"), "an explicit Delete removes a corrupt item")
	_, err = s.Get(ctx, "corrupt")
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func TestSecretServiceMissingCollection(t *testing.T) {
	requireSecretService(t)
	coll := "mcpwardmissing" + randomHex(t, 4)
	s, err := New(&Options{Namespace: "missing", Collection: coll, Timeout: 15 * time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	marker := []byte("canary-" + randomHex(t, 16))

	_, err = s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrNotFound, "no item exists in a missing collection")
	require.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrNotFound)
	// Creating a collection needs a prompt, which a headless session
	// dismisses: the write fails as unavailable, every time, without panic.
	for i := 0; i < 2; i++ {
		require.ErrorIs(t, s.Set(ctx, "k", marker), ports.ErrUnavailable, "set %d", i)
	}
	// keyring keeps the collection object of the dismissed prompt, so this
	// handle now fails as unavailable; either way no value comes back.
	_, err = s.Get(ctx, "k")
	require.Error(t, err)
	assert.True(t, errorIsAny(err, ports.ErrNotFound, ports.ErrUnavailable), "get: %v", err)
	assert.NotContains(t, collections(t), dbus.ObjectPath("/org/freedesktop/secrets/collection/"+coll))
	assertNoPlaintext(t, marker)
}

func TestSecretServiceLocked(t *testing.T) {
	s := newSecretServiceStore(t, "")
	ctx := context.Background()
	marker := []byte("canary-" + randomHex(t, 16))
	require.NoError(t, s.Set(ctx, "k", []byte("stored before lock")))

	lockLogin(t)
	t.Cleanup(func() { unlockLogin(t) })

	_, err := s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.ErrorIs(t, s.Set(ctx, "k", marker), ports.ErrUnavailable)
	require.ErrorIs(t, s.Set(ctx, "new", marker), ports.ErrUnavailable)
	require.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrUnavailable)
	for _, err := range []error{err} {
		assert.NotContains(t, err.Error(), "locked object", "raw D-Bus text")
	}
	assertNoPlaintext(t, marker)

	unlockLogin(t)
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "stored before lock", string(got), "the locked keychain was not written")
	_, err = s.Get(ctx, "new")
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func errorIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func secretsService(t *testing.T) dbus.BusObject {
	t.Helper()
	conn, err := dbus.SessionBus()
	require.NoError(t, err)
	return conn.Object(secretsDest, secretsPath)
}

func collections(t *testing.T) []dbus.ObjectPath {
	t.Helper()
	v, err := secretsService(t).GetProperty("org.freedesktop.Secret.Service.Collections")
	require.NoError(t, err)
	paths, ok := v.Value().([]dbus.ObjectPath)
	require.True(t, ok)
	return paths
}

func loginLocked(t *testing.T) bool {
	t.Helper()
	conn, err := dbus.SessionBus()
	require.NoError(t, err)
	v, err := conn.Object(secretsDest, loginPath).GetProperty("org.freedesktop.Secret.Collection.Locked")
	require.NoError(t, err)
	locked, ok := v.Value().(bool)
	require.True(t, ok)
	return locked
}

func lockLogin(t *testing.T) {
	t.Helper()
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	require.NoError(t, secretsService(t).Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{loginPath}).Store(&locked, &prompt))
	require.True(t, loginLocked(t), "login collection did not lock")
}

// unlockLogin unlocks the login collection with the session's password
// through gnome-keyring's non-interactive interface (the standard Unlock
// needs a prompt).
func unlockLogin(t *testing.T) {
	t.Helper()
	if !loginLocked(t) {
		return
	}
	svc := secretsService(t)
	var out dbus.Variant
	var session dbus.ObjectPath
	require.NoError(t, svc.Call("org.freedesktop.Secret.Service.OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &session))
	pw := os.Getenv("KEYRING_PW")
	if pw == "" {
		pw = "ci"
	}
	secret := struct {
		Session     dbus.ObjectPath
		Parameters  []byte
		Value       []byte
		ContentType string
	}{session, []byte{}, []byte(pw), "text/plain"}
	require.NoError(t, svc.Call("org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.UnlockWithMasterPassword", 0, loginPath, secret).Err)
	require.False(t, loginLocked(t), "login collection did not unlock")
}
