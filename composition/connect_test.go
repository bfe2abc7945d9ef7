package composition

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// privateExample copies the example server into a directory of this test,
// so the processes running it can be told apart from other tests'.
func privateExample(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(exampleBinary(t))
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "example-server")
	require.NoError(t, os.WriteFile(bin, data, 0o700))
	return bin
}

// running counts the live processes whose executable is bin.
func running(bin string) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == bin {
			// A zombie has no exe link, so a match is a live process.
			n++
		}
	}
	return n
}

// statusLog records the statuses OnStatus reports.
type statusLog struct {
	mu  sync.Mutex
	got map[string][]supervisor.State
}

func (l *statusLog) on(name string, st supervisor.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]supervisor.State{}
	}
	l.got[name] = append(l.got[name], st.State)
}

func (l *statusLog) states(name string) []supervisor.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]supervisor.State(nil), l.got[name]...)
}

func result(t *testing.T, f *Fleet, name string) ServerStatus {
	t.Helper()
	for _, r := range f.Servers() {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no result for %s", name)
	return ServerStatus{}
}

func toolNames(r ServerStatus) []string {
	var out []string
	for _, ti := range r.Tools {
		out = append(out, ti.Name)
	}
	return out
}

// text returns the concatenated text items of a result's content.
func text(t *testing.T, res ports.ToolResult) string {
	t.Helper()
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal(res.Content, &items))
	var b strings.Builder
	for _, it := range items {
		if it.Type == "text" {
			b.WriteString(it.Text)
		}
	}
	return b.String()
}

// exerciseExample checks the catalog and calls of a connected "example".
func exerciseExample(t *testing.T, f *Fleet) {
	t.Helper()
	ctx := context.Background()
	ex := result(t, f, "example")
	require.Equal(t, StateConnected, ex.State, "class %v reason %s", ex.Class, ex.Reason)
	assert.Subset(t, toolNames(ex), []string{"mcp__example__echo", "mcp__example__add"})
	for _, ti := range ex.Tools {
		assert.Equal(t, catalog.ToolName("example", ti.NameOnServer), ti.Name)
		assert.NotEmpty(t, ti.InputSchema)
	}
	_, ok := f.Set().Tool("mcp__example__echo")
	assert.True(t, ok, "the Set holds the connected server's tools")

	res, err := f.CallServerTool(ctx, "example", "echo", json.RawMessage(`{"text":"hello from mcpward"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "hello from mcpward", text(t, res))

	res, err = f.CallServerTool(ctx, "example", "add", json.RawMessage(`{"a":2,"b":3.5}`))
	require.NoError(t, err)
	assert.Equal(t, "5.5", text(t, res))

	for _, args := range []string{`{"text":42}`, `{}`, `[1]`, `{"text":"x","extra":1}`} {
		_, err = f.CallServerTool(ctx, "example", "echo", json.RawMessage(args))
		var ae *catalog.ArgumentError
		require.ErrorAs(t, err, &ae, args)
		assert.Equal(t, refusal.Config, refusal.ClassOf(err))
		assert.Equal(t, catalog.ReasonInvalidArguments, refusal.ReasonOf(err))
	}
	// The session survived the refusals: nothing was sent.
	res, err = f.CallServerTool(ctx, "example", "echo", json.RawMessage(`{"text":"still here"}`))
	require.NoError(t, err)
	assert.Equal(t, "still here", text(t, res))

	_, err = f.CallServerTool(ctx, "example", "mcp__example__echo", nil)
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err), "a host-facing name is not a server tool name")
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	_, err = f.CallServerTool(ctx, "nope", "echo", nil)
	assert.Equal(t, ReasonUnknownServer, refusal.ReasonOf(err))
	_, err = f.CallServerTool(ctx, "legacy", "echo", nil)
	assert.Equal(t, ReasonServerUnavailable, refusal.ReasonOf(err), "a refused server is not connected")
	assert.Equal(t, refusal.Refused, refusal.ClassOf(err))
	var re *refusal.Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "legacy", re.Server)
	assert.Equal(t, "the server is refused ("+definition.RefusalTransportSSE+")", re.Detail)
}

// checkRefused: the refused and denied servers are shown with their
// reasons, the refused ones in the Set's rejected bucket, and never dialled.
func checkRefused(t *testing.T, r *rig, f *Fleet) {
	t.Helper()
	legacy := result(t, f, "legacy")
	assert.Equal(t, StateRefused, legacy.State)
	assert.Equal(t, definition.RefusalTransportSSE, legacy.Reason)
	assert.Equal(t, refusal.None, legacy.Class, "a server that was not usable has no failure class")
	oauth := result(t, f, "signin")
	assert.Equal(t, StateRefused, oauth.State)
	assert.Equal(t, ReasonOAuthSignInUnavailable, oauth.Reason)
	assert.Empty(t, oauth.Tools)
	proj := result(t, f, "proj")
	assert.Equal(t, StateDenied, proj.State, "a project server without approval is not connected")
	assert.Contains(t, f.Set().Rejected(), catalog.Rejected{Server: "signin", Kind: catalog.KindServer, Name: "signin", Reason: ReasonOAuthSignInUnavailable})
	assert.Contains(t, f.Set().Rejected(), catalog.Rejected{Server: "legacy", Kind: catalog.KindServer, Name: "legacy", Reason: definition.RefusalTransportSSE})
	for _, rj := range f.Set().Rejected() {
		assert.NotEqual(t, "proj", rj.Server, "a denied server is not a catalog rejection")
	}
	assert.Zero(t, r.dials.n.Load(), "a refused HTTP server is never dialled")
}

const refusedDocs = `
  "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
  "signin": {"type": "http", "url": "http://127.0.0.1:1/mcp", "oauth": {"clientId": "c"}}`

func projectSrc(bin string) definition.Source {
	b, _ := json.Marshal(bin)
	return definition.Source{Tier: ports.TierProject, Origin: "/ws/.mcp.json",
		Data: []byte(`{"mcpServers": {"proj": {"command": ` + string(b) + `}}}`)}
}

func TestConnectStdio(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"LANG": "C"})})
	b, _ := json.Marshal(bin)
	srcs := append(userSrc(`{"mcpServers": {"example": {"command": `+string(b)+`},`+refusedDocs+`}}`), projectSrc(bin))
	var log statusLog
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{OnStatus: log.on})
	t.Cleanup(func() { _ = f.Close() })

	assert.Equal(t, 1, running(bin), "one child: the denied project server was not started")
	exerciseExample(t, f)
	checkRefused(t, r, f)
	assert.Equal(t, []string{"example", "legacy", "proj", "signin"}, func() (n []string) {
		for _, s := range f.Servers() {
			n = append(n, s.Name)
		}
		return n
	}(), "every defined name has a result, sorted")
	st := log.states("example")
	require.NotEmpty(t, st)
	assert.Contains(t, st, supervisor.Connecting)
	assert.Equal(t, supervisor.Ready, st[len(st)-1])
	assert.Empty(t, log.states("legacy"), "no status for a server never connected")

	require.NoError(t, f.Close())
	assert.Zero(t, running(bin), "Close leaves no child process")
	require.NoError(t, f.Close(), "Close is idempotent")
	_, err := f.CallServerTool(context.Background(), "example", "echo", json.RawMessage(`{"text":"x"}`))
	assert.Error(t, err, "no call after Close")
}

// startHTTPExample starts the example server over HTTP on loopback and
// returns its URL.
func startHTTPExample(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-lines:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
		require.True(t, ok, "no listening line")
		return url
	case <-time.After(10 * time.Second):
		t.Fatal("no listening line within 10s")
		return ""
	}
}

func TestConnectHTTP(t *testing.T) {
	bin := privateExample(t)
	url := startHTTPExample(t, bin)
	r := newRig(t, Config{})
	srcs := append(userSrc(`{"mcpServers": {"example": {"type": "http", "url": "`+url+`"},`+refusedDocs+`}}`), projectSrc(bin))
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{Names: []string{"example", "legacy", "signin", "proj"}})
	t.Cleanup(func() { _ = f.Close() })
	exerciseExample(t, f)
	dials := r.dials.n.Load()
	assert.NotZero(t, dials)
	r.dials.n.Store(0)
	checkRefused(t, r, f)

	// An abandoned HTTP call keeps the session (Abort is a no-op).
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := f.CallServerTool(ctx, "example", "slow", json.RawMessage(`{"ms":5000}`))
	cancel()
	assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
	res, err := f.CallServerTool(context.Background(), "example", "echo", json.RawMessage(`{"text":"after"}`))
	require.NoError(t, err)
	assert.Equal(t, "after", text(t, res))
	require.NoError(t, f.Close())
	assert.Equal(t, 1, running(bin), "Close does not touch the server process")
}

func TestConnectNamesAndFailures(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {
	  "example": {"command": ` + string(b) + `},
	  "missing": {"command": "/nonexistent/mcp-server"}}}`)
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{Names: []string{"missing", "ghost", "missing"}})
	t.Cleanup(func() { _ = f.Close() })
	srv := f.Servers()
	require.Len(t, srv, 2, "names are deduplicated and only those named are considered")
	assert.Equal(t, "ghost", srv[0].Name)
	assert.Equal(t, StateUnknown, srv[0].State)
	assert.Equal(t, ReasonUnknownServer, srv[0].Reason)
	assert.Equal(t, "missing", srv[1].Name)
	assert.Equal(t, StateFailed, srv[1].State)
	assert.Equal(t, "program_not_found", srv[1].Reason)
	assert.Equal(t, "program_not_found", srv[1].Evaluation.Launch, "known at evaluation, without spawning")
	assert.NotEqual(t, refusal.Transient, srv[1].Class, "a missing program is not retried")
	assert.Contains(t, f.Set().Rejected(), catalog.Rejected{Server: "missing", Kind: catalog.KindServer, Name: "missing", Reason: srv[1].Reason})
	assert.Zero(t, running(bin), "an unnamed server is not started")
	_, err := f.CallServerTool(context.Background(), "missing", "echo", nil)
	assert.Error(t, err)
	assert.Empty(t, f.Set().Tools())
}

func TestConnectWithoutAuthorityRefusesStdio(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{})
	b, _ := json.Marshal(bin)
	f := r.host.Connect(context.Background(), userSrc(`{"mcpServers": {"example": {"command": `+string(b)+`}}}`), nil)
	defer f.Close()
	ex := result(t, f, "example")
	assert.Equal(t, StateFailed, ex.State)
	assert.Equal(t, refusal.Refused, ex.Class)
	assert.Equal(t, ReasonNoProcessAuthority, ex.Reason)
	assert.Zero(t, running(bin))
}

func TestConnectCancelled(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := r.host.Connect(ctx, userSrc(`{"mcpServers": {"a": {"command": `+string(b)+`}, "b": {"command": `+string(b)+`}}}`), &ConnectOptions{Parallel: 1})
	for _, s := range f.Servers() {
		assert.Equal(t, StateFailed, s.State)
		assert.Equal(t, refusal.Transient, s.Class)
	}
	require.NoError(t, f.Close())
	assert.Zero(t, running(bin))
}
