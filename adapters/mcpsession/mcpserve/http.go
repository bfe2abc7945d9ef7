package mcpserve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limits of serving Streamable HTTP (HTTPOptions), by default. A
// server at a limit answers 503 with Retry-After (or, past the connection
// cap with every rejecter busy, closes the connection); it never grows
// past it.
const (
	// DefaultMaxConnections caps the connections open at once (a client
	// keeps one or two: its requests and its standalone stream).
	DefaultMaxConnections = 256
	// DefaultMaxSessions caps the client sessions open at once (about
	// 18 KB each).
	DefaultMaxSessions = 128
	// DefaultSessionIdleTimeout closes a session that received no request
	// for this long (a call running counts as activity); its client
	// starts a new one (the protocol's answer to 404).
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultIdleTimeout closes a kept-alive connection with no request
	// for this long. A response refusing a request (401, 403) closes its
	// connection at once.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultHeaderTimeout bounds reading a request's headers, from the
	// connection's first byte or the end of its previous request.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds reading a request's body (408 after it).
	DefaultBodyTimeout = 10 * time.Second
	// RetryAfter is the Retry-After, in seconds, of a 503.
	RetryAfter = 5
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 64 << 10
	// MaxBodyBytes bounds a request's body (413 past it): the SDK's own
	// default.
	MaxBodyBytes = mcp.DefaultMaxRequestBodyBytes
	// maxRejecting caps the goroutines answering 503 to connections over
	// the cap at once; past it a connection is closed unanswered.
	maxRejecting = 32
	// shutdownGrace bounds ServeHTTP's graceful end.
	shutdownGrace = 2 * time.Second
)

// HTTPOptions configure Server.HTTPHandler and Server.ServeHTTP. For the
// limits a zero value means the default and a negative one none.
type HTTPOptions struct {
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"); a request without it, or with
	// another, is answered 401. "" turns the check off: for tests only,
	// and the caller must make sure the listener is loopback.
	Token string
	// TokenHint is the message of a 401 (what a user needs to know to
	// find the token, such as the file holding it); "" means a generic
	// one. The 401's body is a JSON-RPC error response holding it (both
	// the go-sdk and the TypeScript SDK clients show it), and its
	// WWW-Authenticate names no resource metadata, so a client does not
	// start an OAuth flow that cannot succeed. It must hold no secret.
	TokenHint string
	// Port is the port the listener is bound to: the Host header must
	// name a loopback host (127.0.0.1, [::1], localhost) with this port,
	// and an Origin header, when present, the same, else 403 (DNS
	// rebinding). 0 accepts any port. ServeHTTP sets it from its listener.
	Port string
	// MaxSessions caps the client sessions open at once: a request that
	// would open one more (a POST without Mcp-Session-Id) is answered 503
	// with Retry-After. DefaultMaxSessions when 0.
	MaxSessions int
	// SessionIdleTimeout closes a session that received no request for
	// this long. DefaultSessionIdleTimeout when 0.
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds reading one request's body: 408 after it.
	// DefaultBodyTimeout when 0.
	BodyTimeout time.Duration
	// MaxConnections caps the connections ServeHTTP keeps open at once:
	// one more is answered 503 with Retry-After and closed.
	// DefaultMaxConnections when 0.
	MaxConnections int
	// IdleTimeout closes a kept-alive connection of ServeHTTP with no
	// request for this long. DefaultIdleTimeout when 0.
	IdleTimeout time.Duration
	// HeaderTimeout bounds reading one request's headers in ServeHTTP.
	// DefaultHeaderTimeout when 0.
	HeaderTimeout time.Duration
}

// orDefault is v, def when v is 0, and 0 (none) when v is negative.
func orDefault[T ~int | ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// HTTPHandler returns the Streamable HTTP handler of s: every session is
// served by s. It sends no CORS header, answers OPTIONS 405, checks Host
// and Origin (403) before the bearer token (401) — closing the connection
// after either — reads the body within o.BodyTimeout (408) and
// MaxBodyBytes (413), refuses an initialize past o.MaxSessions sessions
// (503, Retry-After), and only then hands the request to the SDK, which closes
// a session idle for o.SessionIdleTimeout.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{
		Logger: s.log, SessionTimeout: orDefault(o.SessionIdleTimeout, DefaultSessionIdleTimeout), MaxRequestBodyBytes: MaxBodyBytes})
	// Protocol 2026-07-28 and later have no sessions: each request is
	// answered alone, by a session that ends with it.
	modern := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{
		Logger: s.log, Stateless: true, MaxRequestBodyBytes: MaxBodyBytes})
	token := []byte(o.Token)
	maxSessions := orDefault(o.MaxSessions, DefaultMaxSessions)
	bodyTimeout := orDefault(o.BodyTimeout, DefaultBodyTimeout)
	var (
		mu      sync.Mutex
		opening int // new sessions being served now
	)
	refuse := func(w http.ResponseWriter, msg string, code int) {
		w.Header().Set("Connection", "close")
		http.Error(w, msg, code)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !loopbackHost(r.Host, o.Port) {
			refuse(w, "forbidden host", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Host, o.Port) {
				refuse(w, "forbidden origin", http.StatusForbidden)
				return
			}
		}
		if len(token) > 0 {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), token) != 1 {
				unauthorized(w, r, o.TokenHint)
				return
			}
		}
		if r.Method == http.MethodPost {
			if code := readBody(w, r, bodyTimeout); code != 0 {
				refuse(w, http.StatusText(code), code)
				return
			}
			if r.Header.Get("Mcp-Session-Id") == "" && maxSessions > 0 && opensSession(r) {
				mu.Lock()
				if s.initialized()+opening >= maxSessions {
					mu.Unlock()
					w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
					http.Error(w, "too many sessions: try again later", http.StatusServiceUnavailable)
					return
				}
				opening++
				mu.Unlock()
				// The session counts as opening until its answer starts:
				// by then it is initialized (and counted as such), while
				// the handler may not have returned yet.
				ow := &openingWriter{ResponseWriter: w, done: func() {
					mu.Lock()
					opening--
					mu.Unlock()
				}}
				defer ow.end()
				w = ow
			}
		}
		if ModernRequest(r) {
			modern.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// FirstModernVersion is the first protocol version without sessions.
const FirstModernVersion = "2026-07-28"

// ModernRequest reports whether r is of protocol FirstModernVersion or
// later: its MCP-Protocol-Version header names such a version (a
// date-shaped version, compared as the dates they are). Such a request
// is answered alone, without a session (stateless); any other is served
// as before, with sessions.
func ModernRequest(r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	return len(v) == len(FirstModernVersion) && v[4] == '-' && v[7] == '-' && v >= FirstModernVersion
}

// openingWriter runs done once, when its response starts or at end,
// whichever is first.
type openingWriter struct {
	http.ResponseWriter
	once sync.Once
	done func()
}

func (w *openingWriter) end() { w.once.Do(w.done) }

func (w *openingWriter) WriteHeader(code int) {
	w.end()
	w.ResponseWriter.WriteHeader(code)
}

func (w *openingWriter) Write(b []byte) (int, error) {
	w.end()
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on (the SDK streams answers).
func (w *openingWriter) Flush() {
	w.end()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap is for http.ResponseController.
func (w *openingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// CodeUnauthorized is the JSON-RPC error code of a 401's body.
const CodeUnauthorized = -32001

// unauthorized answers r 401 with a JSON-RPC error response whose
// message is hint, and a challenge naming the scheme alone: no
// resource_metadata, the parameter that makes a client begin OAuth
// discovery (RFC 9728 §5.1). The response carries the id of r's request
// when the first maxPeek bytes of its body say it within a second (a
// client such as the go-sdk's shows the error of a response it can
// decode, which needs an id), else 0. The connection is closed after.
func unauthorized(w http.ResponseWriter, r *http.Request, hint string) {
	if hint == "" {
		hint = "this mcpward serve wants the header \"Authorization: Bearer TOKEN\""
	}
	id := json.RawMessage("0")
	if r.Method == http.MethodPost {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Second))
		b, _ := io.ReadAll(io.LimitReader(r.Body, maxPeek))
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(b, &m) == nil && len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || (m.ID[0] >= '0' && m.ID[0] <= '9')) {
			id = m.ID
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": CodeUnauthorized, "message": "unauthorized: " + hint}})
	h := w.Header()
	h.Set("WWW-Authenticate", `Bearer realm="mcpward"`)
	h.Set("Content-Type", "application/json")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(append(body, '\n'))
}

// maxPeek bounds what a 401 reads of a request's body for its id.
const maxPeek = 4 << 10

// initialized counts the sessions that completed initialize (a session a
// request without Mcp-Session-Id opens and does not initialize, such as
// the one a 2026-07-28 client's server/discover opens, ends with its
// request).
func (s *Server) initialized() int {
	n := 0
	for ss := range s.srv.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// opensSession reports whether r (a POST without Mcp-Session-Id, its body
// read by readBody) asks for initialize, the one request whose session
// outlives it; a body that is not one JSON-RPC request (a batch) counts
// when it names initialize at all.
func opensSession(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return bytes.Contains(body, []byte(`"initialize"`))
	}
	return m.Method == "initialize"
}

// readBody reads r's body within timeout and MaxBodyBytes and puts it
// back in memory, so no read of the SDK waits on the client; it returns
// the status to answer when it cannot (408, 413, 400), else 0. The
// connection's read deadline is cleared after, so a long response stream
// is not cut by it.
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) int {
	rc := http.NewResponseController(w)
	if timeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(timeout)) // ErrNotSupported: no deadline
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	var ne net.Error
	code := 0
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		code = http.StatusRequestTimeout
	case err != nil:
		code = http.StatusBadRequest
	case len(body) > MaxBodyBytes:
		code = http.StatusRequestEntityTooLarge
	}
	if code != 0 {
		// The deadline passed (or passes now): the server's drain of the
		// unread body fails at once, and the connection closes.
		_ = rc.SetReadDeadline(time.Now())
		return code
	}
	if timeout > 0 {
		_ = rc.SetReadDeadline(time.Time{})
	}
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	return 0
}

// ServeHTTP serves s's HTTPHandler (o.Port set from ln's address) at /mcp
// on ln until ctx ends, then closes ln and the connections (in-flight
// requests get up to 2 s) and returns nil. Connections past
// o.MaxConnections are answered 503 with Retry-After and closed before a
// request is read; a connection waits at most o.HeaderTimeout for a
// request's headers and o.IdleTimeout between requests; headers are
// bounded by MaxHeaderBytes. It returns the listener's error otherwise.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	if _, port, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		o.Port = port
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.HTTPHandler(o))
	if n := orDefault(o.MaxConnections, DefaultMaxConnections); n > 0 {
		ln = newLimitListener(ln, n)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: orDefault(o.HeaderTimeout, DefaultHeaderTimeout),
		IdleTimeout:       orDefault(o.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	if srv.IdleTimeout == 0 {
		// http.Server reads 0 as "use ReadTimeout", itself 0: never.
		srv.IdleTimeout = -1
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
		<-errc
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// limitListener is a listener that keeps at most cap(slots) connections
// open: one more is answered 503 and closed at once, never queued.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	rejecting chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), rejecting: make(chan struct{}, maxRejecting)}
}

// Accept returns the next connection within the cap.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			l.reject(c)
		}
	}
}

// busy is the response to a connection over the cap.
var busy = []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: " + strconv.Itoa(RetryAfter) +
	"\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 21\r\n\r\ntoo many connections\n")

// reject answers c 503 and closes it, in a goroutine of its own (at most
// maxRejecting at once; past them c is closed unanswered). It reads what
// the client sends for a moment after, so the client reads the answer
// rather than a reset.
func (l *limitListener) reject(c net.Conn) {
	select {
	case l.rejecting <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.rejecting }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(busy); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// limitConn gives its slot back when closed (once).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// loopbackHost reports whether hostport names a loopback host, with port
// when port is not "".
func loopbackHost(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if port != "" && p != port {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
