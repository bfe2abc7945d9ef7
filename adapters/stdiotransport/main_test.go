//go:build linux || darwin

package stdiotransport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// fixtureBin is the fixture server, built once per run by TestMain.
var fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stdiotransport-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tempdir:", err)
		os.Exit(2)
	}
	fixtureBin = filepath.Join(dir, "mcpfixture")
	build := exec.Command("go", "build", "-o", fixtureBin, "./internal/fixture")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the fixture: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// fastOptions keep the suite quick while leaving room for a loaded machine.
func fastOptions() *Options {
	return &Options{CloseGrace: 400 * time.Millisecond, TermGrace: 400 * time.Millisecond, KillGrace: 3 * time.Second}
}

// world is one test's allowed root, marker file and authority.
type world struct {
	root   string // canonical
	marker string
	grant  ports.ProcessGrant
	auth   *portstest.ProcessAuthority
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := &world{
		root:   root,
		marker: filepath.Join(t.TempDir(), "marker"),
		grant: ports.ProcessGrant{
			AllowedRoot: root,
			BaselineEnv: map[string]string{"PATH": "/usr/bin:/bin", "HOME": root, "EMPTYKEY": ""},
		},
	}
	w.auth = portstest.GrantAllProcesses(w.grant)
	return w
}

// target runs the fixture with the marker flag and then extra.
func (w *world) target(extra ...string) ports.Target {
	return ports.Target{
		ServerID: "fx",
		Kind:     ports.TransportStdio,
		Command:  fixtureBin,
		Args:     append([]string{"-marker", w.marker}, extra...),
	}
}

// starts returns the pids the fixture recorded as started (children and
// grandchildren).
func (w *world) starts(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(w.marker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "start ") || strings.HasPrefix(l, "sleeper ") {
			out = append(out, l)
		}
	}
	return out
}

// waitNote polls the marker file for line.
func (w *world) waitNote(t *testing.T, line string) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(w.marker)
		return bytes.Contains(b, []byte(line+"\n"))
	}, 10*time.Second, 5*time.Millisecond)
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "stdiotransport-test", Version: "1"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
}

func connect(t testing.TB, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	return cs
}

func callText(ctx context.Context, cs *mcp.ClientSession, name string, args any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		var msg string
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				msg = tc.Text // the fixture's own text, never a secret
			}
		}
		return "", fmt.Errorf("tool %s failed: %s", name, msg)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("tool %s: not text", name)
	}
	return tc.Text, nil
}

func mustCall(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := callText(ctx, cs, name, args)
	require.NoError(t, err)
	return s
}

func callJSON[T any](t *testing.T, cs *mcp.ClientSession, name string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(mustCall(t, cs, name, map[string]any{})), &v))
	return v
}

// requireRefusal asserts err is a *refusal.Error of class and reason for
// server "fx" whose text carries none of secrets.
func requireRefusal(t *testing.T, err error, class refusal.Class, reason string, secrets ...string) *refusal.Error {
	t.Helper()
	require.Error(t, err)
	var re *refusal.Error
	require.True(t, errors.As(err, &re), "not a *refusal.Error: %T", err)
	assert.Equal(t, class, re.Class, "class")
	assert.Equal(t, reason, re.Reason, "reason")
	assert.Equal(t, "fx", re.Server, "server")
	for _, s := range secrets {
		assert.NotContains(t, err.Error(), s, "error text leaks a value")
	}
	return re
}

// processGone reports whether pid has exited (a zombie counts: it runs no
// code).
func processGone(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		i := bytes.LastIndexByte(b, ')')
		return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
	} else if _, serr := os.Stat("/proc/self"); serr == nil {
		return true
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(ents)
}
