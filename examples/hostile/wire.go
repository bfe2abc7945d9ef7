package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxInLine bounds one message read from the client; a longer line is
// dropped.
const maxInLine = 16 << 20

// message is one JSON-RPC message from the client, fields kept raw.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// hasID reports whether m carries a non-null id.
func (m *message) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// out is where a handler writes: stdout over stdio, the response stream of
// one POST over HTTP. It is safe for concurrent use.
type out interface {
	// line writes one framed message whose bytes are b, valid JSON or not:
	// b and a newline over stdio, one SSE event over HTTP.
	line(b []byte) error
	// raw writes b as it is, without framing.
	raw(b []byte) error
	// framePrefix is what starts a framed message ("" over stdio, the SSE
	// event header over HTTP), for a handler writing one with raw.
	framePrefix() string
}

// send marshals v and writes it as one message.
func send(o out, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return o.line(b)
}

// reply answers request id with result.
func reply(o out, id json.RawMessage, result any) error {
	return send(o, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// replyError answers request id with a JSON-RPC error.
func replyError(o out, id json.RawMessage, code int, msg string, data any) error {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	return send(o, map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

// notify sends a notification.
func notify(o out, method string, params any) error {
	return send(o, map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// textResult is a tools/call result with one text content.
func textResult(text string, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

// JSON-RPC error codes.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// callParams are the params of tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// toolFunc answers one tools/call. It returns when it has answered, or
// when ctx ends for a call it never answers.
type toolFunc func(ctx context.Context, o out, id json.RawMessage, p *callParams)

// handlerFunc answers one request (initialize, tools/list) in place of the
// default answer.
type handlerFunc func(ctx context.Context, o out, m *message)

// server is what a mode serves. Every nil field means the well-behaved
// default.
type server struct {
	// version is the protocolVersion of the initialize result
	// (ProtocolVersion when "").
	version string
	// info is serverInfo ({"name": "hostile", "version": "1.0.0"} when nil).
	info map[string]any
	// instructions, when non-empty, go in the initialize result.
	instructions string
	// capabilities of the initialize result ({"tools": {}} when nil).
	capabilities map[string]any
	// initialize replaces the whole answer to initialize.
	initialize handlerFunc
	// list replaces the answer to tools/list (one page of tools).
	list handlerFunc
	// tools is the one page tools/list answers with.
	tools []map[string]any
	// calls answer tools/call by tool name; a name not here gets a
	// JSON-RPC error.
	calls map[string]toolFunc
	// afterInit runs once the client sent notifications/initialized (over
	// HTTP: in the stream of the next request).
	afterInit func(ctx context.Context, o out)

	// logf writes one line to stderr.
	logf func(format string, args ...any)

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by request id, for notifications/cancelled
	pending  atomic.Bool                   // HTTP: afterInit waits for the next request
}

// initializeResult is the default answer to initialize.
func (s *server) initializeResult() map[string]any {
	r := map[string]any{"protocolVersion": ProtocolVersion}
	if s.version != "" {
		r["protocolVersion"] = s.version
	}
	r["serverInfo"] = map[string]any{"name": "hostile", "version": "1.0.0"}
	if s.info != nil {
		r["serverInfo"] = s.info
	}
	r["capabilities"] = map[string]any{"tools": map[string]any{}}
	if s.capabilities != nil {
		r["capabilities"] = s.capabilities
	}
	if s.instructions != "" {
		r["instructions"] = s.instructions
	}
	return r
}

// track registers request id as in flight: the returned context ends when
// parent does or the client cancels the request; done unregisters it.
func (s *server) track(parent context.Context, id json.RawMessage) (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(parent)
	key := string(id)
	s.mu.Lock()
	if s.inflight == nil {
		s.inflight = map[string]context.CancelFunc{}
	}
	s.inflight[key] = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.inflight, key)
		s.mu.Unlock()
		cancel()
	}
}

// cancelled handles notifications/cancelled.
func (s *server) cancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	cancel := s.inflight[string(p.RequestID)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// dispatch answers request m on o.
func (s *server) dispatch(ctx context.Context, o out, m *message) {
	switch m.Method {
	case "initialize":
		if s.initialize != nil {
			s.initialize(ctx, o, m)
			return
		}
		_ = reply(o, m.ID, s.initializeResult())
	case "ping":
		_ = reply(o, m.ID, map[string]any{})
	case "tools/list":
		if s.list != nil {
			s.list(ctx, o, m)
			return
		}
		tools := s.tools
		if tools == nil {
			tools = []map[string]any{}
		}
		_ = reply(o, m.ID, map[string]any{"tools": tools})
	case "tools/call":
		var p callParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			_ = replyError(o, m.ID, codeInvalidParams, "invalid params", nil)
			return
		}
		f := s.calls[p.Name]
		if f == nil {
			_ = replyError(o, m.ID, codeInvalidParams, "unknown tool", nil)
			return
		}
		f(ctx, o, m.ID, &p)
	default:
		_ = replyError(o, m.ID, codeMethodNotFound, "method not found", nil)
	}
}

// notification handles a message without an id, or a response (to one of
// the server's own requests).
func (s *server) notification(ctx context.Context, o out, m *message) {
	switch {
	case m.Method == "notifications/initialized":
		if s.afterInit == nil {
			return
		}
		if o == nil { // HTTP: no stream to write to until the next request
			s.pending.Store(true)
			return
		}
		go s.afterInit(ctx, o)
	case m.Method == "notifications/cancelled":
		s.cancelled(m.Params)
	case m.Method == "" && m.hasID():
		kind := "result"
		if len(m.Error) > 0 {
			kind = "error"
		}
		s.logf("hostile: the client answered %s with an %s", m.ID, kind)
	}
}

// stdioOut writes newline-delimited messages to one writer.
type stdioOut struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *stdioOut) line(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	// One write per message, so a message is never interleaved with
	// another.
	buf := make([]byte, 0, len(b)+1)
	_, err := o.w.Write(append(append(buf, b...), '\n'))
	return err
}

func (*stdioOut) framePrefix() string { return "" }

func (o *stdioOut) raw(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.w.Write(b)
	return err
}

// serveStdio serves s over stdin/stdout until stdin ends or ctx does; every
// request is answered in a goroutine of its own, so a call that never
// answers does not stop the others.
func serveStdio(ctx context.Context, s *server, stdin io.Reader, stdout, stderr io.Writer) int {
	s.logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o := &stdioOut{w: stdout}
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(stdin, 64<<10)
		for {
			b, err := readLine(r)
			if len(bytes.TrimSpace(b)) > 0 {
				lines <- b
			}
			if err != nil {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for {
		var b []byte
		var ok bool
		select {
		case b, ok = <-lines:
		case <-ctx.Done():
		}
		if !ok {
			break
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			s.logf("hostile: a line that is not a JSON-RPC message")
			continue
		}
		if m.Method == "" || !m.hasID() {
			s.notification(ctx, o, &m)
			continue
		}
		rctx, done := s.track(ctx, m.ID)
		wg.Go(func() {
			defer done()
			s.dispatch(rctx, o, &m)
		})
	}
	cancel()
	// A handler stuck writing to a client that no longer reads does not
	// keep the process alive for long.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Second):
	}
	return exitOK
}

// readLine reads one line (without its newline), at most maxInLine bytes
// of it; a longer line comes back empty.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) <= maxInLine {
			line = append(line, chunk...)
		} else {
			tooLong, line = true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// sseOut writes one POST's response as a text/event-stream.
type sseOut struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
}

func (o *sseOut) start() {
	if !o.started {
		o.started = true
		o.w.Header().Set("Content-Type", "text/event-stream")
		o.w.Header().Set("Cache-Control", "no-cache")
		o.w.WriteHeader(http.StatusOK)
	}
}

// sseFrame starts one SSE event holding a message.
const sseFrame = "event: message\ndata: "

func (*sseOut) framePrefix() string { return sseFrame }

func (o *sseOut) line(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start()
	buf := make([]byte, 0, len(b)+24)
	buf = append(buf, sseFrame...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	if _, err := o.w.Write(buf); err != nil {
		return err
	}
	return http.NewResponseController(o.w).Flush()
}

func (o *sseOut) raw(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start()
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(o.w).Flush()
}

// maxPostBody bounds one POST body.
const maxPostBody = 4 << 20

// serveHTTP serves s over Streamable HTTP at /mcp on a loopback addr until
// ctx ends. It prints the URL alone on the first line of stdout.
func serveHTTP(ctx context.Context, s *server, addr string, stdout, stderr io.Writer) int {
	s.logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	ap, err := loopbackAddr(addr)
	if err != nil {
		fmt.Fprintln(stderr, "hostile:", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", ap.String())
	if err != nil {
		fmt.Fprintln(stderr, "hostile: cannot listen:", err)
		return 1
	}
	hs := &http.Server{Handler: httpHandler(s), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s/mcp\n", ln.Addr())
	select {
	case err := <-served:
		fmt.Fprintln(stderr, "hostile:", err)
		return 1
	case <-ctx.Done():
	}
	// Streams that never end (hang-call, endless-line) do not wait for a
	// graceful shutdown.
	_ = hs.Close()
	return exitOK
}

// sessions numbers the Mcp-Session-Id of each initialize.
var sessions atomic.Int64

// httpHandler is the Streamable HTTP endpoint: a POST of a request is
// answered with an event stream, a POST of anything else with 202, the
// standalone GET stream is refused with 405, DELETE succeeds. Session ids
// are handed out but never checked.
func httpHandler(s *server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "POST, DELETE")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPostBody))
		var m message
		if err == nil {
			err = json.Unmarshal(body, &m)
		}
		if err != nil {
			http.Error(w, "not one JSON-RPC message", http.StatusBadRequest)
			return
		}
		if m.Method == "" || !m.hasID() {
			s.notification(r.Context(), nil, &m)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "hostile-"+strconv.FormatInt(sessions.Add(1), 10))
		}
		o := &sseOut{w: w}
		ctx, done := s.track(r.Context(), m.ID)
		defer done()
		if s.afterInit != nil && s.pending.CompareAndSwap(true, false) {
			s.afterInit(ctx, o)
		}
		s.dispatch(ctx, o, &m)
	})
	return mux
}

// errNotLoopback is returned by loopbackAddr for an address that is not
// loopback.
var errNotLoopback = errors.New("-http: the address must be loopback (127.0.0.0/8, [::1] or localhost)")

// loopbackAddr validates a -http address: host:port with host an IP literal
// in 127.0.0.0/8 or ::1, or "localhost" (taken as 127.0.0.1, never
// resolved).
func loopbackAddr(s string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, errors.New("-http: want host:port")
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, errors.New("-http: the port must be a number in 0..65535")
	}
	ip := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	if !strings.EqualFold(host, "localhost") {
		ip, err = netip.ParseAddr(host)
		if err != nil || ip.Zone() != "" || ip.Is4In6() || !ip.IsLoopback() {
			return netip.AddrPort{}, errNotLoopback
		}
	}
	return netip.AddrPortFrom(ip, uint16(p)), nil
}
