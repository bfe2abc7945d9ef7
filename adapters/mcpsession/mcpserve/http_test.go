package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// The limits of ServeHTTP, on real sockets of 127.0.0.1.

const testToken = "test-token-0123456789abcdef0123456789"

// serveHTTP serves a Server of one tool with o (Token testToken unless
// set) on a fresh loopback port until the test ends, and returns the
// Server and its address.
func serveHTTP(t *testing.T, o HTTPOptions) (*Server, string) {
	t.Helper()
	b := newFake(Catalog{Tools: []Tool{{Name: "echo", InputSchema: objSchema}}})
	b.call = func(context.Context, string, json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"text","text":"ok"}]`)}, nil
	}
	s := New(b, nil)
	if o.Token == "" {
		o.Token = testToken
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP(ctx, ln, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("ServeHTTP did not return after its context ended")
		}
		s.Close()
	})
	return s, ln.Addr().String()
}

// dial opens a raw connection to addr, closed when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes req on c and reads one response (its body read).
func roundTrip(t *testing.T, c net.Conn, req string) *http.Response {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(c, req)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, c.SetDeadline(time.Time{}))
	return resp
}

// request is an HTTP/1.1 request to addr's /mcp with headers.
func request(method, addr string, headers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s /mcp HTTP/1.1\r\nHost: %s\r\n", method, addr)
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// closedWithin waits until the server closes c and returns how long it
// took; it fails the test past limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(start.Add(limit)))
	buf := make([]byte, 512)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection is still open after %v", limit)
		return time.Since(start)
	}
}

// TestHTTPConnectionCap: with MaxConnections 4, four idle connections
// take every slot; the fifth is answered 503 with Retry-After and closed,
// never queued; so is each of 40 more at once; once a slot is free a new
// connection is served (401 without the token).
func TestHTTPConnectionCap(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{MaxConnections: 4, HeaderTimeout: time.Minute})
	for range 4 {
		dial(t, addr)
	}
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(c, request("GET", addr))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "5"
	}, 10*time.Second, 20*time.Millisecond, "a connection over the cap is answered 503 with Retry-After")

	var served, refused atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				refused.Add(1)
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(c, request("GET", addr))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			switch {
			case err != nil:
				refused.Add(1) // closed unanswered: every rejecter busy
			case resp.StatusCode == http.StatusServiceUnavailable:
				refused.Add(1)
			default:
				served.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Zero(t, served.Load(), "nothing over the cap is served")
	assert.Equal(t, int32(40), refused.Load())
}

// TestHTTPSlotFreed: a connection closed gives its slot back.
func TestHTTPSlotFreed(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{MaxConnections: 2, HeaderTimeout: time.Minute})
	a, b := dial(t, addr), dial(t, addr)
	_ = b
	time.Sleep(100 * time.Millisecond) // both accepted
	c := dial(t, addr)
	assert.Equal(t, http.StatusServiceUnavailable, roundTrip(t, c, request("GET", addr)).StatusCode)
	require.NoError(t, a.Close())
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(c, request("GET", addr))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusUnauthorized
	}, 10*time.Second, 20*time.Millisecond, "the slot of a closed connection is given back")
}

// TestHTTPRefusalClosesTheConnection: a request refused 401 (no token) or
// 403 (a Host that is not loopback) closes its connection at once, long
// before the idle timeout, so no unauthenticated connection stays open.
func TestHTTPRefusalClosesTheConnection(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{IdleTimeout: time.Minute})
	for name, req := range map[string]string{
		"401": request("POST", addr, "Content-Type: application/json", "Content-Length: 2") + "{}",
		"403": "GET /mcp HTTP/1.1\r\nHost: evil.example:80\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, addr)
			resp := roundTrip(t, c, req)
			assert.Equal(t, name, fmt.Sprint(resp.StatusCode))
			assert.Less(t, closedWithin(t, c, 5*time.Second), 2*time.Second)
		})
	}
}

// TestHTTPIdleTimeout: a kept-alive connection with no request for
// IdleTimeout (300 ms) is closed.
func TestHTTPIdleTimeout(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{IdleTimeout: 300 * time.Millisecond})
	c := dial(t, addr)
	resp := roundTrip(t, c, request("GET", addr, "Authorization: Bearer "+testToken, "Accept: text/event-stream"))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "GET without a session: answered, kept alive")
	d := closedWithin(t, c, 10*time.Second)
	assert.GreaterOrEqual(t, d, 250*time.Millisecond)
}

// TestHTTPHeaderTimeout: a connection that sends nothing, or headers that
// never end, is closed after HeaderTimeout (300 ms).
func TestHTTPHeaderTimeout(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{HeaderTimeout: 300 * time.Millisecond, IdleTimeout: time.Minute})
	start := time.Now()
	silent := dial(t, addr)
	slow := dial(t, addr)
	_, err := io.WriteString(slow, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nX-Slow: ")
	require.NoError(t, err)
	for _, c := range []net.Conn{silent, slow} {
		closedWithin(t, c, 10*time.Second)
	}
	assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
}

// TestHTTPBodyTimeout: a body that stops coming is answered 408 after
// BodyTimeout (300 ms) and its connection closed; one over MaxBodyBytes
// is 413.
func TestHTTPBodyTimeout(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{BodyTimeout: 300 * time.Millisecond, IdleTimeout: time.Minute})
	c := dial(t, addr)
	start := time.Now()
	resp := roundTrip(t, c, request("POST", addr, "Authorization: Bearer "+testToken, "Content-Type: application/json",
		"Accept: application/json, text/event-stream", "Content-Length: 1000")+`{"jsonrpc":`)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
	closedWithin(t, c, 5*time.Second)

	_, addr = serveHTTP(t, HTTPOptions{BodyTimeout: time.Minute})
	c = dial(t, addr)
	go func() {
		_, _ = io.WriteString(c, request("POST", addr, "Authorization: Bearer "+testToken, "Content-Type: application/json",
			"Accept: application/json, text/event-stream", fmt.Sprintf("Content-Length: %d", MaxBodyBytes+10)))
		_, _ = c.Write(make([]byte, MaxBodyBytes+10))
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

// bearer adds the test token to every request.
type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects a go-sdk client session to addr on the legacy
// protocol (2025-11-25: with a session).
func connectHTTP(ctx context.Context, addr string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearer{}},
		DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// initialize is a raw initialize POST.
func initialize(addr string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	return request("POST", addr, "Authorization: Bearer "+testToken, "Content-Type: application/json",
		"Accept: application/json, text/event-stream", fmt.Sprintf("Content-Length: %d", len(body))) + body
}

// TestHTTPSessionCap: with MaxSessions 3, three clients connect; a fourth
// session is refused 503 with Retry-After (a go-sdk client's Connect
// fails); 200 more initialize requests at once never take the sessions
// past 3; once a client leaves (DELETE) a new one connects.
func TestHTTPSessionCap(t *testing.T) {
	s, addr := serveHTTP(t, HTTPOptions{MaxSessions: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sessions []*mcp.ClientSession
	for range 3 {
		cs, err := connectHTTP(ctx, addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		sessions = append(sessions, cs)
	}
	_, err := connectHTTP(ctx, addr)
	require.Error(t, err, "a fourth session")
	resp := roundTrip(t, dial(t, addr), initialize(addr))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))

	var wg sync.WaitGroup
	var over atomic.Int32
	for range 200 {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = io.WriteString(c, initialize(addr))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode == http.StatusServiceUnavailable {
				over.Add(1)
			}
			if n := s.Sessions(); n > 3 {
				t.Errorf("%d sessions open, over the cap of 3", n)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(200), over.Load())
	assert.Equal(t, 3, s.Sessions())

	require.NoError(t, sessions[0].Close())
	require.Eventually(t, func() bool { return s.Sessions() == 2 }, 10*time.Second, 10*time.Millisecond)
	cs, err := connectHTTP(ctx, addr)
	require.NoError(t, err, "a session left: a new one connects")
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
}

// TestHTTPSessionIdleExpiry: a session with no request for
// SessionIdleTimeout (300 ms) is closed; its client's next request fails
// (404: it must start a new session), which then connects.
func TestHTTPSessionIdleExpiry(t *testing.T) {
	s, addr := serveHTTP(t, HTTPOptions{SessionIdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := connectHTTP(ctx, addr)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	require.NoError(t, err)
	require.Equal(t, 1, s.Sessions())
	require.Eventually(t, func() bool { return s.Sessions() == 0 }, 10*time.Second, 20*time.Millisecond, "the idle session expires")
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	require.Error(t, err, "the expired session is gone")
	cs2, err := connectHTTP(ctx, addr)
	require.NoError(t, err)
	defer cs2.Close()
}

// TestHTTPHeaderBytes: headers past MaxHeaderBytes are answered 431 and
// the connection closed.
func TestHTTPHeaderBytes(t *testing.T) {
	_, addr := serveHTTP(t, HTTPOptions{IdleTimeout: time.Minute})
	c := dial(t, addr)
	resp := roundTrip(t, c, request("GET", addr, "X-Big: "+strings.Repeat("a", MaxHeaderBytes+8192)))
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	closedWithin(t, c, 5*time.Second)
}
