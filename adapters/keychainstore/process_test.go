//go:build linux

package keychainstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpward/mcpward/ports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Environment of the helper process (this test binary run again).
const (
	envHelper    = "MCPWARD_KEYCHAIN_HELPER" // "probe", "set", "get" or "delete"
	envHelperNS  = "MCPWARD_KEYCHAIN_HELPER_NS"
	envHelperKey = "MCPWARD_KEYCHAIN_HELPER_KEY" // hex
	envHelperVal = "MCPWARD_KEYCHAIN_HELPER_VAL" // hex
)

// TestKeychainHelperProcess is not a test: it is the second process other
// tests start. It prints "helper: <op>=<outcome>" lines.
func TestKeychainHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		t.Skip("helper process for other tests")
	}
	key, err := hex.DecodeString(os.Getenv(envHelperKey))
	require.NoError(t, err)
	val, err := hex.DecodeString(os.Getenv(envHelperVal))
	require.NoError(t, err)
	s, err := New(&Options{Namespace: os.Getenv(envHelperNS), Timeout: 10 * time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	switch mode {
	case "probe":
		fmt.Printf("helper: env=%q\n", os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
		fmt.Printf("helper: set=%s\n", outcome(s.Set(ctx, string(key), val)))
		_, err := s.Get(ctx, string(key))
		fmt.Printf("helper: get=%s\n", outcome(err))
		fmt.Printf("helper: delete=%s\n", outcome(s.Delete(ctx, string(key))))
		_, err = s.Clear(ctx)
		fmt.Printf("helper: clear=%s\n", outcome(err))
	case "set":
		fmt.Printf("helper: set=%s\n", outcome(s.Set(ctx, string(key), val)))
	case "get":
		got, err := s.Get(ctx, string(key))
		fmt.Printf("helper: get=%s\n", outcome(err))
		fmt.Printf("helper: value=%s\n", hex.EncodeToString(got))
	case "delete":
		fmt.Printf("helper: delete=%s\n", outcome(s.Delete(ctx, string(key))))
	default:
		t.Fatalf("unknown helper mode %q", mode)
	}
}

// outcome names the sentinel err wraps.
func outcome(err error) string {
	for _, s := range []struct {
		name string
		err  error
	}{
		{"not_found", ports.ErrNotFound},
		{"unavailable", ports.ErrUnavailable},
		{"corrupt", ports.ErrCorrupt},
		{"invalid_key", ports.ErrInvalidKey},
		{"too_large", ports.ErrValueTooLarge},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	if err == nil {
		return "ok"
	}
	return "other:" + strconv.Quote(err.Error())
}

// runHelper runs this test binary as the helper with env (the whole
// environment) and returns its "helper:" lines as a map.
func runHelper(t *testing.T, env []string, mode, ns string, key string, val []byte) map[string]string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestKeychainHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(env,
		envHelper+"="+mode,
		envHelperNS+"="+ns,
		envHelperKey+"="+hex.EncodeToString([]byte(key)),
		envHelperVal+"="+hex.EncodeToString(val),
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "helper failed:\n%s", out)
	res := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "helper: ")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		res[k] = v
	}
	require.NotEmpty(t, res, "helper printed nothing:\n%s", out)
	return res
}

// fakeDBusLaunch puts a dbus-launch first on a PATH that records each run in
// a file and fails, so a test sees any attempt to autolaunch a session bus
// without starting one. It returns the PATH and the record file.
func fakeDBusLaunch(t *testing.T) (path, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "dbus-launch.ran")
	script := "#!/bin/sh\necho ran >> '" + record + "'\nexit 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dbus-launch"), []byte(script), 0o755))
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), record
}

// filesUnder lists every non-directory entry under root.
func filesUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

func perUserBusExists() bool {
	dir := fmt.Sprintf("/run/user/%d", os.Getuid())
	for _, f := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			return true
		}
	}
	return false
}

// TestNoSessionBusIsUnavailable runs a second process with no usable session
// bus: every call is ErrUnavailable, nothing is written under HOME (no
// file/pass fallback), and no bus daemon is autolaunched. The "autolaunch:"
// case is the control showing that an autolaunch attempt would be seen.
func TestNoSessionBusIsUnavailable(t *testing.T) {
	tests := []struct {
		name         string
		busAddr      *string // nil: unset
		wantLaunched bool
		wantEnv      string
	}{
		{name: "bus disabled", busAddr: ptr("disabled:"), wantEnv: "disabled:"},
		{name: "no bus address", busAddr: nil, wantEnv: ""},
		{name: "bus address unreachable", busAddr: ptr("unix:path=/nonexistent/mcpward-bus"), wantEnv: "unix:path=/nonexistent/mcpward-bus"},
		{name: "explicit autolaunch (control)", busAddr: ptr("autolaunch:"), wantLaunched: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.busAddr == nil || *tt.busAddr == "autolaunch:" {
				if perUserBusExists() {
					t.Skip("a per-user session bus exists under /run/user; the D-Bus library would use it")
				}
			}
			home := t.TempDir()
			path, record := fakeDBusLaunch(t)
			env := []string{"HOME=" + home, "PATH=" + path, "TMPDIR=" + t.TempDir()}
			if tt.busAddr != nil {
				env = append(env, "DBUS_SESSION_BUS_ADDRESS="+*tt.busAddr)
			}
			res := runHelper(t, env, "probe", "nobus", "a/../../b", []byte("plaintext-canary"))
			for _, op := range []string{"set", "get", "delete", "clear"} {
				assert.Equal(t, "unavailable", res[op], op)
			}
			_, err := os.Stat(record)
			if tt.wantLaunched {
				require.NoError(t, err, "control: the D-Bus library should have tried dbus-launch")
				return
			}
			assert.True(t, os.IsNotExist(err), "dbus-launch was run: a session bus daemon would have been started")
			assert.Equal(t, strconv.Quote(tt.wantEnv), res["env"], "the environment is restored after keyring's init")
			assert.Empty(t, filesUnder(t, home), "files written under HOME with no keychain")
		})
	}
}

func ptr(s string) *string { return &s }
