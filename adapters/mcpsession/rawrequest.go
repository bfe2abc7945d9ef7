package mcpsession

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/jsontext"
)

// A request path of the session's own, beside the SDK's, on the same
// connection. The SDK's client session decodes every result it awaits
// into its typed value (twice: jsonrpc2's Await, then the type's
// UnmarshalJSON, each with a fresh decoder and its buffers); a result the
// session only passes on as JSON (a tools/call result, a listing page)
// needs none of that. roundTrip writes a request with an id the SDK never
// uses (a string: the SDK's ids are integers) through the connection the
// SDK reads from, and the connection's wrapper (rawConn) takes the
// matching response off Read before the SDK sees it. Everything else read
// — server requests, notifications, responses to the SDK's own ids —
// reaches the SDK exactly as it would without the wrapper, after the
// transport's inbound gate (Conn.InboundFilter) as before.
//
// Writes: an mcp.Connection's Write must be safe for concurrent use (the
// SDK writes calls and responses from many goroutines at once), so a
// request of ours written beside the SDK's needs nothing more
// (stdiotransport serializes whole lines under a mutex; httptransport
// sends each message in its own POST; TestRawWriteConcurrentWithSDK
// checks both shapes of interleaving on a real session).

// rawIDPrefix starts the id of every request the session sends itself;
// the rest is a counter, so an id is unique within the session.
const rawIDPrefix = "mcpward-rt-"

// errRawUnavailable is roundTrip's error when the session has no request
// path of its own (see rawPath): the caller uses the SDK's.
var errRawUnavailable = errors.New("mcpsession: no raw request path")

// rawPath is the session's own request path: the requests in flight by
// id, and how the connection ended. Safe for concurrent use.
type rawPath struct {
	mu      sync.Mutex
	conn    mcp.Connection // the wrapped connection, once connected
	next    uint64
	pending map[string]chan *jsonrpc.Response
	ended   error // set once, when Read failed or the connection closed

	// meta holds, on a modern session, the SEP-2575 _meta members the SDK
	// puts on every request beside the protocol version (clientInfo and
	// clientCapabilities, encoded as the SDK encodes them), taken from its
	// server/discover request (captureMeta); nil until then.
	meta struct {
		sync.Mutex
		caps, info json.RawMessage
	}
}

// wrapTransport returns t with its connection wrapped for the session's own
// request path, and the path; or t itself and nil when t's connection must
// reach the SDK unwrapped: the SDK's own Streamable HTTP client connection
// is told of the session's state through an unexported method no wrapper
// outside the SDK can forward (mcpward's transports need none).
func wrapTransport(t mcp.Transport) (mcp.Transport, *rawPath) {
	if _, ok := t.(*mcp.StreamableClientTransport); ok {
		return t, nil
	}
	p := &rawPath{}
	return rawTransport{t: t, p: p}, p
}

// rawTransport wraps a transport's connection in a rawConn.
type rawTransport struct {
	t mcp.Transport
	p *rawPath
}

// Connect connects the wrapped transport.
func (r rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	r.p.mu.Lock()
	r.p.conn = c
	r.p.mu.Unlock()
	return &rawConn{Connection: c, p: r.p}, nil
}

// rawConn is the connection the SDK reads from and writes to: the
// transport's, with the responses to the session's own requests taken off
// Read.
type rawConn struct {
	mcp.Connection
	p *rawPath
}

// Read returns the next message for the SDK: a response to one of the
// session's own requests goes to its caller instead. When the connection
// fails, every own request in flight fails with the same error the SDK's
// requests get.
func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			c.p.end(err)
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Response); ok && c.p.take(r) {
			continue
		}
		return m, nil
	}
}

// Close closes the connection; own requests still in flight fail as after
// a read error (io.EOF, which the transports' Read returns after Close).
func (c *rawConn) Close() error {
	err := c.Connection.Close()
	c.p.end(io.EOF)
	return err
}

// take hands r to the request of ours it answers and reports whether it
// was one (a response with one of our ids whose caller has gone is
// dropped, as the SDK drops a response it no longer awaits).
func (p *rawPath) take(r *jsonrpc.Response) bool {
	id, ok := r.ID.Raw().(string)
	if !ok || !strings.HasPrefix(id, rawIDPrefix) {
		return false
	}
	p.mu.Lock()
	ch := p.pending[id]
	delete(p.pending, id)
	p.mu.Unlock()
	if ch != nil {
		ch <- r // buffered: one response per request
	}
	return true
}

// end fails every request in flight with err (the first end wins).
func (p *rawPath) end(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended != nil {
		return
	}
	p.ended = err
	for id, ch := range p.pending {
		ch <- &jsonrpc.Response{Error: err}
		delete(p.pending, id)
	}
}

// register adds a request in flight; it fails once the connection ended.
func (p *rawPath) register() (string, chan *jsonrpc.Response, mcp.Connection, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended != nil || p.conn == nil {
		return "", nil, nil, errRawEnded
	}
	p.next++
	id := rawIDPrefix + strconv.FormatUint(p.next, 10)
	ch := make(chan *jsonrpc.Response, 1)
	if p.pending == nil {
		p.pending = make(map[string]chan *jsonrpc.Response)
	}
	p.pending[id] = ch
	return id, ch, p.conn, nil
}

// errRawEnded marks a request made after the connection ended.
var errRawEnded = errors.New("connection ended")

// forget drops a request in flight.
func (p *rawPath) forget(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// roundTrip sends one request of method with params (one JSON object,
// _meta included: see appendParamsOpen) on the session's own path and
// returns the raw result of its response.
//
// Its errors are shaped as the SDK's client session's for the same
// request, so that s.failure classifies them as it classifies the SDK's:
//   - errRawUnavailable when the session has no own path (the caller uses
//     the SDK's);
//   - ctx's error when ctx ended first (a notifications/cancelled for the
//     request is sent in the background, as the SDK does);
//   - "calling <method>: " wrapping the *jsonrpc.Error of an error reply,
//     or the transport's Write error, or the connection's read error when
//     it ended with the request in flight;
//   - mcp.ErrConnectionClosed when the connection had ended before.
//
// Safe for concurrent use.
func (s *session) roundTrip(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p := s.raw
	if p == nil {
		return nil, errRawUnavailable
	}
	id, ch, conn, err := p.register()
	if err != nil {
		return nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, method, err)
	}
	rid, _ := jsonrpc.MakeID(id)
	if err := conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: params}); err != nil {
		p.forget(id)
		if ctx.Err() != nil {
			s.cancelled(ctx, conn, id)
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("calling %q: %w", method, r.Error)
		}
		return r.Result, nil
	case <-ctx.Done():
		p.forget(id)
		s.cancelled(ctx, conn, id)
		return nil, ctx.Err()
	}
}

// cancelTimeout bounds the notifications/cancelled sent for an abandoned
// request (the SDK's notifyCancellationTimeout).
const cancelTimeout = 5 * time.Second

// cancelled tells the server, in the background and best effort, that
// the request id was abandoned because ctx ended, as the SDK does for its
// own requests.
func (s *session) cancelled(ctx context.Context, conn mcp.Connection, id string) {
	b := append([]byte(`{"reason":`), jsontext.AppendStringNoHTML(nil, ctx.Err().Error())...)
	b = append(b, `,"requestId":`...)
	b = jsontext.AppendStringNoHTML(b, id)
	b = append(b, '}')
	nctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	go func() {
		defer stop()
		_ = conn.Write(nctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: b})
	}()
}

// captureMeta is a sending middleware that keeps the SEP-2575 _meta
// members of the SDK's server/discover request (its client identity and
// capabilities, which the SDK puts on every later request of a modern
// session as well), encoded as the SDK encodes a request's params.
func (s *session) captureMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" && s.raw != nil {
			if p := req.GetParams(); p != nil && !reflectNil(p) {
				m := p.GetMeta()
				caps, err1 := sdkJSON(m[mcp.MetaKeyClientCapabilities])
				info, err2 := sdkJSON(m[mcp.MetaKeyClientInfo])
				s.raw.meta.Lock()
				s.raw.meta.caps, s.raw.meta.info = nil, nil
				if err1 == nil && err2 == nil && m[mcp.MetaKeyClientCapabilities] != nil {
					s.raw.meta.caps = caps
					if m[mcp.MetaKeyClientInfo] != nil {
						s.raw.meta.info = info
					}
				}
				s.raw.meta.Unlock()
			}
		}
		return next(ctx, method, req)
	}
}

// sdkJSON encodes v as the SDK's jsonrpc2 encodes params (encoding/json
// without HTML escaping).
func sdkJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// metaMember is one member of a request's _meta: a key and its JSON value.
type metaMember struct {
	key string
	raw []byte // JSON value, or nil for str
	str string // a string value, encoded as the SDK encodes it
}

// appendParamsOpen appends the opening of a request's params object to
// dst: "{", then, when the request has any, its _meta member and a comma.
// The _meta holds what the SDK's client session would put there for the
// same request: on a modern session its SEP-2575 members (protocol
// version, client identity and capabilities) and the log level the
// session asked for (logLevelMeta), and the request's own members
// (a progress token, a traceparent: strings), keys in encoding/json's
// order. ok is false when it cannot (a modern session whose SDK _meta was
// not captured, a member that is not a string): the caller uses the SDK's
// path.
func (s *session) appendParamsOpen(dst []byte, own mcp.Meta) (_ []byte, ok bool) {
	var members [8]metaMember
	ms := members[:0]
	if s.modern.Load() {
		s.raw.meta.Lock()
		caps, info := s.raw.meta.caps, s.raw.meta.info
		s.raw.meta.Unlock()
		if caps == nil {
			return dst, false
		}
		ms = append(ms,
			metaMember{key: mcp.MetaKeyClientCapabilities, raw: caps},
			metaMember{key: mcp.MetaKeyProtocolVersion, str: s.identity.ProtocolVersion})
		if info != nil {
			ms = append(ms, metaMember{key: mcp.MetaKeyClientInfo, raw: info})
		}
	}
	if level, _ := s.logLevel.Load().(string); level != "" {
		ms = append(ms, metaMember{key: mcp.MetaKeyLogLevel, str: level})
	}
	for k, v := range own {
		str, isStr := v.(string)
		if !isStr || len(ms) == len(members) || slices.ContainsFunc(ms, func(m metaMember) bool { return m.key == k }) {
			return dst, false
		}
		ms = append(ms, metaMember{key: k, str: str})
	}
	dst = append(dst, '{')
	if len(ms) == 0 {
		return dst, true
	}
	slices.SortFunc(ms, func(a, b metaMember) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, `"_meta":{`...)
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsontext.AppendStringNoHTML(dst, m.key)
		dst = append(dst, ':')
		if m.raw != nil {
			dst = append(dst, m.raw...)
		} else {
			dst = jsontext.AppendStringNoHTML(dst, m.str)
		}
	}
	return append(dst, '}', ','), true
}
