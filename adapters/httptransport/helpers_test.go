package httptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// testServer is an httptest server on 127.0.0.1 that counts accepts and
// records every request it handles.
type testServer struct {
	*httptest.Server
	ln *countingListener

	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	Method string
	Header http.Header
	Body   []byte
}

func newTestServer(t testing.TB, tlsOn bool, h http.Handler) *testServer {
	t.Helper()
	ts := &testServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, seenRequest{Method: r.Method, Header: r.Header.Clone(), Body: body})
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	ts.ln = &countingListener{Listener: srv.Listener}
	srv.Listener = ts.ln
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	ts.Server = srv
	t.Cleanup(srv.Close)
	return ts
}

func (s *testServer) accepts() int64 { return s.ln.n.Load() }

func (s *testServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.reqs...)
}

// rpcMethod returns the JSON-RPC method of a request body, or "".
func rpcMethod(body []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	if err := jsonUnmarshal(body, &m); err != nil {
		return ""
	}
	return m.Method
}

// mapResolver resolves only the names it maps; anything else fails, so a
// test never asks a real DNS server.
type mapResolver struct {
	m     map[string][]netip.Addr
	calls atomic.Int64
}

func (r *mapResolver) LookupNetIP(_ context.Context, _ string, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	if a, ok := r.m[strings.ToLower(host)]; ok {
		return a, nil
	}
	return nil, errors.New("mapResolver: unknown name")
}

// countingDialer dials loopback only and counts dials.
type countingDialer struct {
	n atomic.Int64
	d net.Dialer
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, errors.New("countingDialer: test dials loopback only")
	}
	return d.d.DialContext(ctx, network, addr)
}

// safeOptions returns Options whose resolver never reaches DNS.
func safeOptions() *Options {
	return &Options{Resolver: &mapResolver{}}
}

func httpTarget(id, u string, h map[string]string) ports.Target {
	return ports.Target{ServerID: id, Kind: ports.TransportHTTP, URL: u, Headers: h}
}

// newMCPServer returns a go-sdk server with an "echo" tool and a "block"
// tool that waits for its ctx.
func newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.0.0"}, nil)
	type echoIn struct {
		Msg string `json:"msg"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Msg}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	return s
}

func mcpHandler(s *mcp.Server, opts *mcp.StreamableHTTPOptions) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
}

// connect connects a real go-sdk client through tr, pinned to 2025-11-25.
func connect(ctx context.Context, tr mcp.Transport) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpward-test", Version: "0"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	return c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// closeIdle releases the pooled connections of tr at cleanup.
func closeIdle(t *testing.T, tr *Transport) {
	t.Cleanup(tr.CloseIdleConnections)
}

// requireRefusal asserts err carries a *refusal.Error of class and reason.
func requireRefusal(t *testing.T, err error, class refusal.Class, reason string) *refusal.Error {
	t.Helper()
	require.Error(t, err)
	var r *refusal.Error
	require.True(t, errors.As(err, &r), "want a *refusal.Error in the chain, got %T", err)
	require.Equal(t, class.String(), r.Class.String(), "class (reason %s)", r.Reason)
	require.Equal(t, reason, r.Reason)
	return r
}

// post sends one JSON POST through tr's client.
func post(ctx context.Context, tr *Transport, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tr.Endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return tr.HTTPClient.Do(req)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

var netDialer = net.Dialer{Timeout: 5 * time.Second}
