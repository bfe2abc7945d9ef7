package composition

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
)

// pids returns the ids of the live processes whose executable is bin.
func pids(bin string) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == bin {
			if id, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// alive reports whether process id still runs bin.
func alive(bin string, id int) bool { return slices.Contains(pids(bin), id) }

// requireCallTimeout requires err to be the supervisor's call timeout for
// server "example".
func requireCallTimeout(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, refusal.Transient, refusal.ClassOf(err), "class of %v", err)
	assert.Equal(t, supervisor.ReasonCallTimeout, refusal.ReasonOf(err))
}

// Every call path gets the call timeout: Fleet.CallServerTool and the ports.Tool
// values of the Set. Over stdio the timed-out call's child is ended (no
// process is left) and the server comes back with a new one.
func TestCallTimeoutStdio(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	f := r.host.Connect(context.Background(), userSrc(`{"mcpServers": {"example": {"command": `+string(b)+`}}}`),
		&ConnectOptions{Supervisor: &supervisor.Options{CallTimeout: 300 * time.Millisecond}})
	t.Cleanup(func() { _ = f.Close() })
	require.Equal(t, StateConnected, result(t, f, "example").State)
	tool, ok := f.Set().Tool(catalog.ToolName("example", "slow"))
	require.True(t, ok)

	paths := []struct {
		name string
		call func() error
	}{
		{"Fleet.CallServerTool", func() error {
			_, err := f.CallServerTool(context.Background(), "example", "slow", json.RawMessage(`{"ms":10000}`))
			return err
		}},
		{"ports.Tool", func() error {
			_, err := tool.Call(context.Background(), json.RawMessage(`{"ms":10000}`))
			return err
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			// The server is back (Ready, one child) after an earlier timeout.
			var before []int
			require.Eventually(t, func() bool {
				before = pids(bin)
				_, err := f.CallServerTool(context.Background(), "example", "echo", json.RawMessage(`{"text":"up"}`))
				return err == nil && len(before) == 1
			}, 10*time.Second, 20*time.Millisecond, "the server did not come back")

			start := time.Now()
			requireCallTimeout(t, p.call())
			assert.Less(t, time.Since(start), 10*time.Second, "ended by the timeout, not by the tool")
			assert.Eventually(t, func() bool { return !alive(bin, before[0]) }, 5*time.Second, 10*time.Millisecond,
				"the child of the timed-out call was ended")
		})
	}
	require.NoError(t, f.Close())
	assert.Empty(t, pids(bin), "no process is left")
}

func TestCallTimeoutHTTP(t *testing.T) {
	bin := privateExample(t)
	url := startHTTPExample(t, bin)
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), userSrc(`{"mcpServers": {"example": {"type": "http", "url": "`+url+`"}}}`),
		&ConnectOptions{Supervisor: &supervisor.Options{CallTimeout: 300 * time.Millisecond}})
	t.Cleanup(func() { _ = f.Close() })
	require.Equal(t, StateConnected, result(t, f, "example").State)
	tool, ok := f.Set().Tool(catalog.ToolName("example", "slow"))
	require.True(t, ok)

	_, err := f.CallServerTool(context.Background(), "example", "slow", json.RawMessage(`{"ms":10000}`))
	requireCallTimeout(t, err)
	_, err = tool.Call(context.Background(), json.RawMessage(`{"ms":10000}`))
	requireCallTimeout(t, err)

	// A caller's own deadline stays a caller's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = tool.Call(ctx, json.RawMessage(`{"ms":10000}`))
	assert.Equal(t, supervisor.ReasonTimeout, refusal.ReasonOf(err))

	// The session stayed up.
	res, err := f.CallServerTool(context.Background(), "example", "echo", json.RawMessage(`{"text":"after"}`))
	require.NoError(t, err)
	assert.Equal(t, "after", text(t, res))
}

func TestSupervisorOptionsFlow(t *testing.T) {
	var buf bytes.Buffer
	hostLog := slog.New(slog.NewTextHandler(&buf, nil))
	ownLog := slog.New(slog.DiscardHandler)
	h := &Host{logger: hostLog}
	var statuses []string
	on := func(name string, _ supervisor.Status) { statuses = append(statuses, name) }

	t.Run("defaults", func(t *testing.T) {
		got := h.supervisorOptions(&ConnectOptions{}, "a", nil, nil)
		assert.Same(t, hostLog, got.Logger, "Config.Logger reaches every supervisor")
		assert.Zero(t, got.ConnectTimeout, "0: the supervisor's default")
		assert.Zero(t, got.CallTimeout)
		assert.Zero(t, got.CallTimeoutMax)
		assert.Nil(t, got.OnChange)
	})
	t.Run("set", func(t *testing.T) {
		sup := &supervisor.Options{
			ConnectTimeout: supervisor.NoTimeout,
			CallTimeout:    time.Second,
			CallTimeoutMax: time.Minute,
			Logger:         ownLog,
			OnChange:       func(supervisor.Status) { t.Error("the caller's OnChange is replaced") },
		}
		got := h.supervisorOptions(&ConnectOptions{Supervisor: sup, OnStatus: on}, "a", nil, nil)
		assert.Equal(t, supervisor.NoTimeout, got.ConnectTimeout)
		assert.Equal(t, time.Second, got.CallTimeout)
		assert.Equal(t, time.Minute, got.CallTimeoutMax)
		assert.Same(t, ownLog, got.Logger, "the supervisor options' own logger wins")
		require.NotNil(t, got.OnChange)
		got.OnChange(supervisor.Status{})
		assert.Equal(t, []string{"a"}, statuses)
		assert.Same(t, ownLog, sup.Logger, "the caller's options are not modified")
	})
	t.Run("from Config", func(t *testing.T) {
		r := newRig(t, Config{Logger: hostLog})
		assert.Same(t, hostLog, r.host.supervisorOptions(&ConnectOptions{}, "a", nil, nil).Logger)
	})
}

// A definition's "timeout" may shorten the host's call timeout, never
// lengthen it.
func TestDefinitionTimeoutShortensOnly(t *testing.T) {
	h := &Host{logger: slog.New(slog.DiscardHandler)}
	tests := []struct {
		name      string
		host, def time.Duration
		want      time.Duration
	}{
		{"absent keeps the host's", time.Second, 0, time.Second},
		{"absent keeps the default", 0, 0, 0},
		{"shorter than the host's", time.Second, 200 * time.Millisecond, 200 * time.Millisecond},
		{"longer than the host's", time.Second, time.Hour, time.Second},
		{"equal", time.Second, time.Second, time.Second},
		{"shorter than the default", 0, time.Minute, time.Minute},
		{"longer than the default", 0, supervisor.DefaultCallTimeout + time.Minute, 0},
		{"the host sets none", supervisor.NoTimeout, time.Minute, time.Minute},
		{"none and absent", supervisor.NoTimeout, 0, supervisor.NoTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sup := &supervisor.Options{CallTimeout: tt.host}
			got := h.supervisorOptions(&ConnectOptions{Supervisor: sup}, "a", &definition.Definition{Timeout: tt.def}, nil)
			assert.Equal(t, tt.want, got.CallTimeout)
			assert.Equal(t, tt.host, sup.CallTimeout, "the caller's options are not modified")
		})
	}
}

// A server whose definition says "timeout": 200 has its hanging call ended
// well before the host's limit; one whose definition allows longer than
// the host is still ended at the host's limit.
func TestDefinitionTimeoutCall(t *testing.T) {
	bin := privateExample(t)
	b, _ := json.Marshal(bin)
	tests := []struct {
		name    string
		timeout string // the definition's "timeout"
		host    time.Duration
	}{
		{"definition shorter", "200", 0},
		{"definition longer", "600000", 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
			f := r.host.Connect(context.Background(),
				userSrc(`{"mcpServers": {"example": {"command": `+string(b)+`, "timeout": `+tt.timeout+`}}}`),
				&ConnectOptions{Supervisor: &supervisor.Options{CallTimeout: tt.host}})
			t.Cleanup(func() { _ = f.Close() })
			require.Equal(t, StateConnected, result(t, f, "example").State)
			start := time.Now()
			_, err := f.CallServerTool(context.Background(), "example", "slow", json.RawMessage(`{"ms":10000}`))
			requireCallTimeout(t, err)
			assert.Less(t, time.Since(start), 5*time.Second, "ended by a timeout, not by the 10 s tool")
		})
	}
}
