package httptransport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// failureCase is one way an HTTP server fails a client, and what the
// client must make of it: the refusal Classify returns (only Transient is
// retried) and the network cause Cause returns.
type failureCase struct {
	name string
	// start returns the URL to connect to and the options to connect with.
	start  func(t *testing.T) (string, ports.EgressPolicy, *Options)
	auth   ports.Authenticator
	class  refusal.Class
	reason string
	cause  string
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// statusServer answers every POST with status (and a text body).
func statusServer(status int) func(t *testing.T) (string, ports.EgressPolicy, *Options) {
	return func(t *testing.T) (string, ports.EgressPolicy, *Options) {
		srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
			io.WriteString(w, "body-canary")
		}))
		return srv.URL + "/path-canary?key=query-canary", egress.Default(), safeOptions()
	}
}

// legacySSEServer is a server of the deprecated HTTP+SSE transport at
// /sse: GET opens the stream with its "endpoint" event, anything else is
// 404 (no route), as an Express app of the 2024-11-05 era answers.
func legacySSEServer(t *testing.T) (string, ports.EgressPolicy, *Options) {
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=body-canary\n\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Cannot POST /sse body-canary")
	}))
	return srv.URL + "/sse", egress.Default(), safeOptions()
}

// hijack answers every request by taking the connection and ending it:
// with a reset (SO_LINGER 0) or an orderly close.
func hijack(reset bool) func(t *testing.T) (string, ports.EgressPolicy, *Options) {
	return func(t *testing.T) (string, ports.EgressPolicy, *Options) {
		srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if reset {
				_ = c.(*net.TCPConn).SetLinger(0)
			}
			c.Close()
		}))
		return srv.URL + "/mcp", egress.Default(), safeOptions()
	}
}

// failingResolver fails every lookup as a resolver that found no such
// host does.
type failingResolver struct{ addrs []netip.Addr }

func (r failingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if r.addrs != nil {
		return r.addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func failureCases() []failureCase {
	cases := []failureCase{
		{
			name: "connection refused",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				return "http://" + closedPort(t) + "/mcp", egress.Default(), safeOptions()
			},
			class: refusal.Transient, reason: ReasonNetwork, cause: CauseRefused,
		},
		{
			name: "dns failure",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				return "https://mcp.example.com/path-canary", egress.Default(), &Options{Resolver: failingResolver{}}
			},
			class: refusal.Transient, reason: ReasonNetwork, cause: CauseDNS,
		},
		{
			name: "dns answer without addresses",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				return "https://mcp.example.com/path-canary", egress.Default(), &Options{Resolver: failingResolver{addrs: []netip.Addr{}}}
			},
			class: refusal.Transient, reason: ReasonNetwork, cause: CauseDNS,
		},
		{
			// A real dial whose deadline has passed: the dialer's own
			// timeout, not the caller's ctx.
			name: "connect timeout",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				srv := newTestServer(t, false, http.NotFoundHandler())
				return srv.URL + "/mcp", egress.Default(), &Options{Resolver: &mapResolver{}, Dialer: &net.Dialer{Timeout: time.Nanosecond}}
			},
			class: refusal.Transient, reason: ReasonNetwork, cause: CauseTimeout,
		},
		{
			name: "tls: unknown authority",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				srv := newTestServer(t, true, http.NotFoundHandler())
				return srv.URL + "/mcp", portstest.AllowAllEgress(), safeOptions()
			},
			class: refusal.Refused, reason: ReasonTLS, cause: CauseTLS,
		},
		{
			name: "tls: plain http server",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				srv := newTestServer(t, false, http.NotFoundHandler())
				return "https://" + srv.Listener.Addr().String() + "/mcp", portstest.AllowAllEgress(), safeOptions()
			},
			class: refusal.Refused, reason: ReasonTLS, cause: CauseTLS,
		},
		{name: "connection reset", start: hijack(true), class: refusal.Transient, reason: ReasonNetwork, cause: CauseReset},
		{name: "connection closed without a reply", start: hijack(false), class: refusal.Transient, reason: ReasonNetwork, cause: CauseEOF},
		{name: "401 without an authenticator", start: statusServer(401), class: refusal.AuthRequired, reason: ReasonAuthRequired},
		{name: "403 without an authenticator", start: statusServer(403), class: refusal.AuthRequired, reason: ReasonAuthRequired},
		{name: "401 again after the retry", start: statusServer(401), auth: portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer x"}}, 1),
			class: refusal.AuthRefused, reason: ReasonAuthRefused},
		{name: "unrecognised status 600", start: statusServer(600), class: refusal.Protocol, reason: ReasonHTTPStatus},
		{
			name: "receive cap",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`+string(make([]byte, 2048))+`"}}`)
				}))
				return srv.URL + "/mcp", egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: 1024}
			},
			class: refusal.Protocol, reason: ReasonReceiveCap,
		},
		{
			name: "receive cap in an SSE event",
			start: func(t *testing.T) (string, ports.EgressPolicy, *Options) {
				srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\""+string(make([]byte, 2048))+"\"}}\n\n")
				}))
				return srv.URL + "/mcp", egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: 1024}
			},
			class: refusal.Protocol, reason: ReasonReceiveCap,
		},
	}
	for _, st := range []int{408, 429, 500, 502, 503, 504} {
		cases = append(cases, failureCase{name: "status " + strconv.Itoa(st), start: statusServer(st),
			class: refusal.Transient, reason: ReasonHTTPStatus})
	}
	for _, st := range []int{400, 404, 406, 410, 413, 415, 422} {
		cases = append(cases, failureCase{name: "status " + strconv.Itoa(st), start: statusServer(st),
			class: refusal.Refused, reason: ReasonHTTPStatus})
	}
	// A legacy HTTP+SSE endpoint configured as http: its stream is GET
	// only (405 to the POST, as Starlette's routes answer), or nothing is
	// routed for POST at /sse (404, as an Express app answers).
	cases = append(cases,
		failureCase{name: "status 405: legacy sse", start: statusServer(405), class: refusal.Refused, reason: ReasonLegacySSE},
		failureCase{name: "legacy sse endpoint, 404 to POST /sse", start: legacySSEServer, class: refusal.Refused, reason: ReasonLegacySSE},
	)
	return cases
}

// TestFailureClasses connects a real go-sdk client through the transport to
// a peer that fails in one way, and checks what Classify and Cause make of
// the error the SDK returns: the right Class (only Transient is retried),
// Reason and cause, and nothing of the URL or the server's text.
func TestFailureClasses(t *testing.T) {
	for _, tc := range failureCases() {
		t.Run(tc.name, func(t *testing.T) {
			url, policy, opts := tc.start(t)
			tr, err := New(policy, opts).Transport(context.Background(), httpTarget("s", url, nil), tc.auth)
			require.NoError(t, err)
			closeIdle(t, tr)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := connect(ctx, tr)
			if cs != nil {
				_ = cs.Close()
			}
			require.Error(t, err)
			require.NoError(t, ctx.Err(), "the failure came before the test's deadline")
			r := Classify(err, "s", "http://origin")
			require.NotNil(t, r)
			assert.Equal(t, tc.class.String(), r.Class.String(), "class of %s", r.Reason)
			assert.Equal(t, tc.reason, r.Reason)
			assert.Equal(t, "s", r.Server)
			assert.Equal(t, tc.cause, Cause(err), "cause")
			if tc.reason == ReasonHTTPStatus || tc.reason == ReasonLegacySSE {
				var se *StatusError
				require.ErrorAs(t, err, &se)
				assert.True(t, strings.HasPrefix(r.Detail, strconv.Itoa(se.Status)+" "), "the status is named: %q", r.Detail)
			}
			for _, leak := range []string{"path-canary", "query-canary", "body-canary"} {
				assert.NotContains(t, r.Error(), leak)
			}
		})
	}
}

// TestFailureAfterHealthyStart: a server that goes away after a healthy
// start fails the next call with a Transient network refusal.
func TestFailureAfterHealthyStart(t *testing.T) {
	srv := newTestServer(t, false, mcpHandler(newMCPServer(), &mcp.StreamableHTTPOptions{JSONResponse: true, Stateless: true}))
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := connect(ctx, tr)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "up"}})
	require.NoError(t, err)

	srv.CloseClientConnections()
	srv.Close()
	tr.CloseIdleConnections() // the next call dials, and finds nobody
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "down"}})
	require.Error(t, err)
	r := Classify(err, "s", "")
	require.NotNil(t, r)
	assert.Equal(t, refusal.Transient, r.Class)
	assert.Equal(t, ReasonNetwork, r.Reason)
	assert.Equal(t, CauseRefused, Cause(err))
}

func TestCause(t *testing.T) {
	wrap := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"ctx", context.DeadlineExceeded, ""},
		{"a refusal that is not a network failure", refusal.New(refusal.Refused, "egress_refused", "s"), ""},
		{"net error kept", &NetError{Cause: CauseReset, Refusal: refusal.New(refusal.Transient, ReasonNetwork, "s")}, CauseReset},
		{"dns", &net.DNSError{Err: "no such host", Name: "h"}, CauseDNS},
		{"refused", wrap(errConnRefused), CauseRefused},
		{"eof", io.ErrUnexpectedEOF, CauseEOF},
		{"plain error", errors.New("x"), ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Cause(tt.err), tt.name)
	}
}

var errConnRefused = &osSyscallError{}

// osSyscallError is ECONNREFUSED as the dialer wraps it.
type osSyscallError struct{}

func (*osSyscallError) Error() string { return "connect: connection refused" }
func (*osSyscallError) Unwrap() error { return syscall.ECONNREFUSED }
