package composition

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports/portstest"
)

// diagServer builds ./internal/diagserver once and returns its path.
var diagServer = sync.OnceValues(func() (string, error) {
	dir := exampleDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "diagserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/diagserver").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the diag server: %v\n%s", err, out)
	}
	return bin, nil
})

func diagBinary(t *testing.T) string {
	t.Helper()
	bin, err := diagServer()
	require.NoError(t, err)
	return bin
}

// fastRetries retries three times, quickly, and bounds each attempt.
func fastRetries() *supervisor.Options {
	return &supervisor.Options{MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond, ConnectTimeout: 10 * time.Second}
}

// attempts counts the connect attempts OnStatus saw for name: the changes
// into Connecting.
func attempts(l *statusLog, name string) int {
	n := 0
	states := l.states(name)
	for i, s := range states {
		if s == supervisor.Connecting && (i == 0 || states[i-1] != supervisor.Connecting) {
			n++
		}
	}
	return n
}

// spawns counts the starts the diag server recorded in marker.
func spawns(t *testing.T, marker string) int {
	t.Helper()
	b, err := os.ReadFile(marker)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "start\n")
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// stdioDoc is the user document of one stdio server "s" running command
// with args (and env, a JSON object, when not empty).
func stdioDoc(command string, args []string, env string) []definition.Source {
	extra := ""
	if args != nil {
		a, _ := json.Marshal(args)
		extra += `, "args": ` + string(a)
	}
	if env != "" {
		extra += `, "env": ` + env
	}
	return userSrc(`{"mcpServers": {"s": {"command": ` + jsonString(command) + extra + `}}}`)
}

// TestStdioFailureClasses runs a real child for every way a stdio server
// fails and checks what Connect makes of it: the Class (only Transient is
// retried, so anything else is spawned exactly once), the Reason and the
// FailureDetail.
func TestStdioFailureClasses(t *testing.T) {
	bin := diagBinary(t)
	notExec := filepath.Join(t.TempDir(), "not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o600))
	tests := []struct {
		name     string
		command  string
		args     []string
		stdio    *stdiotransport.Options
		timeout  time.Duration // the supervisor's ConnectTimeout, when not 0 (supervisor.NoTimeout: none)
		class    refusal.Class
		reason   string
		attempts int
		exit     string // "-" means not checked
		program  string
	}{
		{name: "program not found", command: "mcpward-no-such-program", class: refusal.Config, reason: "program_not_found", attempts: 1, program: "mcpward-no-such-program"},
		{name: "program not executable", command: notExec, class: refusal.Config, reason: "program_not_executable", attempts: 1},
		{name: "exit with a status before initialize", args: []string{"-mode", "env-exit", "-code", "3"}, class: refusal.Config, reason: ReasonServerExited, attempts: 1, exit: "exit status 3"},
		{name: "exit 0 before initialize", args: []string{"-mode", "env-exit", "-code", "0"}, class: refusal.Config, reason: ReasonServerExited, attempts: 1, exit: "-"},
		{name: "killed by a signal during initialize", args: []string{"-mode", "signal"}, class: refusal.Config, reason: ReasonServerExited, attempts: 1, exit: "signal: killed"},
		{name: "stdout closed during initialize", args: []string{"-mode", "closeout"}, class: refusal.Config, reason: ReasonServerExited, attempts: 1},
		// The endless lines run without a connect timeout: the child
		// writes until it is stopped, so the receive cap always ends the
		// attempt, however long a loaded machine takes to read 16 MiB
		// (with fastRetries' 10 s the timeout could win the race).
		{name: "endless line that is no json", args: []string{"-mode", "endless"}, timeout: supervisor.NoTimeout,
			class: refusal.Protocol, reason: "receive_cap_exceeded", attempts: 1},
		{name: "endless line over the receive cap", args: []string{"-mode", "endless-json"}, stdio: &stdiotransport.Options{MaxLineLength: 1 << 20},
			timeout: supervisor.NoTimeout, class: refusal.Protocol, reason: "receive_cap_exceeded", attempts: 1},
		{name: "endless line over the default receive cap", args: []string{"-mode", "endless-json"}, timeout: supervisor.NoTimeout,
			class: refusal.Protocol, reason: "receive_cap_exceeded", attempts: 1},
		{name: "a line that is not json", args: []string{"-mode", "garbage"}, class: refusal.Protocol, reason: "malformed_message", attempts: 1},
		{name: "json that is not json-rpc", args: []string{"-mode", "notrpc"}, class: refusal.Protocol, reason: "malformed_message", attempts: 1},
		{name: "no answer to initialize", args: []string{"-mode", "silent"}, timeout: 300 * time.Millisecond,
			// One attempt (#25 item 7): the same program started again
			// would be as silent.
			class: refusal.Protocol, reason: supervisor.ReasonConnectTimeout, attempts: 1, exit: ""},
		{name: "wrong protocol version", args: []string{"-mode", "badversion", "-version", "1999-01-01"}, class: refusal.Protocol, reason: "protocol_version_refused", attempts: 1},
		{name: "a modern version through initialize", args: []string{"-mode", "badversion", "-version", "2026-07-28"}, class: refusal.Protocol, reason: "protocol_era_mismatch", attempts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			command, spawned := tc.command, 0
			marker := filepath.Join(t.TempDir(), "starts")
			if command == "" {
				command, spawned = bin, 1
				tc.args = append([]string{"-marker", marker}, tc.args...)
			}
			if tc.program == "" {
				tc.program = command
			}
			r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"PATH": "/usr/bin:/bin"}), Stdio: tc.stdio})
			var log statusLog
			sopts := fastRetries()
			if tc.timeout != 0 {
				sopts.ConnectTimeout = tc.timeout
			}
			f := r.host.Connect(context.Background(), stdioDoc(command, tc.args, ""), &ConnectOptions{OnStatus: log.on, Supervisor: sopts})
			t.Cleanup(func() { _ = f.Close() })
			res := result(t, f, "s")
			require.Equal(t, StateFailed, res.State)
			assert.Equal(t, tc.class.String(), res.Class.String(), "class of %s", res.Reason)
			assert.Contains(t, strings.Split(tc.reason, "|"), res.Reason)
			assert.Equal(t, tc.attempts, attempts(&log, "s"), "attempts (only Transient is retried): %v", log.states("s"))
			if tc.class != refusal.Transient {
				assert.Equal(t, spawned, spawns(t, marker), "spawned once at most")
			} else {
				assert.Equal(t, tc.attempts, spawns(t, marker), "spawned for every attempt")
			}
			assert.Equal(t, tc.program, res.Detail.Program)
			if tc.exit != "-" {
				assert.Equal(t, tc.exit, res.Detail.Exit)
			}
			assert.Empty(t, res.Detail.Endpoint)
			assert.Empty(t, res.Detail.Cause)
		})
	}
}

// TestStdioCrashAfterHealthyStart: a server that exits after a healthy
// start fails the call in flight with a Transient refusal (a new process
// may well run) and is reconnected.
func TestStdioCrashAfterHealthyStart(t *testing.T) {
	bin := diagBinary(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	var log statusLog
	f := r.host.Connect(context.Background(), stdioDoc(bin, nil, ""), &ConnectOptions{OnStatus: log.on, Supervisor: fastRetries()})
	t.Cleanup(func() { _ = f.Close() })
	require.Equal(t, StateConnected, result(t, f, "s").State)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := f.CallServerTool(ctx, "s", "crash", json.RawMessage(`{}`))
	require.Error(t, err)
	assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
	// The call sees the peer go away, or (when the supervisor noticed the
	// end of the session first and closed it) the session closed: both are
	// the crash, and which comes first is a race.
	assert.Contains(t, []string{ReasonConnectionClosed, "session_closed"}, refusal.ReasonOf(err))
	// Reconnected: a second attempt, and Ready again (the new child is the
	// latest; at the second attempt's start it may not be dialled yet).
	assert.Eventually(t, func() bool {
		return attempts(&log, "s") == 2 && result(t, f, "s").State == StateConnected
	}, 10*time.Second, 10*time.Millisecond, "reconnected")
	stderr, ok := f.ServerStderr("s")
	assert.True(t, ok)
	assert.NotContains(t, stderr, "crashing on purpose", "the tail is the latest child's, which did not crash")
}

// okResolver resolves every name to 127.0.0.1; noHost resolves none.
type okResolver struct{}

func (okResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

type noHost struct{}

func (noHost) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestHTTPFailureClasses runs real httptest peers for the ways an HTTP
// server fails and checks Class, Reason, the retries and FailureDetail's
// Endpoint and Cause.
func TestHTTPFailureClasses(t *testing.T) {
	status := func(code int) string {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(ts.Close)
		return ts.URL + "/mcp"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	hostPort := func(u string) string {
		return strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(u, "/mcp"), "http://"), "https://")
	}

	tests := []struct {
		name     string
		url      string
		cfg      Config
		class    refusal.Class
		reason   string
		attempts int
		endpoint string
		cause    string
	}{
		{name: "connection refused", url: "http://" + closed + "/mcp", class: refusal.Transient, reason: httptransport.ReasonNetwork, attempts: 3, endpoint: closed, cause: CauseRefused},
		{name: "dns failure", url: "https://mcp.example.com/mcp", cfg: Config{HTTP: &httptransport.Options{Resolver: noHost{}}},
			class: refusal.Transient, reason: httptransport.ReasonNetwork, attempts: 3, endpoint: "mcp.example.com:443", cause: CauseDNS},
		{name: "tls failure", url: tlsSrv.URL + "/mcp", cfg: Config{Egress: portstest.AllowAllEgress()},
			class: refusal.Refused, reason: httptransport.ReasonTLS, attempts: 1, endpoint: hostPort(tlsSrv.URL), cause: CauseTLS},
		{name: "503", url: status(503), class: refusal.Transient, reason: httptransport.ReasonHTTPStatus, attempts: 3},
		{name: "429", url: status(429), class: refusal.Transient, reason: httptransport.ReasonHTTPStatus, attempts: 3},
		{name: "404", url: status(404), class: refusal.Refused, reason: httptransport.ReasonHTTPStatus, attempts: 1},
		{name: "401", url: status(401), class: refusal.AuthRequired, reason: httptransport.ReasonAuthRequired, attempts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.endpoint == "" {
				tc.endpoint = hostPort(tc.url)
			}
			r := newRig(t, tc.cfg)
			var log statusLog
			srcs := userSrc(`{"mcpServers": {"s": {"type": "http", "url": ` + jsonString(tc.url) + `}}}`)
			f := r.host.Connect(context.Background(), srcs, &ConnectOptions{OnStatus: log.on, Supervisor: fastRetries()})
			t.Cleanup(func() { _ = f.Close() })
			res := result(t, f, "s")
			require.Equal(t, StateFailed, res.State)
			assert.Equal(t, tc.class.String(), res.Class.String(), "class of %s", res.Reason)
			assert.Equal(t, tc.reason, res.Reason)
			assert.Equal(t, tc.attempts, attempts(&log, "s"), "attempts (only Transient is retried)")
			want := FailureDetail{Endpoint: tc.endpoint, Cause: tc.cause}
			if tc.reason == httptransport.ReasonHTTPStatus {
				// The status that ended the attempt (#25 item 7).
				want.Status = res.Detail.Status
				assert.GreaterOrEqual(t, want.Status, 400)
			}
			assert.Equal(t, want, res.Detail)
			_, ok := f.ServerStderr("s")
			assert.False(t, ok, "an HTTP server has no stderr")
		})
	}
}

// TestFailureDetailProgramIsMasked: the program of a failed server is
// shown as the projection shows it, never with a secret's value: a
// literal credential in its path is masked, and a credential-shaped
// variable never reaches the command at all (refused by name, issue 22).
func TestFailureDetailProgramIsMasked(t *testing.T) {
	const secretValue = "cnry-path-secret-123"
	const literal = "ghp_0123456789abcdefghijABCDEFGH"
	r := newRig(t, Config{
		Authority: NewRootAuthority(t.TempDir(), nil),
		Lookup: func(name string) (string, bool) {
			if name == "DEPLOY_TOKEN" {
				return secretValue, true
			}
			return "", false
		},
	})
	f := r.host.Connect(context.Background(), stdioDoc("/opt/"+literal+"/server", nil, ""), &ConnectOptions{Supervisor: fastRetries()})
	t.Cleanup(func() { _ = f.Close() })
	res := result(t, f, "s")
	require.Equal(t, "program_not_found", res.Reason)
	assert.Equal(t, "/opt/"+secret.Redacted+"/server", res.Detail.Program)
	assert.Equal(t, res.Evaluation.Projection.Command, res.Detail.Program, "exactly the projection's")
	b, err := json.Marshal(f.Servers())
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(b), literal), "a ServerStatus carries the literal")

	f2 := r.host.Connect(context.Background(), stdioDoc("/opt/${DEPLOY_TOKEN}/server", nil, ""), &ConnectOptions{Supervisor: fastRetries()})
	t.Cleanup(func() { _ = f2.Close() })
	res = result(t, f2, "s")
	assert.Equal(t, definition.RefusalSecretInCommand, res.Evaluation.Reason)
	b, err = json.Marshal(f2.Servers())
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(b), secretValue), "a ServerStatus carries the secret")
}

func TestEndpointOf(t *testing.T) {
	tests := map[string]string{
		"https://example.com/mcp?token=x":          "example.com:443",
		"http://127.0.0.1/mcp":                     "127.0.0.1:80",
		"http://[::1]:8080/":                       "[::1]:8080",
		"https://u:p@h.example:9/x":                "h.example:9",
		"ftp://example.com/":                       "",
		"not a url":                                "",
		"https://h.example/<redacted:TOKEN>/x":     "h.example:443",
		"https://" + secret.RedactedVar("H") + "/": "",
	}
	for in, want := range tests {
		assert.Equal(t, want, endpointOf(in), in)
	}
}

// TestServerStderrCanary: a real server that prints its whole environment
// and argv to stderr, then exits with status 3. What ServerStderr hands out
// carries none of the definition's secret values — values under
// credential-shaped env keys, what credential-shaped variables expanded to
// (also line by line), literal credential shapes — and neither does any
// error or ServerStatus; the rest of the output is kept.
func TestServerStderrCanary(t *testing.T) {
	bin := diagBinary(t)
	const (
		keyValue  = "cnry-key-value-7f3a"                         // literal, under API_TOKEN
		ghToken   = "ghp_cnryAAAAbbbbCCCCddddEEEEffffGGGG1234"    // ${GH_TOKEN}, under GITHUB_TOKEN
		passValue = "cnry-pass-b81d"                              // ${SERVICE_PASSWORD} inside CONFIG_URL
		argKey    = "cnry-arg-api-key-19e2"                       // ${MY_API_KEY} in argv
		skLiteral = "sk-cnryproj1234567890abcdefghijklmnopqrstuv" // a literal credential shape in argv
		lineOne   = "cnry-line-one-5d0c"                          // ${PRIVATE_KEY}, two lines,
		lineTwo   = "cnry-line-two-e4a9"                          // under SSH_PRIVATE_KEY
	)
	vars := map[string]string{"GH_TOKEN": ghToken, "SERVICE_PASSWORD": passValue, "MY_API_KEY": argKey, "PRIVATE_KEY": lineOne + "\n" + lineTwo}
	r := newRig(t, Config{
		Authority: NewRootAuthority(t.TempDir(), map[string]string{"PATH": "/usr/bin:/bin"}),
		Lookup:    func(name string) (string, bool) { v, ok := vars[name]; return v, ok },
	})
	env := `{"API_TOKEN": "` + keyValue + `", "GITHUB_TOKEN": "${GH_TOKEN}", "CONFIG_URL": "https://db.example/?p=${SERVICE_PASSWORD}",
		"SSH_PRIVATE_KEY": "${PRIVATE_KEY}", "PLAIN": "visible-plain-value"}`
	args := []string{"-mode", "env-exit", "-code", "3", "-stderr", "fatal: missing API key", "--",
		"--api-key=${MY_API_KEY}", "key:${MY_API_KEY}", skLiteral}
	f := r.host.Connect(context.Background(), stdioDoc(bin, args, env), &ConnectOptions{Supervisor: fastRetries()})
	t.Cleanup(func() { _ = f.Close() })

	res := result(t, f, "s")
	require.Equal(t, StateFailed, res.State)
	assert.Equal(t, ReasonServerExited, res.Reason)
	assert.Equal(t, "exit status 3", res.Detail.Exit)

	stderr, ok := f.ServerStderr("s")
	require.True(t, ok)
	for _, kept := range []string{"fatal: missing API key", "PLAIN=visible-plain-value", "API_TOKEN=" + secret.Redacted,
		"CONFIG_URL=https://db.example/?p=" + secret.RedactedVar("SERVICE_PASSWORD"), "key:" + secret.RedactedVar("MY_API_KEY")} {
		// (the text itself is never printed: it may hold a secret)
		assert.True(t, strings.Contains(stderr, kept), "ServerStderr lacks %q", kept)
	}
	_, err := f.CallServerTool(context.Background(), "s", "echo", json.RawMessage(`{}`))
	require.Error(t, err)
	results, merr := json.Marshal(f.Servers())
	require.NoError(t, merr)
	shown := map[string]string{
		"ServerStderr":        stderr,
		"the call's error":    err.Error(),
		"ServerResult (json)": string(results),
		"ServerResult (%+v)":  fmt.Sprintf("%+v", f.Servers()),
	}
	for where, text := range shown {
		for i, v := range []string{keyValue, ghToken, passValue, argKey, skLiteral, lineOne, lineTwo, "cnry"} {
			assert.False(t, strings.Contains(text, v), "%s carries secret #%d", where, i)
		}
	}
}

// TestSecretMask: every form of every secret value goes, overlapping
// occurrences become one marker, and literal shapes are masked after.
func TestSecretMask(t *testing.T) {
	m, err := definition.Materialize(&definition.Definition{
		Name: "s", Kind: definition.KindStdio, Command: "srv",
		Args: []string{"--token=${TOKEN}", "${PLAIN}", "--api-key", "literal-argv-key-42"},
		Env:  map[string]string{"DB_PASSWORD": "p@ss w\"rd", "SHORTER": "x${TOKEN}"},
	}, func(n string) (string, bool) {
		return map[string]string{"TOKEN": "tok-123-abc", "PLAIN": "not-secret"}[n], true
	})
	require.NoError(t, err)
	mask := newSecretMask(m)
	tests := map[string]string{
		"as is":             "got tok-123-abc here",
		"json-escaped":      `{"DB_PASSWORD":"p@ss w\"rd"}`,
		"query-escaped":     "https://h/?pw=p%40ss+w%22rd",
		"path-escaped":      "https://h/p@ss%20w%22rd/",
		"overlapping":       "tok-123-abctok-123-abc",
		"not secret stays":  "not-secret",
		"literal shape too": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
		"argv after a flag": "argv[3]=literal-argv-key-42",
	}
	for name, in := range tests {
		out := mask.apply(in)
		for i, v := range []string{"tok-123-abc", "p@ss", "w\"rd", "p%40ss", "ghp_0123", "literal-argv-key-42"} {
			assert.False(t, strings.Contains(out, v), "%s: secret #%d remains", name, i)
		}
		if name == "not secret stays" {
			assert.Equal(t, in, out)
		}
	}
	assert.Equal(t, secret.RedactedVar("TOKEN"), mask.apply("tok-123-abctok-123-abc")[:len(secret.RedactedVar("TOKEN"))])
	assert.Equal(t, "plain", secretMask(nil).apply("plain"))
}

// TestDialInstallsInboundFilter: both transports get mcpsession's inbound
// gate; over stdio, what it refuses never reaches the SDK, and a Fleet
// goes through a flood of notifications.
func TestDialInstallsInboundFilter(t *testing.T) {
	bin := diagBinary(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	_, tg := r.evalTarget(t, stdioDoc(bin, nil, ""), "s")
	conn, err := r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	require.NotNil(t, conn.InboundFilter)
	var judged, logged atomic.Int64
	conn.InboundFilter(func(m string, _ bool) bool { judged.Add(1); return m != "notifications/message" })
	c := mcp.NewClient(&mcp.Implementation{Name: "composition-test", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { logged.Add(1) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, conn.Transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "flood", Arguments: map[string]any{"n": 1000}})
	require.NoError(t, err)
	require.NoError(t, cs.Close())
	conn.Release()
	assert.EqualValues(t, 2000, judged.Load())
	assert.Zero(t, logged.Load(), "refused notifications never reach the SDK")

	p := newPeer(t)
	_, tg = r.evalTarget(t, userSrc(`{"mcpServers": {"web": {"type": "http", "url": "`+p.URL+`/mcp"}}}`), "web")
	conn, err = r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	require.NotNil(t, conn.InboundFilter)
	_, ok := conn.Transport.(*httptransport.Transport)
	assert.True(t, ok, "the transport is httptransport's, which filters")

	f := r.host.Connect(context.Background(), stdioDoc(bin, nil, ""), &ConnectOptions{Supervisor: fastRetries()})
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.CallServerTool(ctx, "s", "flood", json.RawMessage(`{"n":20000}`))
	require.NoError(t, err)
	res, err := f.CallServerTool(ctx, "s", "echo", json.RawMessage(`{"text":"after the flood"}`))
	require.NoError(t, err)
	assert.Equal(t, "after the flood", text(t, res))
}
