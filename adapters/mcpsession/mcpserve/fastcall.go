package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/mcpsession/internal/sdkjson"
	"github.com/mcpward/mcpward/core/jsontext"
)

// serve's own tools/call at its stdio connection.
//
// The go-sdk server decodes every request twice before a tool handler
// runs (its _meta, then its params, each with a fresh decoder and its
// 32 KiB buffer) and queues it through its dispatcher. fastConn wraps the
// stdio connection ServeStdio serves and takes, as it reads them, the
// tools/call requests for which it can show that the SDK server would do
// nothing but what it does itself; it hands every other message to the SDK
// unchanged. A request it takes runs the same code the SDK would run:
// the Server's receiving middleware (Options.Observer, Options.Ready), the
// tool's handler (toolHandler) with a *mcp.CallToolRequest whose Session
// is the connection's real *mcp.ServerSession, and the SDK's own
// post-processing of a tool result; its answer is the result encoded as
// the SDK encodes one, written by the same connection (jsonrpcwire).
//
// A tools/call is taken only when all of these hold (else the SDK has it):
//   - the session is initialized (an initialize, or the _meta of a
//     2026-07-28 client's first request, went through the SDK);
//   - its params are valid UTF-8 and valid JSON, an object whose members
//     are "name" (a string without escapes), at most "arguments" (an
//     object) and at most "_meta" (an object without escapes), each once,
//     nested well below the SDK decoder's depth limit: no requestState
//     or inputResponses (a retry of a round is the SDK's);
//   - a session before 2026-07-28 sent no _meta at all (so no progress
//     token or trace context; the SDK would neither check a _meta nor set
//     a resultType, and toolHandler takes its legacy path, a legacy
//     client's rounds put to it on its session); a 2026-07-28 session sent
//     a _meta that is byte for byte one the SDK accepted (answered with a
//     result) on this connection before, selects 2026-07-28 and carries no
//     progress token: the SDK's check of a request's _meta depends on its
//     bytes alone, so it would pass again (the SDK then sets the result's
//     resultType and serverInfo, as marshalModern does);
//   - the name is offered now (so Options.Ready would not wait, and the
//     SDK would find the tool);
//   - the request has an id that neither the SDK (a call handed to it and
//     not yet answered) nor the fast path has in flight;
//   - the connection is not closing, and neither its reads nor its writes
//     have failed (the SDK would refuse the call).
//
// The rules the SDK applies to a call it dispatches are applied to a
// taken one: it runs on its own goroutine at once (the SDK runs every
// call on its own goroutine, unbounded), under a context that a
// notifications/cancelled naming its id cancels (the notification is
// also handed to the SDK, as before), as does a failed read; a call that
// reuses its id while it runs is dropped unanswered, as the SDK drops one;
// its answer is not written once the connection is closing or broken;
// and the connection's Close waits for it, as the SDK's Close waits for
// its own. The SDK's request context also carries a 2026-07-28 request's
// log level; nothing on a call's path reads it (Server.Log sends with a
// context of its own), so the fast path does not set it.
type fastConn struct {
	mcp.Connection
	s    *Server
	base context.Context // the calls' parent: ServeStdio's ctx, never cancelled

	ss      atomic.Pointer[mcp.ServerSession]
	closing atomic.Bool // ServeStdio is closing the session, or Close ran
	broken  atomic.Bool // a read or a write failed

	mu sync.Mutex
	// sdk holds the calls handed to the SDK, not yet answered, each with
	// the _meta of a tools/call of the fast path's shape ("" none).
	sdk  map[jsonrpc.ID]string
	fast map[jsonrpc.ID]context.CancelCauseFunc // calls taken, not yet answered
	// valid holds the _meta values of tools/calls the SDK answered with a
	// result, so accepted (its check of a request's _meta depends on
	// the _meta's bytes alone), at most maxValidMetas, each with its
	// decoding once the fast path needed it.
	valid map[string]*validMeta
	wg    sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// fastTransport is a transport whose connection is a fastConn.
type fastTransport struct {
	t    mcp.Transport
	s    *Server
	base context.Context
	conn *fastConn // set by Connect
}

// Connect connects the wrapped transport and wraps its connection.
func (t *fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &fastConn{Connection: c, s: t.s, base: t.base,
		sdk: map[jsonrpc.ID]string{}, fast: map[jsonrpc.ID]context.CancelCauseFunc{}, valid: map[string]*validMeta{}}
	return t.conn, nil
}

// Read returns the next message that is not a tools/call taken by the
// fast path.
func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			// As the SDK does with its own calls: with the reader gone no
			// cancel can arrive and no answer can be written.
			c.broken.Store(true)
			c.cancelAll(err)
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if !req.IsCall() {
			if req.Method == "notifications/cancelled" {
				c.cancelled(req.Params)
			}
			return msg, nil
		}
		if c.takes(req) {
			continue
		}
		return msg, nil
	}
}

// takes reports whether req was taken by the fast path (dispatched, or
// dropped as a reuse of the id of a call it runs); otherwise it is
// recorded as the SDK's. What needs the session's or the Server's lock is
// looked up before c.mu is taken (the SDK may write, so take c.mu, while
// the Server holds its own).
func (c *fastConn) takes(req *jsonrpc.Request) bool {
	var (
		ss              *mcp.ServerSession
		name            string
		args, metaBytes json.RawMessage
		parsed, named   bool
		modern, known   bool
	)
	if req.Method == "tools/call" {
		name, args, metaBytes, parsed = parseCall(req.Params)
	}
	if parsed && !c.closing.Load() && !c.broken.Load() {
		if ss = c.ss.Load(); ss != nil {
			modern, known = sessionEra(ss)
		}
		if known {
			_, named = c.s.toolBackend(name)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.fast[req.ID]; dup {
		// The SDK drops a call whose id one of its calls holds: it
		// answers it with a null id, which makes the answer a
		// notification's, never written.
		return true
	}
	if _, sdkHas := c.sdk[req.ID]; sdkHas {
		return false // the SDK drops it, its first call keeps the id
	}
	var meta mcp.Meta
	offered := false
	switch {
	case !named:
	case !modern:
		// A legacy request: no _meta at all.
		offered = metaBytes == nil
	case metaBytes != nil && c.valid[string(metaBytes)] != nil:
		// A modern request whose _meta, byte for byte, the SDK already
		// accepted on this connection.
		meta, offered = c.valid[string(metaBytes)].get(metaBytes)
	}
	if !offered {
		v := ""
		if parsed && metaBytes != nil {
			v = string(metaBytes)
		}
		c.sdk[req.ID] = v
		return false
	}
	ctx, cancel := context.WithCancelCause(c.base)
	c.fast[req.ID] = cancel
	c.s.fastTaken.Add(1)
	c.wg.Add(1)
	var extra *mcp.RequestExtra
	if x, ok := req.Extra.(*mcp.RequestExtra); ok {
		extra = x
	}
	r := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Meta: meta, Name: name, Arguments: args}, Extra: extra}
	go c.serve(ctx, cancel, req.ID, r, modern)
	return true
}

// sessionEra reports whether ss was initialized (known) and whether by a
// client of 2026-07-28 or later (modern): by an initialize, or by the
// _meta of the first request of a modern client.
func sessionEra(ss *mcp.ServerSession) (modern, known bool) {
	ip := ss.InitializeParams()
	if ip == nil {
		return false, false
	}
	return ip.ProtocolVersion >= mrtrVersion, true
}

// maxValidMetas bounds the _meta values a connection remembers as
// accepted by the SDK.
const maxValidMetas = 16

// validMeta is a _meta the SDK accepted, with modernMeta's decoding of
// it once get needed it: a client repeats its _meta, so it is decoded
// once per connection, not once per call.
type validMeta struct {
	decoded, ok bool
	meta        mcp.Meta
}

// get is modernMeta(b) for b, the bytes v was recorded for: a copy of the
// decoded value of its own (cloneJSON), so that no two calls share one.
// The caller holds the connection's lock.
func (v *validMeta) get(b json.RawMessage) (mcp.Meta, bool) {
	if !v.decoded {
		v.meta, v.ok = modernMeta(b)
		v.decoded = true
	}
	if !v.ok {
		return nil, false
	}
	return cloneJSON(map[string]any(v.meta)).(map[string]any), true
}

// cloneJSON is a deep copy of v, a value encoding/json decoded into an
// any: its objects and arrays copied, its strings, numbers, booleans and
// nulls (immutable) shared.
func cloneJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = cloneJSON(e)
		}
		return s
	}
	return v
}

// modernMeta decodes b, a _meta the SDK accepted, as the SDK decodes it
// (no escapes, so every string is its bytes); ok is false when it does
// not select the 2026-07-28 protocol or carries a progress token (left
// to the SDK).
func modernMeta(b json.RawMessage) (mcp.Meta, bool) {
	var m mcp.Meta
	if json.Unmarshal(b, &m) != nil {
		return nil, false
	}
	v, _ := m["io.modelcontextprotocol/protocolVersion"].(string)
	if _, tok := m["progressToken"]; tok || v < mrtrVersion {
		return nil, false
	}
	return m, true
}

// serve runs the call r taken with id and writes its answer.
func (c *fastConn) serve(ctx context.Context, cancel context.CancelCauseFunc, id jsonrpc.ID, r *mcp.CallToolRequest, modern bool) {
	defer c.wg.Done()
	var res mcp.Result
	var err error
	if ctx.Err() != nil {
		// The SDK answers a call cancelled before its handler started
		// with the cause, without running it.
		err = context.Cause(ctx)
	} else {
		res, err = c.s.fastCall(ctx, "tools/call", r)
	}
	if res != nil && err != nil {
		res = nil
	}
	var raw json.RawMessage
	if res != nil {
		ctr, _ := res.(*mcp.CallToolResult)
		ok := false
		// The common result without reflection (fastencode.go).
		if raw, ok = c.s.encodeText(ctr, modern); !ok && modern {
			raw, err = c.s.marshalModern(res)
		} else if !ok {
			raw, err = sdkjson.Marshal(res)
		}
		if err != nil {
			c.s.log.Error("mcpserve: a tool result could not be encoded")
		}
	} else if err == nil {
		// Not reached: toolHandler returns a result or an error.
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpserve: a nil result"}
	}
	c.mu.Lock()
	delete(c.fast, id)
	c.mu.Unlock()
	if raw != nil || res == nil {
		c.write(ctx, &jsonrpc.Response{ID: id, Result: raw, Error: err})
	}
	cancel(nil)
}

// write writes an answer unless the connection is closing or broken (the
// SDK writes nothing then).
func (c *fastConn) write(ctx context.Context, m jsonrpc.Message) {
	if c.closing.Load() || c.broken.Load() {
		return
	}
	if err := c.Connection.Write(context.WithoutCancel(ctx), m); err != nil {
		c.broken.Store(true)
		c.cancelAll(err)
	}
}

// Write writes m; an answer of a call the SDK has ends it.
func (c *fastConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok && r.ID.IsValid() {
		c.mu.Lock()
		if meta, ok := c.sdk[r.ID]; ok {
			delete(c.sdk, r.ID)
			if meta != "" && r.Error == nil && len(c.valid) < maxValidMetas && c.valid[meta] == nil {
				c.valid[meta] = &validMeta{}
			}
		}
		c.mu.Unlock()
	}
	err := c.Connection.Write(ctx, m)
	if err != nil && ctx.Err() == nil {
		c.broken.Store(true)
		c.cancelAll(err)
	}
	return err
}

// cancelled cancels the fast-path call that a notifications/cancelled
// names, decoded as the SDK decodes it: its "requestId" member, the key
// matched exactly, a number or a string.
func (c *fastConn) cancelled(params json.RawMessage) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var v any
	if raw, ok := p["requestId"]; !ok || json.Unmarshal(raw, &v) != nil {
		return
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return
	}
	c.mu.Lock()
	cancel := c.fast[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

// cancelAll cancels every fast-path call with cause.
func (c *fastConn) cancelAll(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.fast {
		cancel(cause)
	}
}

// Close waits for the fast-path calls (the SDK's Close waits for its
// own), then closes the connection. Idempotent.
func (c *fastConn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.wg.Wait()
		c.closeErr = c.Connection.Close()
	})
	return c.closeErr
}

// SessionID is the wrapped connection's.
func (c *fastConn) SessionID() string { return c.Connection.SessionID() }

// fastCallBase is what the SDK server does with a tools/call of a legacy
// session once its middleware passed it on (its own multi round-trip
// middleware passes a legacy session's call through unless the result
// holds input requests, which toolHandler's legacy path never returns):
// it looks the tool up by the name offered (as Server.callTool does, an
// unknown name is the SDK's error), runs its handler, and gives a result
// without content an empty content list.
func (s *Server) fastCallBase(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
	r := req.(*mcp.CallToolRequest)
	backend, ok := s.toolBackend(r.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", r.Params.Name)}
	}
	res, err := s.toolHandler(backend)(ctx, r)
	if err == nil && res != nil {
		if res.InputRequests != nil && (len(res.Content) > 0 || res.StructuredContent != nil) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
		}
		if res.Content == nil && (!modernSession(r.Session) || res.InputRequests == nil) {
			res2 := *res
			res2.Content = []mcp.Content{}
			res = &res2
		}
	}
	if res == nil {
		return nil, err
	}
	return res, err
}

// modernSession reports whether ss is of 2026-07-28 or later, as the
// SDK's multi round-trip rules see it.
func modernSession(ss *mcp.ServerSession) bool {
	m, _ := sessionEra(ss)
	return m
}

// serverInfoMeta is the _meta key of the server's implementation in a
// 2026-07-28 result.
const serverInfoMeta = "io.modelcontextprotocol/serverInfo"

// marshalModern encodes res as the SDK encodes the result of a
// 2026-07-28 tools/call: resultType "input_required" when it holds input
// requests, else "complete" (CallToolResult's wire layout puts it after
// the result's own members, before inputRequests), and the server's
// implementation in its _meta unless there already.
func (s *Server) marshalModern(res mcp.Result) (json.RawMessage, error) {
	r, ok := res.(*mcp.CallToolResult)
	if !ok {
		return nil, fmt.Errorf("mcpserve: not a tool result")
	}
	out := *r
	if _, ok := out.Meta[serverInfoMeta]; !ok {
		m := make(mcp.Meta, len(out.Meta)+1)
		for k, v := range out.Meta {
			m[k] = v
		}
		m[serverInfoMeta] = s.impl
		out.Meta = m
	}
	b, err := sdkjson.Marshal(&out)
	if err != nil {
		return nil, err
	}
	tail := []byte("}")
	rt := `,"resultType":"complete"`
	if out.InputRequests != nil {
		ir, err := json.Marshal(out.InputRequests)
		if err != nil {
			return nil, err
		}
		tail = append(append([]byte(`,"inputRequests":`), ir...), '}')
		rt = `,"resultType":"input_required"`
	}
	if !bytes.HasSuffix(b, tail) || len(b) < len(tail)+2 {
		return nil, fmt.Errorf("mcpserve: an unexpected result encoding")
	}
	head := b[:len(b)-len(tail)]
	return append(append(head[:len(head):len(head)], rt...), tail...), nil
}

// toolBackend returns the Backend's name of the tool offered as name.
func (s *Server) toolBackend(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.toolByName[name]
	return b, ok
}

// maxFastNesting bounds the '{' and '[' bytes of a call's params the fast
// path takes: far below the SDK decoder's depth limit (1,000).
const maxFastNesting = 256

// parseCall returns the name, arguments and _meta of params when they
// are a JSON object of "name" (a string without escapes), at most
// "arguments" (an object) and at most "_meta" (an object without
// escapes), each once; ok is false for anything else.
func parseCall(params []byte) (name string, args, meta json.RawMessage, ok bool) {
	if len(params) == 0 || bytes.Count(params, []byte("{"))+bytes.Count(params, []byte("[")) > maxFastNesting ||
		!utf8.Valid(params) || !json.Valid(params) {
		return "", nil, nil, false
	}
	p := jsontext.SkipSpace(params, 0)
	if params[p] != '{' {
		return "", nil, nil, false
	}
	p = jsontext.SkipSpace(params, p+1)
	var haveName, haveArgs, haveMeta bool
	for {
		if p >= len(params) || params[p] != '"' {
			return "", nil, nil, false
		}
		end := bytes.IndexByte(params[p+1:], '"')
		key := params[p+1 : p+1+end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return "", nil, nil, false
		}
		p = jsontext.SkipSpace(params, p+2+end)
		p = jsontext.SkipSpace(params, p+1) // the ':'
		switch string(key) {
		case "name":
			if haveName || params[p] != '"' {
				return "", nil, nil, false
			}
			e := bytes.IndexByte(params[p+1:], '"')
			v := params[p+1 : p+1+e]
			if bytes.IndexByte(v, '\\') >= 0 {
				return "", nil, nil, false
			}
			name, haveName = string(v), true
			p += e + 2
		case "arguments":
			if haveArgs || params[p] != '{' {
				return "", nil, nil, false
			}
			e := jsontext.SkipValue(params, p)
			args, haveArgs = json.RawMessage(params[p:e]), true
			p = e
		case "_meta":
			if haveMeta || params[p] != '{' {
				return "", nil, nil, false
			}
			e := jsontext.SkipValue(params, p)
			meta, haveMeta = json.RawMessage(params[p:e]), true
			if bytes.IndexByte(meta, '\\') >= 0 {
				return "", nil, nil, false
			}
			p = e
		default:
			return "", nil, nil, false
		}
		p = jsontext.SkipSpace(params, p)
		if params[p] == '}' {
			break
		}
		p = jsontext.SkipSpace(params, p+1) // the ','
	}
	if !haveName {
		return "", nil, nil, false
	}
	return name, args, meta, true
}

// serveStdio serves one client over t with the fast path, as
// mcp.Server.Run does without it.
func (s *Server) serveStdio(ctx context.Context, t mcp.Transport) error {
	ft := &fastTransport{t: t, s: s, base: context.WithoutCancel(ctx)}
	s.log.Info("server run start")
	ss, err := s.srv.Connect(ctx, ft, nil)
	if err != nil {
		s.log.Error("server connect failed", "error", err)
		return err
	}
	ft.conn.ss.Store(ss)
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ft.conn.closing.Store(true)
		_ = ss.Close()
		<-closed
		s.log.Error("server run cancelled", "error", ctx.Err())
		return ctx.Err()
	case err := <-closed:
		if err != nil {
			s.log.Error("server session ended with error", "error", err)
		} else {
			s.log.Info("server session ended")
		}
		return err
	}
}

var _ mcp.Connection = (*fastConn)(nil)
