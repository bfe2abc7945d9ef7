package call

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/ports"
)

func TestMain(m *testing.M) {
	testserver.Main()
	os.Exit(m.Run())
}

func TestNewCmdCall(t *testing.T) {
	def := fleet.Timeouts{Connect: fleet.DefaultConnectTimeout, Call: fleet.DefaultCallTimeout}
	tests := []struct {
		name     string
		args     []string
		want     Options
		usage    string
		wantJSON bool
	}{
		{name: "defaults", args: []string{"s", "t"}, want: Options{Server: "s", Tool: "t", Timeouts: def}},
		{name: "args and json", args: []string{"--json", "s", "t", "--args", `{"a":1}`}, wantJSON: true,
			want: Options{Server: "s", Tool: "t", Args: `{"a":1}`, Timeouts: def}},
		{name: "timeouts", args: []string{"s", "t", "--connect-timeout", "5s", "--call-timeout=0"},
			want: Options{Server: "s", Tool: "t", Timeouts: fleet.Timeouts{Connect: 5 * time.Second}}},
		{name: "missing tool", args: []string{"s"}, usage: "call takes SERVER TOOL, or one argument SERVER/TOOL or mcp__SERVER__TOOL"},
		{name: "server/tool", args: []string{"s/t"}, want: Options{Tool: "s/t", Timeouts: def}},
		{name: "host-facing name", args: []string{"mcp__s__t"}, want: Options{Tool: "mcp__s__t", Timeouts: def}},
		{name: "three arguments", args: []string{"s", "t", "u"}, usage: "call takes 2 argument(s), got 3"},
		{name: "bad call timeout", args: []string{"s", "t", "--call-timeout", "forever"}, usage: "invalid value for --call-timeout"},
		{name: "args needs a value", args: []string{"s", "t", "--args"}, usage: "--args needs a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := cmdtest.NewWorld(t, nil).Factory(t)
			var got *Options
			err := cmdtest.Execute(run.F, NewCmdCall(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), tt.args...)
			if tt.usage != "" {
				assert.True(t, cmdutil.IsUsage(err), "%v", err)
				assert.ErrorContains(t, err, tt.usage)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantJSON, got.JSON)
			assert.Equal(t, tt.want.Server, got.Server)
			assert.Equal(t, tt.want.Tool, got.Tool)
			assert.Equal(t, tt.want.Args, got.Args)
			assert.Equal(t, tt.want.Timeouts, got.Timeouts)
		})
	}
}

// world defines the test server as the user's servers "t" (mode) and
// "other" (ok, creating the file other.started when started).
func world(t *testing.T, mode string) *cmdtest.World {
	exe := cmdtest.JSONString(cmdtest.Executable(t))
	w := cmdtest.NewWorld(t, nil)
	w.Write(t, "config/mcpward/mcp.json", `{"mcpServers": {
  "t": {"command": `+exe+`, "env": {"`+testserver.Env+`": "`+mode+`"}},
  "other": {"command": `+exe+`, "env": {"`+testserver.Env+`": "ok", "`+testserver.MarkEnv+`": `+
		cmdtest.JSONString(filepath.Join(w.Root, "other.started"))+`}}
}}`)
	return w
}

func TestRunEcho(t *testing.T) {
	w := world(t, testserver.ModeOK)
	run := w.Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", Tool: "echo", Args: `{"text":"hello"}`,
		Timeouts: fleet.Timeouts{Connect: time.Minute, Call: time.Minute}}
	require.NoError(t, Run(context.Background(), opts))
	assert.Equal(t, "hello\n", run.Out.String())
	assert.Empty(t, run.ErrOut.String(), "a quick call says nothing on stderr")
	assert.NoFileExists(t, filepath.Join(w.Root, "other.started"), "call connects only the server named")
}

// TestRunArgumentErrorSaysWhatWasExpected: a refused argument names its
// path and what was expected in the note, never the value.
func TestRunArgumentErrorSaysWhatWasExpected(t *testing.T) {
	run := world(t, testserver.ModeOK).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", Tool: "echo", Args: `{"text":12345678}`,
		Timeouts: fleet.Timeouts{Connect: time.Minute, Call: time.Minute}}
	err := Run(context.Background(), opts)
	// The path is in the refusal's Detail (#25 item 6): no second line.
	var noted *cmdutil.NotedError
	assert.False(t, errors.As(err, &noted))
	assert.Contains(t, err.Error(), "/text: type: expected string, got number")
	assert.Equal(t, catalog.ReasonInvalidArguments, refusal.ReasonOf(err))
	assert.NotContains(t, err.Error(), "12345678")
}

// TestRunAttacks: every terminal attack a result can carry is shown
// escaped, never interpreted, in text; --json keeps it exact.
func TestRunAttacks(t *testing.T) {
	w := world(t, testserver.ModeOK)
	run := w.Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", Tool: "attack"}
	require.NoError(t, Run(context.Background(), opts))
	out := run.Out.String()
	for i := 0; i < len(out); i++ {
		require.False(t, out[i] < 0x20 && out[i] != '\n' || out[i] == 0x7f, "byte %#x in %q", out[i], out)
	}
	for _, r := range out {
		require.False(t, r != '\n' && termsafe.Unsafe(r), "rune %U in %q", r, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, line := range lines {
		assert.False(t, i > 0 && strings.HasPrefix(line, "mcpward"), "line %d passes for mcpward's own: %q", i, out)
	}
	var want []string
	for _, name := range testserver.AttackNames() {
		want = append(want, termsafe.Text(testserver.Attacks[name]))
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.ReplaceAll(strings.TrimSuffix(out, "\n"), "\n"+Indent, "\n"),
		"each attack shown escaped, nothing else changed")

	run = w.Factory(t)
	opts.IO, opts.App, opts.JSON = run.IO, run.F.App, true
	require.NoError(t, Run(context.Background(), opts))
	var got view.Call
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	var items []struct{ Text string }
	require.NoError(t, json.Unmarshal(got.Content, &items))
	require.Len(t, items, len(testserver.Attacks))
	for i, name := range testserver.AttackNames() {
		assert.Equal(t, testserver.Attacks[name], items[i].Text, "JSON is exact: %s", name)
	}
	for _, r := range run.Out.String() {
		require.False(t, r != '\n' && termsafe.Unsafe(r), "rune %U in JSON output", r)
	}
}

func TestWriteContent(t *testing.T) {
	text := func(s string) ports.ContentBlock { return ports.ContentBlock{Kind: ports.ContentText, Text: s} }
	tests := []struct {
		name string
		res  ports.ToolResult
		want string
	}{
		{"one line", ports.ToolResult{Blocks: []ports.ContentBlock{text("hi")}}, "hi\n"},
		{"lines indented", ports.ToolResult{Blocks: []ports.ContentBlock{text("a\nb\n\nc")}}, "a\n  b\n\n  c\n"},
		{"image between texts", ports.ToolResult{Blocks: []ports.ContentBlock{text("a"),
			{Kind: ports.ContentImage, MIMEType: "image/png", Data: make([]byte, 1234)}, text("mcpward: fake")}},
			"a\n  [image image/png, 1234 bytes]\n  mcpward: fake\n"},
		{"audio without a MIME type", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentAudio, Data: []byte{}}}}, "[audio, 0 bytes]\n"},
		{"hostile MIME type", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentImage, MIMEType: "image/\x1b[2J", Data: []byte{1}}}},
			"[image image/\\x1b[2J, 1 bytes]\n"},
		{"resource link", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentResourceLink, URI: "file:///a", Name: "A\u202e"}}},
			"[resource link A\\u202e: file:///a]\n"},
		{"embedded text resource", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentResource, URI: "x:1", Text: "one\ntwo"}}},
			"[resource x:1]\n  one\n  two\n"},
		{"embedded blob", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentResource, URI: "x:2", MIMEType: "application/zip", Data: []byte{1, 2}}}},
			"[resource x:2 application/zip, 2 bytes]\n"},
		{"cr", ports.ToolResult{Blocks: []ports.ContentBlock{text("ok\r\nmcpward: x")}}, "ok\\r\n  mcpward: x\n"},
		{"odd kind", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: "\u001b[2J"}}}, "[\\x1b[2J content]\n"},
		{"structured content as JSON", ports.ToolResult{Blocks: []ports.ContentBlock{text("t")},
			StructuredContent: json.RawMessage(`{"a":1,"s":"\u009b31m\u001b"}`)},
			"t\n  [structured content]\n  {\n    \"a\": 1,\n    \"s\": \"\\u009b31m\\u001b\"\n  }\n"},
		// The same value in a text block: not repeated (#25 item 8).
		{"structured content that the text holds", ports.ToolResult{Blocks: []ports.ContentBlock{text(`{ "s": "x", "a": 1.0 }`)},
			StructuredContent: json.RawMessage(`{"a":1,"s":"x"}`)},
			"{ \"s\": \"x\", \"a\": 1.0 }\n"},
		{"structured content that differs from the text", ports.ToolResult{Blocks: []ports.ContentBlock{text(`{"a":2}`)},
			StructuredContent: json.RawMessage(`{"a":1}`)},
			"{\"a\":2}\n  [structured content]\n  {\n    \"a\": 1\n  }\n"},
		{"nothing", ports.ToolResult{Content: json.RawMessage(`[]`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			WriteContent(&b, tt.res)
			assert.Equal(t, tt.want, b.String())
			for _, r := range b.String() {
				require.False(t, r != '\n' && termsafe.Unsafe(r), "rune %U in the output", r)
			}
		})
	}
}

func TestRunCallTimeout(t *testing.T) {
	run := world(t, testserver.ModeHangCall).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: clock.Real(), Server: "t", Tool: "wait",
		Timeouts: fleet.Timeouts{Connect: time.Minute, Call: 300 * time.Millisecond}}
	err := Run(context.Background(), opts)
	var noted *cmdutil.NotedError
	require.ErrorAs(t, err, &noted)
	d, ok := cmdtest.TimedOutAfter(noted.Note, `^`, ` \(--call-timeout 300ms\)$`)
	require.True(t, ok, noted.Note)
	assert.GreaterOrEqual(t, d, 300*time.Millisecond, "the call ran at least its limit")
	assert.Equal(t, fleet.ReasonCallTimeout, refusal.ReasonOf(err), "the supervisor's own word, not a context deadline")
}

func TestRunStillWaiting(t *testing.T) {
	run := world(t, testserver.ModeHangCall).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", Tool: "wait",
		Timeouts: fleet.Timeouts{Connect: time.Minute}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts) }()
	require.Eventually(t, func() bool {
		run.Clock.Advance(time.Second)
		return strings.Contains(run.ErrOut.String(), "still waiting for t/wait (")
	}, 20*time.Second, 20*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, cmdutil.ErrCancelled)
	case <-time.After(20 * time.Second):
		t.Fatal("call did not end with its context")
	}
	assert.Empty(t, run.Out.String())
}

func TestRunNotConnected(t *testing.T) {
	run := world(t, testserver.ModeOK).Factory(t)
	err := Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "ghost", Tool: "x"})
	assert.ErrorContains(t, err, "unknown_server")
}

// TestRunSaysWhy: a server that exits before initialize fails the call
// with its exit status and program in the note (text) and the error's
// "failure" object (--json); --server-stderr shows its masked stderr
// under a heading, escaped, without the secret it printed.
func TestRunSaysWhy(t *testing.T) {
	const canary = "canary-c4n4ry-5ecret-value-0123456789"
	w := cmdtest.NewWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"t": {"command": ` + cmdtest.JSONString(cmdtest.Executable(t)) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeExit + `", "` + testserver.SecretEnv + `": "${CANARY}"}}}}`,
	}, "CANARY="+canary)
	run := w.Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", Tool: "echo", ServerStderr: true,
		Timeouts: fleet.Timeouts{Connect: time.Minute, Call: time.Minute}}
	err := Run(context.Background(), opts)
	var noted *cmdutil.NotedError
	require.ErrorAs(t, err, &noted)
	assert.Regexp(t, `^t: exit status 3 — program \S+$`, noted.Note)
	assert.Equal(t, "server_exited", refusal.ReasonOf(err))
	e := view.ErrorOf(err)
	require.NotNil(t, e.Failure)
	assert.Equal(t, "exit status 3", e.Failure.Exit)
	assert.NotEmpty(t, e.Failure.Program)
	errOut := run.ErrOut.String()
	assert.Contains(t, errOut, "--- stderr of t (the server's own output, secrets masked) ---\n  fatal: missing API key\\x1b]0;pwned\\x07\n")
	assert.NotContains(t, errOut, canary)
	assert.NotContains(t, errOut, "\x1b")
	assert.Empty(t, run.Out.String())
}
