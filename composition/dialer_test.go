package composition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// The tests of this file run real peers: an in-process go-sdk server over
// httptest on loopback, and the example server of ../examples as a child.
// Every HTTP test goes through core/egress's default policy (http to
// loopback only), and a counting dialer proves what was never dialled.

// exampleDir is where the example server is built: one directory per test
// process, which TestMain (host_test.go) removes.
func exampleDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("composition-example-%d", os.Getpid()))
}

// exampleServer builds ../examples/server once and returns its path.
var exampleServer = sync.OnceValues(func() (string, error) {
	dir := exampleDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "example-server")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "examples", "server")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the example server: %v\n%s", err, out)
	}
	return bin, nil
})

func exampleBinary(t *testing.T) string {
	t.Helper()
	bin, err := exampleServer()
	require.NoError(t, err)
	return bin
}

// countingDialer counts the connections the HTTP transport makes.
type countingDialer struct {
	n atomic.Int64
	d net.Dialer
}

func (c *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.n.Add(1)
	return c.d.DialContext(ctx, network, addr)
}

// peer is an in-process go-sdk server with an echo tool, over httptest on
// 127.0.0.1, recording the headers of every request it gets.
type peer struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "peer", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	p := &peer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.headers = append(p.headers, r.Header.Clone())
		p.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// seen returns the values of header name over every request so far.
func (p *peer) seen(name string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, h := range p.headers {
		out = append(out, h.Values(name)...)
	}
	return out
}

func (p *peer) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.headers)
}

// rig is a Host on fakes with a counting HTTP dialer.
type rig struct {
	host  *Host
	dials *countingDialer
	audit *portstest.AuditLog
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	r := &rig{dials: &countingDialer{}, audit: portstest.NewAuditLog()}
	if cfg.HTTP == nil {
		cfg.HTTP = &httptransport.Options{}
	}
	opts := *cfg.HTTP
	opts.Dialer = r.dials
	opts.MaxRetries = -1
	cfg.HTTP = &opts
	h, err := Custom(Ports{
		Approvals: portstest.NewApprovalStore(),
		Audit:     r.audit,
		Trust:     portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"}),
	}, cfg)
	require.NoError(t, err)
	r.host = h
	return r
}

// userSrc is a user-tier source (activated on the host's trust).
func userSrc(doc string) []definition.Source {
	return []definition.Source{{Tier: ports.TierUser, Origin: "/home/u/mcp.json", Data: []byte(doc)}}
}

// evalTarget evaluates srcs and returns the Result and Target of name.
func (r *rig) evalTarget(t *testing.T, srcs []definition.Source, name string) (ServerEvaluation, ports.Target) {
	t.Helper()
	res, ok := r.host.Evaluate(context.Background(), srcs).Server(name)
	require.True(t, ok)
	tg, _, ok := r.host.target(context.Background(), srcs, name)
	require.True(t, ok)
	return res, tg
}

// session connects a plain go-sdk client over conn (pinned as mcpward
// pins it) and closes it at cleanup.
func session(t *testing.T, conn *mcpsession.Conn) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "composition-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, conn.Transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		if conn.Release != nil {
			conn.Release()
		}
	})
	return cs
}

func echo(t *testing.T, cs *mcp.ClientSession, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	return res.Content[0].(*mcp.TextContent).Text
}

func TestDialHTTP(t *testing.T) {
	p := newPeer(t)
	r := newRig(t, Config{})
	// A path and query the error must never carry.
	url := p.URL + "/mcp?token=cnry-query-secret"
	srcs := userSrc(`{"mcpServers": {"web": {"type": "http", "url": "` + url + `"}}}`)
	res, tg := r.evalTarget(t, srcs, "web")
	require.Equal(t, StateAllowed, res.State, res.Reason)
	assert.Equal(t, AuthStatic, res.Auth)

	conn, err := r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	assert.Equal(t, "http://"+p.Listener.Addr().String(), conn.Origin)
	assert.NotNil(t, conn.Classify)
	assert.NotNil(t, conn.Trace)
	assert.NotNil(t, conn.Release)
	assert.NotNil(t, conn.Abort, "an abandoned HTTP call keeps the session: Abort is a no-op")
	conn.Abort()
	assert.Zero(t, r.dials.n.Load(), "Dial connects nothing")

	cs := session(t, conn)
	assert.Equal(t, "hi there", echo(t, cs, "hi there"))
	assert.Positive(t, r.dials.n.Load())

	// Classify: a typed, origin-only refusal, whatever the SDK's text.
	assert.Nil(t, conn.Classify(nil))
	assert.Nil(t, conn.Classify(context.Canceled))
	ref := conn.Classify(&httptransport.StatusError{Status: 503, Refusal: refusal.New(refusal.Transient, httptransport.ReasonHTTPStatus, "")})
	require.NotNil(t, ref)
	assert.Equal(t, refusal.Transient, ref.Class)
	assert.Equal(t, "web", ref.Server)
	assert.Equal(t, conn.Origin, ref.Origin)
	raw := fmt.Errorf("calling %q: %w", url, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	ref = conn.Classify(raw)
	require.NotNil(t, ref)
	assert.Equal(t, refusal.Transient, ref.Class)
	assert.NotContains(t, ref.Error(), "cnry-query-secret")
	assert.NotContains(t, ref.Error(), "/mcp")

	// Trace is the transport's: it refuses an invalid traceparent.
	_, err = conn.Trace(context.Background(), "not-a-traceparent")
	assert.Equal(t, httptransport.ReasonTraceparentInvalid, refusal.ReasonOf(err))
}

func TestDialHTTPServerGoneIsClassified(t *testing.T) {
	p := newPeer(t)
	r := newRig(t, Config{})
	srcs := userSrc(`{"mcpServers": {"web": {"type": "http", "url": "` + p.URL + `/mcp/cnry-path-secret"}}}`)
	_, tg := r.evalTarget(t, srcs, "web")
	p.Close() // nothing listens any more
	conn, err := r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, conn.Transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.Error(t, err)
	ref := conn.Classify(err)
	require.NotNil(t, ref)
	assert.Equal(t, refusal.Transient, ref.Class)
	assert.Equal(t, "web", ref.Server)
	assert.Equal(t, conn.Origin, ref.Origin)
	assert.NotContains(t, ref.Error(), "cnry-path-secret")
}

func TestDialHTTPEgressRefused(t *testing.T) {
	tests := []struct {
		name   string
		url    string
		reason string
	}{
		{"http to a private address", "http://10.0.0.1/mcp", "http_not_loopback"},
		{"http to a public name", "http://example.com/mcp", "http_not_loopback"},
		{"cloud metadata", "http://169.254.169.254/latest", "metadata_refused"},
		{"https to loopback", "https://127.0.0.1:8443/mcp", "address_refused"},
		{"https to a private address", "https://192.168.1.1/mcp", "address_refused"},
		{"a numeric host form", "http://2130706433/mcp", "numeric_host_refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, Config{})
			srcs := userSrc(`{"mcpServers": {"far": {"type": "http", "url": "` + tt.url + `", "headers": {"Authorization": "Bearer cnry-static"}}}}`)
			res, tg := r.evalTarget(t, srcs, "far")
			// The URL admission is pure, so Evaluate already says it: a
			// server that can never connect is not listed as allowed.
			require.Equal(t, StateRefused, res.State)
			assert.Equal(t, tt.reason, res.Reason)
			conn, err := r.host.Dialer().Dial(context.Background(), tg)
			assert.Nil(t, conn)
			var ref *refusal.Error
			require.ErrorAs(t, err, &ref)
			assert.Equal(t, refusal.Refused, ref.Class)
			assert.Equal(t, tt.reason, ref.Reason)
			assert.Equal(t, "far", ref.Server)
			assert.NotContains(t, err.Error(), "cnry-static")
			assert.NotContains(t, err.Error(), "/mcp")
			assert.Zero(t, r.dials.n.Load(), "no connection was attempted")
		})
	}
}

func TestDialUnsupportedKind(t *testing.T) {
	r := newRig(t, Config{})
	_, err := r.host.Dialer().Dial(context.Background(), ports.Target{ServerID: "x", Kind: "sse", URL: "http://127.0.0.1:1/"})
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, ReasonTransportUnsupported, refusal.ReasonOf(err))
}

// TestNeverDialledWithoutItsAuthentication: a definition refused for its
// authentication is refused by Evaluate and by Dial, and nothing reaches
// the server, not even with its static headers.
func TestNeverDialledWithoutItsAuthentication(t *testing.T) {
	p := newPeer(t)
	helper := writeHelper(t, `{"X-Api-Key": "cnry-helper-value"}`)
	tests := []struct {
		name   string
		entry  string
		cfg    Config
		reason string
		class  refusal.Class
	}{
		{
			name:   "oauth without sign-in",
			entry:  `"oauth": {"clientId": "app"}`,
			reason: ReasonOAuthSignInUnavailable, class: refusal.AuthRequired,
		},
		{
			name:   "oauth and a helper without sign-in",
			entry:  `"oauth": {"clientId": "app"}, "headersHelper": ["` + helper + `"]`,
			cfg:    Config{HelperAllowList: [][]string{{helper}}},
			reason: ReasonOAuthSignInUnavailable, class: refusal.AuthRequired,
		},
		{
			name:   "helper with no allow-list",
			entry:  `"headersHelper": ["` + helper + `"]`,
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused,
		},
		{
			name:   "helper allowed with other arguments only",
			entry:  `"headersHelper": ["` + helper + `", "--extra"]`,
			cfg:    Config{HelperAllowList: [][]string{{helper}}},
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused,
		},
		{
			name:   "helper whose allowed line has more arguments",
			entry:  `"headersHelper": ["` + helper + `"]`,
			cfg:    Config{HelperAllowList: [][]string{{helper, "--profile", "x"}}},
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused,
		},
		{
			name:   "helper that is a relative program",
			entry:  `"headersHelper": ["print-token"]`,
			cfg:    Config{HelperAllowList: [][]string{{"print-token"}}},
			reason: httptransport.ReasonHelperArgvInvalid, class: refusal.Config,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.cfg)
			doc := `{"mcpServers": {"guarded": {"type": "http", "url": "` + p.URL + `/mcp", "headers": {"Authorization": "Bearer cnry-static"}, ` + tt.entry + `}}}`
			for _, tier := range []ports.Tier{ports.TierUser, ports.TierProject} {
				srcs := []definition.Source{{Tier: tier, Origin: "/x/mcp.json", Data: []byte(doc)}}
				res, tg := r.evalTarget(t, srcs, "guarded")
				assert.Equal(t, StateRefused, res.State, tier)
				assert.Equal(t, tt.reason, res.Reason, tier)
				assert.False(t, res.Usable())
				assert.Equal(t, AuthNone, res.Auth)
				assert.Len(t, res.Fingerprint, 64, "a refused definition is still shown whole")
				require.NotNil(t, res.Projection)
				assert.Equal(t, ports.Identity{}, res.Identity, "no activation decision")
				assert.NotContains(t, fmt.Sprintf("%+v", res), "cnry")

				_, err := r.host.Approve(context.Background(), srcs, "guarded")
				assert.Equal(t, ReasonNotApprovable, refusal.ReasonOf(err), "a refused server cannot be approved")

				conn, err := r.host.Dialer().Dial(context.Background(), tg)
				assert.Nil(t, conn)
				var ref *refusal.Error
				require.ErrorAs(t, err, &ref)
				assert.Equal(t, tt.class, ref.Class)
				assert.Equal(t, tt.reason, ref.Reason)
				assert.Equal(t, "guarded", ref.Server)
				assert.NotContains(t, err.Error(), "cnry")
				assert.NotContains(t, err.Error(), helper)
			}
			records, err := r.audit.Records(context.Background())
			require.NoError(t, err)
			assert.Empty(t, records, "no activation decision was recorded")
			assert.Zero(t, r.dials.n.Load())
			assert.Zero(t, p.requests(), "the server never saw a request")
		})
	}
}

func TestDialRefusesAnUndecidedTarget(t *testing.T) {
	p := newPeer(t)
	r := newRig(t, Config{})
	tg := ports.Target{ServerID: "web", Kind: ports.TransportHTTP, URL: p.URL + "/mcp", Fingerprint: strings.Repeat("a", 64)}
	_, err := r.host.Dialer().Dial(context.Background(), tg)
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, ReasonAuthNotDecided, refusal.ReasonOf(err))

	// Evaluating another definition of the same name does not decide this
	// one: the fingerprint differs.
	srcs := userSrc(`{"mcpServers": {"web": {"type": "http", "url": "` + p.URL + `/other"}}}`)
	res, _ := r.evalTarget(t, srcs, "web")
	require.Equal(t, StateAllowed, res.State)
	_, err = r.host.Dialer().Dial(context.Background(), tg)
	assert.Equal(t, ReasonAuthNotDecided, refusal.ReasonOf(err))
	assert.Zero(t, p.requests())
}

// TestHostAuthenticatorOverridesStaticHeaders: the host's Authenticator
// for the server is asked on every request and its header wins over the
// definition's static header of the same name; a definition with oauth is
// then allowed (the host offers the sign-in).
func TestHostAuthenticatorOverridesStaticHeaders(t *testing.T) {
	for _, entry := range []string{"", `, "oauth": {"clientId": "app"}`} {
		t.Run("extra "+entry, func(t *testing.T) {
			p := newPeer(t)
			auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer host-token"}}, 1)
			r := newRig(t, Config{Authenticators: map[string]ports.Authenticator{"web": auth}})
			srcs := userSrc(`{"mcpServers": {"web": {"type": "http", "url": "` + p.URL + `/mcp", "headers": {"Authorization": "Bearer static-token", "X-Static": "kept"}` + entry + `}}}`)
			res, tg := r.evalTarget(t, srcs, "web")
			require.Equal(t, StateAllowed, res.State, res.Reason)
			assert.Equal(t, AuthHost, res.Auth)

			conn, err := r.host.Dialer().Dial(context.Background(), tg)
			require.NoError(t, err)
			cs := session(t, conn)
			assert.Equal(t, "ok", echo(t, cs, "ok"))

			got := p.seen("Authorization")
			require.NotEmpty(t, got)
			for _, v := range got {
				assert.Equal(t, "Bearer host-token", v, "the authenticator's header overrides the static one")
			}
			assert.NotContains(t, got, "Bearer static-token")
			assert.Contains(t, p.seen("X-Static"), "kept", "other static headers still go")
			reqs := auth.Requests()
			require.NotEmpty(t, reqs)
			for _, rq := range reqs {
				assert.Equal(t, "web", rq.ServerID)
				assert.Equal(t, conn.Origin, rq.Origin)
			}
		})
	}
}

// TestHostAuthenticatorIsPerServer: another server's Authenticator is
// never used, and a server without one goes with its static headers only.
func TestHostAuthenticatorIsPerServer(t *testing.T) {
	p := newPeer(t)
	auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer for-other"}}, 0)
	r := newRig(t, Config{Authenticators: map[string]ports.Authenticator{"other": auth}})
	srcs := userSrc(`{"mcpServers": {"web": {"type": "http", "url": "` + p.URL + `/mcp", "headers": {"Authorization": "Bearer static-token"}}}}`)
	res, tg := r.evalTarget(t, srcs, "web")
	require.Equal(t, StateAllowed, res.State)
	assert.Equal(t, AuthStatic, res.Auth)
	conn, err := r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	assert.Equal(t, "x", echo(t, session(t, conn), "x"))
	for _, v := range p.seen("Authorization") {
		assert.Equal(t, "Bearer static-token", v)
	}
	assert.Empty(t, auth.Requests())
}

// writeHelper writes an executable header helper printing out and, when
// given a file as its first argument, appending one line to it per run.
func writeHelper(t *testing.T, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "helper.sh")
	script := "#!/bin/sh\nif [ -n \"$1\" ]; then echo run >> \"$1\"; fi\nprintf '%s' '" + out + "'\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return path
}

// TestAllowedHeaderHelper: an allowed helper authenticates every
// connection, overriding the static header of the same name, and runs
// once per connection (a fresh HeaderHelper each Dial).
func TestAllowedHeaderHelper(t *testing.T) {
	p := newPeer(t)
	runs := filepath.Join(t.TempDir(), "runs")
	helper := writeHelper(t, `{"X-Api-Key": "from-helper"}`)
	argv := []string{helper, runs}
	r := newRig(t, Config{HelperAllowList: [][]string{{"/bin/other"}, argv}})
	argvJSON, err := json.Marshal(argv)
	require.NoError(t, err)
	srcs := userSrc(`{"mcpServers": {"web": {"type": "http", "url": "` + p.URL + `/mcp", "headers": {"X-Api-Key": "static"}, "headersHelper": ` + string(argvJSON) + `}}}`)
	res, tg := r.evalTarget(t, srcs, "web")
	require.Equal(t, StateAllowed, res.State, res.Reason)
	assert.Equal(t, AuthHeaderHelper, res.Auth)
	_, err = os.Stat(runs)
	assert.ErrorIs(t, err, fs.ErrNotExist, "Evaluate runs no helper")

	for i := 1; i <= 2; i++ {
		conn, err := r.host.Dialer().Dial(context.Background(), tg)
		require.NoError(t, err)
		cs := session(t, conn)
		assert.Equal(t, "a", echo(t, cs, "a"))
		assert.Equal(t, "b", echo(t, cs, "b"))
		b, err := os.ReadFile(runs)
		require.NoError(t, err)
		assert.Equal(t, i, strings.Count(string(b), "run"), "one run per connection")
	}
	got := p.seen("X-Api-Key")
	require.NotEmpty(t, got)
	for _, v := range got {
		assert.Equal(t, "from-helper", v)
	}
}

func TestDialStdio(t *testing.T) {
	bin := exampleBinary(t)
	root := t.TempDir()
	r := newRig(t, Config{Authority: NewRootAuthority(root, map[string]string{"LANG": "C"})})
	binJSON, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"ex": {"command": ` + string(binJSON) + `, "env": {"EXAMPLE_TOKEN": "cnry-env"}}}}`)
	res, tg := r.evalTarget(t, srcs, "ex")
	require.Equal(t, StateAllowed, res.State, res.Reason)
	assert.Equal(t, AuthNone, res.Auth)

	conn, err := r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	assert.Empty(t, conn.Origin)
	assert.Nil(t, conn.Trace, "stdio carries no trace context")
	assert.NotNil(t, conn.Abort)
	assert.NotNil(t, conn.Classify)
	tr, ok := conn.Transport.(*stdiotransport.Transport)
	require.True(t, ok)
	cs := session(t, conn)
	assert.Equal(t, "over stdio", echo(t, cs, "over stdio"))
	require.NoError(t, cs.Close())
	conn.Release()
	assert.True(t, tr.Stats().Exited, "the child is reaped once the session and Release are done")
}

func TestDialStdioWithoutAuthority(t *testing.T) {
	bin := exampleBinary(t)
	r := newRig(t, Config{})
	binJSON, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"ex": {"command": ` + string(binJSON) + `}}}`)
	_, tg := r.evalTarget(t, srcs, "ex")
	_, err := r.host.Dialer().Dial(context.Background(), tg)
	var ref *refusal.Error
	require.ErrorAs(t, err, &ref)
	assert.Equal(t, refusal.Refused, ref.Class)
	assert.Equal(t, ReasonNoProcessAuthority, ref.Reason)
	assert.Equal(t, "ex", ref.Server)
	assert.NotContains(t, err.Error(), bin)
}

// TestAbortKillsTheChild: Conn.Abort ends a stdio child in the middle of
// a call at once; the call fails with a typed, secret-free refusal.
func TestAbortKillsTheChild(t *testing.T) {
	bin := exampleBinary(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	binJSON, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"ex": {"command": ` + string(binJSON) + `}}}`)
	_, tg := r.evalTarget(t, srcs, "ex")
	conn, err := r.host.Dialer().Dial(context.Background(), tg)
	require.NoError(t, err)
	tr := conn.Transport.(*stdiotransport.Transport)
	cs := session(t, conn)
	assert.Equal(t, "up", echo(t, cs, "up"))

	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 10000}})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the call is in flight
	start := time.Now()
	conn.Abort()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the call outlived Abort")
	}
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.True(t, tr.Stats().Exited, "Abort reaped the child")

	ref := conn.Classify(err)
	require.NotNil(t, ref)
	assert.Equal(t, refusal.Transient, ref.Class)
	assert.Equal(t, "ex", ref.Server)
	assert.NotContains(t, ref.Error(), bin)

	// The session is over: Close returns promptly.
	closed := make(chan struct{})
	go func() { _ = cs.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked after Abort")
	}
}

// fakeStdio is a stdioErr with a fixed Err.
type fakeStdio struct{ err error }

func (f fakeStdio) Err() error { return f.err }

func TestClassifyStdio(t *testing.T) {
	capErr := &refusal.Error{Class: refusal.Protocol, Reason: "receive_cap_exceeded", Detail: "cap 16 bytes"}
	secretPath := "/home/u/cnry-path/bin/server"
	tests := []struct {
		name   string
		err    error
		tr     fakeStdio
		class  refusal.Class
		reason string // "" means nil
	}{
		{name: "nil", err: nil},
		{name: "canceled", err: fmt.Errorf("call: %w", context.Canceled)},
		{name: "deadline", err: context.DeadlineExceeded},
		{name: "receive cap wins", err: io.EOF, tr: fakeStdio{capErr}, class: refusal.Protocol, reason: "receive_cap_exceeded"},
		{name: "transport refusal", err: fmt.Errorf("x: %w", refusal.New(refusal.Transient, "child_killed", "")), class: refusal.Transient, reason: "child_killed"},
		{name: "eof", err: fmt.Errorf("reading: %w", io.EOF), class: refusal.Transient, reason: ReasonConnectionClosed},
		{name: "unexpected eof", err: io.ErrUnexpectedEOF, class: refusal.Transient, reason: ReasonConnectionClosed},
		{name: "closed file", err: &fs.PathError{Op: "read", Path: "|0", Err: os.ErrClosed}, class: refusal.Transient, reason: ReasonConnectionClosed},
		{name: "broken pipe", err: &fs.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}, class: refusal.Transient, reason: ReasonConnectionClosed},
		{name: "not found", err: &exec.Error{Name: secretPath, Err: exec.ErrNotFound}, class: refusal.Config, reason: ReasonProgramNotFound},
		{name: "no such file", err: &fs.PathError{Op: "fork/exec", Path: secretPath, Err: syscall.ENOENT}, class: refusal.Config, reason: ReasonProgramNotFound},
		{name: "permission", err: &fs.PathError{Op: "fork/exec", Path: secretPath, Err: syscall.EACCES}, class: refusal.Transient, reason: ReasonSpawnFailed},
		{name: "a json-rpc reply is not the transport's", err: errors.New("calling tool: method not found cnry"), reason: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := classifyStdio(tt.err, tt.tr, "srv")
			if tt.reason == "" {
				assert.Nil(t, ref)
				return
			}
			require.NotNil(t, ref)
			assert.Equal(t, tt.class, ref.Class)
			assert.Equal(t, tt.reason, ref.Reason)
			assert.Equal(t, "srv", ref.Server)
			assert.Empty(t, ref.Origin)
			assert.NotContains(t, ref.Error(), "cnry")
		})
	}
	// A refusal that already names its server keeps it, and the original
	// is not modified.
	orig := &refusal.Error{Class: refusal.Transient, Reason: "child_killed"}
	ref := classifyStdio(orig, fakeStdio{}, "srv")
	assert.Equal(t, "srv", ref.Server)
	assert.Empty(t, orig.Server)
}

// fakeExit is a stdioExit with a fixed Err that records WaitExited.
type fakeExit struct {
	fakeStdio
	waited *int
}

func (f fakeExit) WaitExited(time.Duration) bool { *f.waited++; return true }

// TestClassifyStdioConnect: during initialize, the server's output ending
// is ReasonServerExited (Config: not retried), once the child was given
// time to be reaped; everything else is classifyStdio's.
func TestClassifyStdioConnect(t *testing.T) {
	capErr := &refusal.Error{Class: refusal.Protocol, Reason: "receive_cap_exceeded"}
	tests := []struct {
		name   string
		err    error
		trErr  error
		class  refusal.Class
		reason string
		waits  int
	}{
		{name: "eof", err: fmt.Errorf("calling %q: %w", "initialize", io.EOF), class: refusal.Config, reason: ReasonServerExited, waits: 1},
		{name: "broken pipe", err: &fs.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}, class: refusal.Config, reason: ReasonServerExited, waits: 1},
		{name: "the transport's breach wins", err: io.EOF, trErr: capErr, class: refusal.Protocol, reason: "receive_cap_exceeded"},
		{name: "killed by this side", err: refusal.New(refusal.Transient, "child_killed", ""), class: refusal.Transient, reason: "child_killed"},
		{name: "program not found at spawn", err: refusal.New(refusal.Config, ReasonProgramNotFound, ""), class: refusal.Config, reason: ReasonProgramNotFound},
		{name: "not the transport's", err: errors.New("x"), reason: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waits := 0
			ref := classifyStdioConnect(tt.err, fakeExit{fakeStdio{tt.trErr}, &waits}, "srv")
			assert.Equal(t, tt.waits, waits)
			if tt.reason == "" {
				assert.Nil(t, ref)
				return
			}
			require.NotNil(t, ref)
			assert.Equal(t, tt.class, ref.Class)
			assert.Equal(t, tt.reason, ref.Reason)
			assert.Equal(t, "srv", ref.Server)
		})
	}
}

func TestOriginOf(t *testing.T) {
	tests := map[string]string{
		"http://127.0.0.1:8080/mcp?x=1":         "http://127.0.0.1:8080",
		"http://127.0.0.1/mcp":                  "http://127.0.0.1:80",
		"https://Example.COM/a/b#frag":          "https://example.com:443",
		"HTTPS://example.com:8443":              "https://example.com:8443",
		"http://[::1]:9/x":                      "http://[::1]:9",
		"http://user:pw@127.0.0.1:1/":           "http://127.0.0.1:1",
		"ftp://example.com/":                    "",
		"http:///nohost":                        "",
		"::not a url":                           "",
		"":                                      "",
		"http://localhost:3000/mcp/cnry-secret": "http://localhost:3000",
		"http://]0":                             "",
		"http://[fe80::1%25eth0]:1/":            "",
		"http://[::FFFF:7f00:1]:1/":             "http://[::ffff:7f00:1]:1", // as httptransport writes it
		"http://h:0/":                           "",
		"http://h:65536/":                       "",
		"http://a b/":                           "",
	}
	for in, want := range tests {
		assert.Equal(t, want, originOf(in), in)
	}
}

// FuzzOriginOf: an origin is "scheme://host:port" and nothing more: no
// userinfo, path, query or fragment of the URL survives.
func FuzzOriginOf(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/mcp?x=1", "https://u:p@h.example/p#f", "http://[::1]/", "http://a%2fb/", "https://h:443@evil/", "http://]0", "http://[fe80::1%25eth0]:1/", "http://h:0/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o := originOf(raw)
		if o == "" {
			return
		}
		scheme, rest, ok := strings.Cut(o, "://")
		if !ok || (scheme != "http" && scheme != "https") {
			t.Fatalf("bad scheme in %q", o)
		}
		host, port, err := net.SplitHostPort(rest)
		if err != nil || port == "" || host == "" {
			t.Fatalf("origin %q is not scheme://host:port", o)
		}
		if strings.ContainsAny(rest, "/?#@") {
			t.Fatalf("origin %q carries more than host:port", o)
		}
	})
}

// TestTargetMask: a server's error message echoing the definition's env or
// header values, or the value after a credential-shaped flag, reaches no
// refusal (#25 item 6 keeps the message).
func TestTargetMask(t *testing.T) {
	m := targetMask(ports.Target{
		Env:     map[string]string{"API_KEY": "env-secret-1", "MODE": "on"},
		Headers: map[string]string{"Authorization": "Bearer hdr-secret-2"},
		Args:    []string{"--api-key=flag-secret-3", "--token", "flag-secret-4", "--port", "8080"},
	})
	require.NotNil(t, m)
	got := m("env-secret-1 hdr-secret-2 flag-secret-3 flag-secret-4 on 8080 Bearer")
	assert.Equal(t, "<redacted> <redacted> <redacted> <redacted> on 8080 Bearer", got,
		"values of 4 bytes or more; a header value word by word")
	assert.Nil(t, targetMask(ports.Target{Args: []string{"-y", "pkg"}}), "nothing to hide")
}
