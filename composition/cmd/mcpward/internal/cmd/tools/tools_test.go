package tools

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/ports"
)

func TestMain(m *testing.M) {
	testserver.Main()
	os.Exit(m.Run())
}

func TestNewCmdTools(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		names   []string
		timeout time.Duration
		usage   string
	}{
		{name: "defaults", timeout: fleet.DefaultConnectTimeout},
		{name: "names", args: []string{"a", "b"}, names: []string{"a", "b"}, timeout: fleet.DefaultConnectTimeout},
		{name: "timeout", args: []string{"--connect-timeout", "2m", "a"}, names: []string{"a"}, timeout: 2 * time.Minute},
		{name: "no timeout", args: []string{"--connect-timeout=0"}, timeout: 0},
		{name: "negative timeout", args: []string{"--connect-timeout", "-1s"}, usage: "invalid value for --connect-timeout"},
		{name: "not a duration", args: []string{"--connect-timeout", "soon"}, usage: "takes a duration"},
		{name: "call's flag", args: []string{"--call-timeout", "1s"}, usage: "unknown flag: --call-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := cmdtest.NewWorld(t, nil).Factory(t)
			var got *Options
			err := cmdtest.Execute(run.F, NewCmdTools(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), tt.args...)
			if tt.usage != "" {
				assert.True(t, cmdutil.IsUsage(err), "%v", err)
				assert.ErrorContains(t, err, tt.usage)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.names, got.Names)
			assert.Equal(t, tt.timeout, got.ConnectTimeout)
		})
	}
}

// world defines the test server (mode) as the user's server "t".
func world(t *testing.T, mode string) *cmdtest.World {
	return cmdtest.NewWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"t": {"command": ` + cmdtest.JSONString(cmdtest.Executable(t)) +
			`, "env": {"` + testserver.Env + `": "` + mode + `"}}}}`,
	})
}

func TestRunPlain(t *testing.T) {
	run := world(t, testserver.ModeOK).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute}
	require.NoError(t, Run(context.Background(), opts))
	out := run.Out.String()
	assert.Contains(t, out, "t: connected (protocol 2025-11-25, legacy era)\n", "the negotiated version and its era")
	assert.Contains(t, out, "mcp__t__echo")
	assert.Contains(t, out, `Returns every attack.\x1b[2J\u202e`, "a description is shown escaped")
	assert.NotContains(t, out, "\x1b")
	assert.Equal(t, "connecting t…\nt: connected (3 tools)\n", run.ErrOut.String())

	run = world(t, testserver.ModeOK).Factory(t)
	opts = &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute, JSON: true}
	require.NoError(t, Run(context.Background(), opts))
	var got []view.ServerTools
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "2025-11-25", got[0].ProtocolVersion, "--json has the negotiated version")
	assert.Equal(t, "legacy", got[0].Era)
}

func TestRunLive(t *testing.T) {
	run := world(t, testserver.ModeOK).Factory(t)
	run.IO.SetStderrTTY(true)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute}
	require.NoError(t, Run(context.Background(), opts))
	assert.Equal(t, "t: connected (3 tools)\n", run.ErrOut.String(), "the live block leaves only the outcome")
	assert.Zero(t, run.Clock.Tickers(), "the redraw ticker is stopped")
}

func TestRunConnectTimeout(t *testing.T) {
	run := world(t, testserver.ModeHangInit).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: clock.Real(), ConnectTimeout: 200 * time.Millisecond, JSON: true}
	err := Run(context.Background(), opts)
	assert.ErrorIs(t, err, cmdutil.ErrSilent)
	// A stdio server that never answers initialize is one attempt (#25
	// item 7): Protocol, not retried.
	d, ok := cmdtest.TimedOutAfter(run.ErrOut.String(), `t: failed \(protocol connect_timeout\): `, ` \(--connect-timeout 200ms\)`)
	require.True(t, ok, run.ErrOut.String())
	assert.GreaterOrEqual(t, d, 200*time.Millisecond, "the attempt ran at least its limit")
	assert.NotContains(t, run.ErrOut.String(), "retrying")
	assert.Regexp(t, `"reason": "connect_timeout"`, run.Out.String())
}

func TestRunCancelled(t *testing.T) {
	run := world(t, testserver.ModeHangInit).Factory(t)
	ctx, cancel := context.WithCancel(context.Background())
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts) }()
	require.Eventually(t, func() bool { return run.ErrOut.String() != "" }, 10*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, cmdutil.ErrCancelled)
	case <-time.After(20 * time.Second):
		t.Fatal("tools did not end with its context")
	}
	assert.Empty(t, run.Out.String(), "nothing printed once interrupted")
}

// canary is a secret the definition passes to the exit mode's server
// through a ${VAR} stretch: it must appear in no output.
const canary = "canary-c4n4ry-5ecret-value-0123456789"

func exitWorld(t *testing.T) *cmdtest.World {
	return cmdtest.NewWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"t": {"command": ` + cmdtest.JSONString(cmdtest.Executable(t)) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeExit + `", "` + testserver.SecretEnv + `": "${CANARY}"}}}}`,
	}, "CANARY="+canary)
}

func TestRunSaysWhy(t *testing.T) {
	for _, js := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "json"}[js], func(t *testing.T) {
			run := exitWorld(t).Factory(t)
			opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute, JSON: js, ServerStderr: true}
			assert.ErrorIs(t, Run(context.Background(), opts), cmdutil.ErrSilent)
			out, errOut := run.Out.String(), run.ErrOut.String()
			if js {
				assert.Contains(t, out, `"reason": "server_exited"`)
				assert.Contains(t, out, `"exit": "exit status 3"`)
				assert.Regexp(t, `"program": ".+"`, out)
			} else {
				assert.Regexp(t, `(?m)^t: failed \(config server_exited\): exit status 3 — program \S+$`, out)
			}
			assert.Contains(t, errOut, "--- stderr of t (the server's own output, secrets masked) ---\n  fatal: missing API key\\x1b]0;pwned\\x07\n  token=")
			assert.Contains(t, errOut, "--- end of the stderr of t ---\n")
			assert.NotContains(t, out+errOut, canary)
			assert.NotContains(t, errOut, "\x1b")
		})
	}
}

func TestRunNoServerStderr(t *testing.T) {
	run := exitWorld(t).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute}
	assert.ErrorIs(t, Run(context.Background(), opts), cmdutil.ErrSilent)
	assert.NotContains(t, run.ErrOut.String(), "fatal:", "the server's stderr only on request")
}

func TestWriteTitleAndHints(t *testing.T) {
	yes, no := true, false
	rs := []composition.ServerStatus{{Name: "s", State: composition.StateConnected, Tools: []composition.ToolSummary{
		{ToolSpec: ports.ToolSpec{Name: "mcp__s__a", Title: "Tool A\x1b[2J", Description: "Does a.\nMore.",
			Annotations: &ports.ToolAnnotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}}, NameOnServer: "a"},
		{ToolSpec: ports.ToolSpec{Name: "mcp__s__b", Description: "Does b.", Annotations: &ports.ToolAnnotations{Title: "Annotated B"}}, NameOnServer: "b"},
		{ToolSpec: ports.ToolSpec{Name: "mcp__s__c", Annotations: &ports.ToolAnnotations{DestructiveHint: &yes}}, NameOnServer: "c"},
	}}}
	var b strings.Builder
	Write(&b, rs)
	assert.Equal(t, "s: connected\n"+
		"  mcp__s__a  s/a  Tool A\\x1b[2J: Does a. (hints: read-only, not destructive, idempotent, closed world)\n"+
		"  mcp__s__b  s/b  Annotated B: Does b.\n"+
		"  mcp__s__c  s/c  (hints: destructive)\n", b.String())

	j := view.ToServerTools(rs[0])
	assert.Equal(t, "Tool A\x1b[2J", j.Tools[0].Title, "JSON is exact")
	assert.Equal(t, &view.Hints{ReadOnly: &yes, Destructive: &no, Idempotent: &yes, OpenWorld: &no}, j.Tools[0].Hints)
	assert.Equal(t, "Annotated B", j.Tools[1].Title)
	assert.Nil(t, j.Tools[1].Hints, "a title alone declares no hint")
}
