package httptransport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
)

// Transport is the admitted Streamable HTTP client transport of one server
// (an mcp.Transport), made by Factory.Transport. Its connection speaks the
// protocol's HTTP framing itself, in both protocol eras, as the go-sdk's
// StreamableClientTransport does for every legitimate server (see Connect),
// and sends every request through HTTPClient's Transport, the admitted
// round tripper the package comment describes (a POST goes to it directly,
// not through http.Client, whose only work here would be a copy of the
// header: redirects are refused below it, and it has no timeout or jar).
//
// Connect may be called more than once; each connection is independent.
// SetInboundFilter and CloseIdleConnections are safe for concurrent use.
type Transport struct {
	// Endpoint is the admitted URL. Changing it after construction is not
	// supported.
	Endpoint string
	// HTTPClient is the admitted client; its Transport is the round
	// tripper every request goes through. Do not replace it or its
	// Transport: the policies of the package comment live there (a
	// connection sends its POSTs to that round tripper as made, whatever
	// HTTPClient holds).
	HTTPClient *http.Client
	// MaxRetries bounds the reconnects of one SSE stream without progress
	// (Options.MaxRetries: 0 means 5, negative none).
	MaxRetries int

	rt *roundTripper
}

// SetInboundFilter makes the connections of t ask admit about every
// request and notification the server sends in an SSE stream (its method,
// and whether it is a request) before it is decoded and queued, and drop
// the message when admit returns false; responses pass. It is
// mcpsession's Conn.InboundFilter: a flood must be cut before it is
// queued. A JSON reply carries one message, the answer to one request,
// and is not filtered. admit is called from the goroutine reading the
// stream and must not block. A later call replaces the filter; nil
// removes it. Safe for concurrent use.
func (t *Transport) SetInboundFilter(admit func(method string, call bool) bool) {
	if admit == nil {
		t.rt.filter.Store(nil)
	} else {
		t.rt.filter.Store(&admit)
	}
}

// CloseIdleConnections ends this transport's hold on its origin's shared
// http.Transport (see Factory.Transport). Call it once the session has
// ended. Safe for concurrent use.
func (t *Transport) CloseIdleConnections() { t.HTTPClient.CloseIdleConnections() }

// errRejected is the go-sdk's jsonrpc2.ErrRejected by its code: a Write
// error that wraps it fails that one request, not the connection
// (*jsonrpc.Error's Is compares codes).
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// Reconnect backoff, as the go-sdk's: the first delay, its growth and cap.
const (
	reconnectInitial = time.Second
	reconnectGrow    = 1.5
	reconnectMax     = 30 * time.Second
	// closeDeleteTimeout bounds the DELETE sent by Close.
	closeDeleteTimeout = 5 * time.Second
	// incomingQueue is the number of decoded messages queued for Read.
	incomingQueue = 10
)

// Connect implements mcp.Transport. The connection it returns
//
//   - POSTs each message with the SDK's Content-Type and Accept headers,
//     Mcp-Protocol-Version (the version in a request's own _meta, else the
//     one negotiated: sniffed from the initialize reply, or named in the
//     _meta of the modern-era requests after server/discover), Mcp-Session-Id (legacy era; a
//     different id later fails that request), and from 2026-07-28 on
//     Mcp-Method, Mcp-Name and Mcp-Param-* (WithTool);
//   - reads a JSON answer already bounded by the receive cap, and an SSE
//     answer with its own parser (events over the cap fail the
//     connection, Class Protocol ReasonReceiveCap), the inbound filter
//     applied before decoding;
//   - resumes a call's SSE stream that breaks before its answer with GET
//     and Last-Event-ID, honouring retry:, at most MaxRetries times
//     without progress (a stream without ids is not resumed: the call
//     gets "request terminated without response");
//   - in the legacy era, opens the standalone GET stream when
//     notifications/initialized is written, before it is sent, as the SDK
//     does (405, another 4xx or a non-SSE answer mean none), and sends DELETE at Close when it has a
//     session id the server has not declared gone (404);
//   - in the 2026-07-28 era keeps no session and no GET stream; a failed
//     server/discover or subscriptions/listen fails that request only.
//
// A Write error that wraps the SDK's ErrRejected code fails that request
// only: a request that could not be sent, a JSON-RPC error body, a
// transient status. Read returns the connection's failure once it has
// one, io.EOF after Close. Close cancels every request and stream and
// waits for its goroutines. Errors carry *refusal.Error values as
// described on Factory.Transport; their text names at most the origin.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	maxRetries := t.MaxRetries
	switch {
	case maxRetries == 0:
		maxRetries = 5
	case maxRetries < 0:
		maxRetries = 0
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &conn{
		t:          t,
		url:        t.Endpoint,
		client:     t.HTTPClient,
		rt:         t.rt,
		maxRetries: maxRetries,
		ctx:        cctx,
		cancel:     cancel,
		incoming:   make(chan jsonrpc.Message, incomingQueue),
		done:       make(chan struct{}),
		failed:     make(chan struct{}),
		sniff:      map[jsonrpc.ID]struct{}{},
	}, nil
}

// conn is one connection of a Transport (mcp.Connection).
type conn struct {
	t          *Transport
	url        string
	client     *http.Client
	rt         *roundTripper
	maxRetries int

	ctx    context.Context // the connection's, detached from Connect's
	cancel context.CancelFunc

	incoming chan jsonrpc.Message
	done     chan struct{} // closed by Close
	wg       sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	failOnce sync.Once
	failure  error
	failed   chan struct{}

	mu         sync.Mutex
	sessionID  string
	version    string                  // negotiated: from the initialize answer, or a modern request's _meta
	sniff      map[jsonrpc.ID]struct{} // initialize requests awaiting their answer
	standalone bool                    // the standalone GET stream was started
	closing    bool                    // Close has started: no new goroutine
}

func (c *conn) fail(err error) {
	if err == nil {
		return
	}
	c.failOnce.Do(func() {
		c.failure = err
		close(c.failed)
	})
}

func (c *conn) failErr() error {
	select {
	case <-c.failed:
		return c.failure
	default:
		return nil
	}
}

// SessionID implements mcp.Connection.
func (c *conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := c.failErr(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.failed:
		return nil, c.failErr()
	case <-c.done:
		return nil, io.EOF
	case msg := <-c.incoming:
		return msg, nil
	}
}

// refuse is a refusal of this connection's server.
func (c *conn) refuse(class refusal.Class, reason string) *refusal.Error {
	return c.rt.refuse(class, reason)
}

// rejected wraps err so that it fails one request only.
func rejected(err error) error { return fmt.Errorf("%w: %w", errRejected, err) }

// clientError strips the *url.Error net/http wraps a request's failure in
// (its text carries the URL, query included).
func clientError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// setHeaders sets the protocol headers of a request carrying msg (nil for
// GET and DELETE).
func (c *conn) setHeaders(ctx context.Context, h http.Header, msg jsonrpc.Message) {
	c.mu.Lock()
	version, session := c.version, c.sessionID
	c.mu.Unlock()
	req, _ := msg.(*jsonrpc.Request)
	if req != nil {
		if v := metaVersion(req.Params); v != "" {
			version = v
		}
	}
	if version != "" {
		h[hdrProtocolVersion] = []string{version}
	}
	if session != "" {
		h[hdrSessionID] = []string{session}
	}
	setStandardHeaders(ctx, h, version, req)
}

// requestContext returns the context a request of ctx runs under: it ends
// with ctx and with the connection.
func (c *conn) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	return rctx, func() { stop(); cancel() }
}

// The values of a POST's Content-Type and Accept headers, shared by
// every request (nothing writes into a header's values).
var (
	contentTypeJSON = []string{"application/json"}
	acceptPost      = []string{"application/json, text/event-stream"}
)

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := c.failErr(); err != nil {
		return err
	}
	var forCall *jsonrpc.Request
	var method string
	switch m := msg.(type) {
	case *jsonrpc.Request:
		method = m.Method
		if m.IsCall() {
			forCall = m
			if m.Method == "initialize" {
				c.mu.Lock()
				c.sniff[m.ID] = struct{}{}
				c.mu.Unlock()
			}
		}
		if m.Method != "server/discover" {
			// A modern-era request names its version in _meta once the
			// SDK has taken the discover result (which the host may still
			// refuse, falling back to initialize): that is the version
			// the SDK's own transport is told.
			if v := metaVersion(m.Params); v != "" {
				c.mu.Lock()
				c.version = v
				c.mu.Unlock()
			}
		}
	case *jsonrpc.Response:
	default:
		return rejected(c.refuse(refusal.Internal, "message_invalid"))
	}
	if method == "notifications/initialized" {
		// As the SDK does once it has the initialize result: the
		// standalone stream is up before the server hears the session
		// is initialized (a server may send on it at once).
		c.startStandalone()
		if err := c.failErr(); err != nil {
			return err
		}
	}
	data, err := appendMessage(nil, msg)
	if err != nil {
		return rejected(c.refuse(refusal.Internal, "message_invalid"))
	}

	// One context per request, ending with ctx and with the connection;
	// the request goes to the roundTripper itself (http.Client adds
	// nothing here but a copy of the header: the roundTripper refuses
	// redirects, and the client has no timeout or cookie jar).
	rctx, link := linkContext(ctx, c.ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		link.release()
		return rejected(c.refuse(refusal.Config, ReasonURLInvalid))
	}
	req.Header["Content-Type"] = contentTypeJSON
	req.Header["Accept"] = acceptPost
	c.setHeaders(ctx, req.Header, msg)
	resp, err := c.rt.sendOwned(ctx, req, link)
	if err != nil {
		if ctx.Err() != nil {
			return rejected(ctx.Err())
		}
		return rejected(clientError(err))
	}

	if err := c.checkResponse(resp); err != nil {
		if method == "server/discover" || method == "subscriptions/listen" || errors.Is(err, errRejected) {
			if !errors.Is(err, errRejected) {
				err = rejected(err)
			}
			return err
		}
		c.fail(err)
		return err
	}
	if err := c.takeSession(resp); err != nil {
		resp.Body.Close()
		return err
	}
	if forCall == nil {
		resp.Body.Close()
		return nil
	}
	switch mediaType(resp) {
	case "application/json":
		defer resp.Body.Close()
		var body []byte
		if bb, ok := resp.Body.(*bufferedBody); ok {
			body = bb.b // read in full under the cap by roundTripper.capBody
		} else {
			b, err := io.ReadAll(io.LimitReader(resp.Body, c.rt.cap+1))
			if err != nil {
				err = c.streamError(err)
				c.fail(err)
				return err
			}
			body = b
		}
		m, err := decodeMessage(body)
		if bb, ok := resp.Body.(*bufferedBody); ok {
			bb.recycle() // decodeMessage retains no byte of body
		}
		if err != nil {
			err = c.refuse(refusal.Protocol, ReasonMalformedMessage)
			c.fail(err)
			return err
		}
		c.observe(m)
		c.deliver(m)
		return nil
	case "text/event-stream":
		// The request's context ends with the body; the stream and its
		// resumptions run under ctx and the connection's context.
		if !c.spawn(func() { c.handleSSE(ctx, resp, forCall) }) {
			resp.Body.Close()
			return rejected(c.refuse(refusal.Transient, ReasonConnectionClosed))
		}
		return nil
	default:
		resp.Body.Close()
		err := c.refuse(refusal.Protocol, ReasonContentType)
		c.fail(err)
		return err
	}
}

// spawn runs f in a goroutine Close waits for, unless Close has started
// (then it reports false and f does not run).
func (c *conn) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// deliver queues m for Read, in a goroutine of its own when the queue is
// full (the SDK's reader may be waiting on this very Write).
func (c *conn) deliver(m jsonrpc.Message) {
	select {
	case c.incoming <- m:
		return
	case <-c.done:
		return
	default:
	}
	c.spawn(func() {
		select {
		case c.incoming <- m:
		case <-c.done:
		}
	})
}

// observe notes the negotiated protocol version from the answer to the
// initialize request.
func (c *conn) observe(m jsonrpc.Message) {
	resp, ok := m.(*jsonrpc.Response)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sniff[resp.ID]; !ok {
		return
	}
	delete(c.sniff, resp.ID)
	if resp.Error != nil {
		return
	}
	if v, ok := member(resp.Result, "protocolVersion"); ok && len(v) > 0 && v[0] == '"' {
		c.version = unquote(v)
	}
}

// takeSession records the session id of resp, the first one given.
func (c *conn) takeSession(resp *http.Response) error {
	id := resp.Header.Get(hdrSessionID)
	if id == "" {
		return nil
	}
	c.mu.Lock()
	had := c.sessionID
	if had == "" {
		c.sessionID = id
	}
	c.mu.Unlock()
	if had != "" && had != id {
		return c.refuse(refusal.Protocol, ReasonSessionMismatch)
	}
	return nil
}

// checkResponse turns a status that is not 2xx into the error of the
// request (its body closed): the JSON-RPC error a body carries, wrapped
// to fail the request only, ErrSessionMissing for 404 with a session id,
// a transient status wrapped to fail the request only, else a
// *StatusError.
func (c *conn) checkResponse(resp *http.Response) error {
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return nil
	}
	defer resp.Body.Close()
	// An SSE body passes roundTripper uncapped (a GET's 4xx, a 404 with a
	// session id): read no more of it than the cap allows a message.
	if body, err := io.ReadAll(io.LimitReader(resp.Body, c.rt.cap+1)); err == nil && int64(len(body)) <= c.rt.cap {
		if m, err := decodeMessage(body); err == nil {
			if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil {
				return fmt.Errorf("%w: %w: %w", r.Error, errRejected, newStatusError(code, c.rt.server, c.rt.origin))
			}
		}
	}
	if code == http.StatusNotFound && c.SessionID() != "" {
		return fmt.Errorf("%w: %w", mcp.ErrSessionMissing, newStatusError(code, c.rt.server, c.rt.origin))
	}
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return rejected(newStatusError(code, c.rt.server, c.rt.origin))
	}
	return newStatusError(code, c.rt.server, c.rt.origin)
}

// streamError maps a failure reading a body to a fixed-text error.
func (c *conn) streamError(err error) error {
	switch {
	case errors.Is(err, errSSETooLarge):
		e := c.rt.capError()
		e.Detail = "an event of the stream exceeded the receive cap"
		return e
	case errors.Is(err, errSSEMalformed):
		return c.refuse(refusal.Protocol, ReasonMalformedMessage)
	}
	return c.rt.netError(err)
}

// startStandalone opens the legacy era's standalone GET stream, once: it
// waits for the answer's headers, then reads the stream in a goroutine.
func (c *conn) startStandalone() {
	c.mu.Lock()
	if c.standalone || c.version == "" || c.version >= modernVersion {
		c.mu.Unlock()
		return
	}
	c.standalone = true
	c.mu.Unlock()
	resp, err := c.connectSSE(c.ctx, "", 0, true)
	if err != nil {
		if c.ctx.Err() == nil {
			c.fail(err)
		}
		return
	}
	if resp.StatusCode == http.StatusMethodNotAllowed || mediaType(resp) != "text/event-stream" ||
		(resp.StatusCode >= 400 && resp.StatusCode < 500) {
		discard(resp)
		return // no standalone stream here
	}
	if err := c.checkResponse(resp); err != nil {
		c.fail(err)
		return
	}
	if !c.spawn(func() { c.handleSSE(c.ctx, resp, nil) }) {
		resp.Body.Close()
	}
}

// handleSSE reads one stream (and its resumptions) to its end: the answer
// to forCall, the end of the stream, or the end of ctx.
func (c *conn) handleSSE(ctx context.Context, resp *http.Response, forCall *jsonrpc.Request) {
	var prev string
	noProgress := 0
	for {
		last, delay, over := c.processStream(ctx, resp, forCall)
		if over || (last == "" && forCall != nil) {
			return
		}
		if last != "" && last != prev {
			noProgress, prev = 0, last
		} else if noProgress++; noProgress > c.maxRetries {
			if ctx.Err() == nil && c.ctx.Err() == nil {
				c.fail(c.refuse(refusal.Transient, ReasonStreamRetries))
			}
			return
		}
		next, err := c.connectSSE(ctx, last, delay, false)
		if err != nil {
			if ctx.Err() == nil && c.ctx.Err() == nil {
				c.fail(err)
			}
			return
		}
		if err := c.checkResponse(next); err != nil {
			c.fail(err)
			return
		}
		resp = next
	}
}

// processStream reads the events of one response. It returns the last
// event id seen and the retry delay asked for, and over when the stream
// needs no resumption (its call was answered, the connection or ctx
// ended, or the stream failed the connection).
func (c *conn) processStream(ctx context.Context, resp *http.Response, forCall *jsonrpc.Request) (last string, delay time.Duration, over bool) {
	s := newSSEReader(resp.Body, c.rt.cap)
	if forCall == nil {
		s.lasting() // the standalone stream: open as long as the session
	}
	answered := false
	defer func() {
		s.release()
		if answered {
			// The server ends the stream after the answer: read to its end
			// (bounded) so the connection is reused.
			io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
		}
		resp.Body.Close()
	}()
	for {
		ev, err := s.next()
		if err != nil {
			if ctx.Err() != nil || c.ctx.Err() != nil {
				return "", 0, true
			}
			if errors.Is(err, errSSETooLarge) || errors.Is(err, errSSEMalformed) {
				c.fail(c.streamError(err))
				return "", 0, true
			}
			break
		}
		if ev.id != "" {
			last = ev.id
		}
		if ev.retry != "" {
			if n, err := strconv.ParseInt(ev.retry, 10, 64); err == nil {
				delay = time.Duration(n) * time.Millisecond
			}
		}
		if len(ev.data) == 0 || (ev.name != "" && ev.name != "message") {
			continue
		}
		if admit := c.rt.filter.Load(); admit != nil {
			if method, call, ok := topMethod(ev.data); ok && !(*admit)(method, call) {
				continue
			}
		}
		m, err := decodeMessage(ev.data)
		if err != nil {
			c.fail(c.refuse(refusal.Protocol, ReasonMalformedMessage))
			return "", 0, true
		}
		c.observe(m)
		select {
		case c.incoming <- m:
		case <-c.done:
			return "", 0, true
		}
		if r, ok := m.(*jsonrpc.Response); ok && forCall != nil && r.ID == forCall.ID {
			answered = true
			return "", 0, true
		}
	}
	if last == "" && forCall != nil {
		select {
		case c.incoming <- &jsonrpc.Response{ID: forCall.ID, Error: errors.New("request terminated without response")}:
		case <-c.done:
		}
	}
	return last, delay, false
}

// connectSSE GETs a stream (resuming after lastEventID when set), with
// the SDK's backoff between attempts; delay, when positive, is the first
// wait (the server's retry:). It returns the response as received.
func (c *conn) connectSSE(ctx context.Context, lastEventID string, delay time.Duration, initial bool) (*http.Response, error) {
	attempt := 0
	if !initial {
		attempt = 1
	}
	wait := backoff(attempt)
	if delay > 0 {
		wait = delay
	}
	var last error
	for ; attempt <= c.maxRetries; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-c.done:
			t.Stop()
			return nil, c.refuse(refusal.Transient, ReasonConnectionClosed)
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		rctx, stop := c.requestContext(ctx)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, c.url, nil)
		if err != nil {
			stop()
			return nil, c.refuse(refusal.Config, ReasonURLInvalid)
		}
		c.setHeaders(ctx, req.Header, nil)
		if lastEventID != "" {
			req.Header[hdrLastEventID] = []string{lastEventID}
		}
		req.Header["Accept"] = []string{"text/event-stream"}
		resp, err := c.client.Do(req)
		if err != nil {
			stop()
			last = clientError(err)
			wait = backoff(attempt + 1)
			continue
		}
		resp.Body = &stopBody{ReadCloser: resp.Body, stop: stop}
		return resp, nil
	}
	if last != nil {
		return nil, last
	}
	return nil, c.refuse(refusal.Transient, ReasonStreamRetries)
}

// stopBody runs stop when the body is closed.
type stopBody struct {
	io.ReadCloser
	stop func()
}

func (b *stopBody) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	return err
}

// backoff is the SDK's reconnect delay for an attempt: exponential with
// full jitter, none for the first.
func backoff(attempt int) time.Duration {
	if attempt == 0 {
		return 0
	}
	d := reconnectInitial
	for i := 1; i < attempt && d < reconnectMax; i++ {
		d = time.Duration(float64(d) * reconnectGrow)
	}
	d = min(d, reconnectMax)
	return d + rand.N(d)
}

// Close implements mcp.Connection: DELETE for a live session, then every
// request and stream is cancelled; it returns once the connection's
// goroutines are done.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		if id := c.SessionID(); id != "" && !errors.Is(c.failErr(), mcp.ErrSessionMissing) {
			dctx, stop := context.WithTimeout(c.ctx, closeDeleteTimeout)
			req, err := http.NewRequestWithContext(dctx, http.MethodDelete, c.url, nil)
			if err == nil {
				c.setHeaders(dctx, req.Header, nil)
				if resp, err := c.client.Do(req); err != nil {
					c.closeErr = clientError(err)
				} else {
					discard(resp)
				}
			}
			stop()
		}
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.cancel()
		close(c.done)
		c.wg.Wait()
	})
	return c.closeErr
}
