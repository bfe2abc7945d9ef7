package mcpsession

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// canary is planted in URLs, server text and process arguments; no error
// may ever contain it.
const canary = "CANARY-b7e1d9"

// fixtureBin is the stdio fixture server built by TestMain.
var fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpsession-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdtemp:", err)
		os.Exit(1)
	}
	fixtureBin = filepath.Join(dir, "fixtureserver")
	if out, err := exec.Command("go", "build", "-o", fixtureBin, "./internal/fixtureserver").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the fixture server: %v\n%s", err, out)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// target is the Target every test connects.
func target(id string) ports.Target { return ports.Target{ServerID: id, Kind: ports.TransportHTTP} }

// objSchema is a minimal object input schema.
var objSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)

// newSDKServer is an in-process go-sdk server with tools, prompts,
// resources and a resource template.
func newSDKServer(opts *mcp.ServerOptions) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-server", Version: "2.3.4"}, opts)
	srv.AddTool(&mcp.Tool{Name: "echo", Title: "Echo", Description: "echoes", InputSchema: objSchema, Meta: mcp.Meta{"k": "v"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: args.Message}},
				StructuredContent: map[string]any{"echo": args.Message},
				Meta:              mcp.Meta{"m": 1.0},
			}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "rawargs", InputSchema: objSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "toolerror", InputSchema: objSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "failed " + canary}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "rpcerror", InputSchema: objSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// The message echoes the arguments (values included), as
			// real servers do; the refusal keeps it with the values masked.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad \x1b[2J" + string(req.Params.Arguments)}
		})
	// hang blocks until cancelled, or 2 s at most: a go-sdk server's Close
	// waits for its handlers, and a session closed before the SDK's
	// notifications/cancelled went out leaves nobody to cancel it.
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: objSchema},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Second):
				return nil, errors.New("hang: gave up")
			}
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "says hello"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "file:///a.txt", Name: "a"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{name}", Name: "files"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	return srv
}

// memDialer dials srv over in-memory transports, one server session per
// Dial; the server sessions are closed when the test ends.
func memDialer(t testing.TB, srv *mcp.Server) Dialer {
	return DialerFunc(func(ctx context.Context, _ ports.Target) (*Conn, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = ss.Close() })
		return &Conn{Transport: ct}, nil
	})
}

// httpConn returns a Conn to endpoint over a fresh plain http.Client,
// released (idle connections closed) by the session.
func httpConn(endpoint, origin string) *Conn {
	tr := &http.Transport{}
	return &Conn{
		Transport: &mcp.StreamableClientTransport{
			Endpoint:   endpoint,
			HTTPClient: &http.Client{Transport: tr},
			MaxRetries: -1,
		},
		Origin:  origin,
		Release: tr.CloseIdleConnections,
	}
}

// httpDialer serves h over httptest and dials it at path (which may carry a
// query).
func httpDialer(t testing.TB, h http.Handler, path string) (Dialer, *httptest.Server) {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
		return httpConn(ts.URL+path, ts.URL), nil
	}), ts
}

// sdkHTTPHandler serves srv over Streamable HTTP, with protocol sessions:
// the go-sdk speaks only the legacy era that way (a request of the modern
// era is refused with an UnsupportedProtocolVersion error naming the
// legacy versions).
func sdkHTTPHandler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// sdkStatelessHandler serves srv over stateless Streamable HTTP, the way
// a server behind a load balancer is deployed: it speaks both eras.
func sdkStatelessHandler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// transportCase is one way of reaching an in-process go-sdk server.
type transportCase struct {
	name string
	dial func(t testing.TB, srv *mcp.Server) Dialer
}

var transports = []transportCase{
	{"memory", memDialer},
	{"http", func(t testing.TB, srv *mcp.Server) Dialer {
		d, _ := httpDialer(t, sdkHTTPHandler(srv), "/mcp/"+canary+"?token="+canary)
		return d
	}},
	{"http-stateless", func(t testing.TB, srv *mcp.Server) Dialer {
		d, _ := httpDialer(t, sdkStatelessHandler(srv), "/mcp/"+canary+"?token="+canary)
		return d
	}},
}

// legacyOnly reports whether a transport case reaches a server that speaks
// only the legacy era (the go-sdk's HTTP handler with sessions).
func (tc transportCase) legacyOnly() bool { return tc.name == "http" }

// eraCase is one protocol era a test runs in against a go-sdk server
// (which speaks both): the host's accepted versions and the version the
// session negotiates.
type eraCase struct {
	name    string
	accept  []string
	version string
}

// opts returns Options accepting the era's versions.
func (e eraCase) opts() *Options { return &Options{AcceptVersions: e.accept} }

var eras = []eraCase{
	{"modern", ModernVersions(), ModernProtocolVersion},
	{"legacy", LegacyVersions(), PinnedProtocolVersion},
}

// connect opens a session and closes it when the test ends.
func connect(t testing.TB, c *Connector, sig ports.Signals) ports.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, target("srv"), sig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// requireRefusal asserts err is a *refusal.Error of class and reason that
// carries no canary.
func requireRefusal(t testing.TB, err error, class refusal.Class, reason string) *refusal.Error {
	t.Helper()
	require.Error(t, err)
	var re *refusal.Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, class, re.Class, "class of %s", re.Reason)
	assert.Equal(t, reason, re.Reason)
	assertNoCanary(t, err)
	return re
}

func assertNoCanary(t testing.TB, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), canary) {
		t.Errorf("error carries the canary (reason %q)", refusal.ReasonOf(err))
	}
}

// rawServer is a hand-written Streamable HTTP MCP server answering plain
// JSON. handle returns the result (marshalled as is) or a JSON-RPC error
// for each request; initialize defaults to version with tools declared.
type rawServer struct {
	version string
	caps    map[string]any
	handle  func(method string, params json.RawMessage) (any, *jsonrpc.Error)
	// status, when non-zero, is the HTTP status of every POST reply other
	// than initialize, with body as its body.
	status int
	body   string

	mu     sync.Mutex
	counts map[string]int
}

func (rs *rawServer) count(method string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.counts[method]
}

func (rs *rawServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rs.mu.Lock()
	if rs.counts == nil {
		rs.counts = map[string]int{}
	}
	rs.counts[msg.Method]++
	rs.mu.Unlock()
	if len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	var rpcErr *jsonrpc.Error
	switch {
	case msg.Method == "server/discover" && !Modern(rs.version):
		// A legacy server: the client falls back to initialize.
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + canary}
	case msg.Method == "server/discover":
		caps := rs.caps
		if caps == nil {
			caps = map[string]any{"tools": map[string]any{}}
		}
		result = map[string]any{
			"resultType":        "complete",
			"supportedVersions": []string{rs.version},
			"capabilities":      caps,
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "raw " + canary, "version": "9 " + canary}},
		}
	case msg.Method == "initialize":
		caps := rs.caps
		if caps == nil {
			caps = map[string]any{"tools": map[string]any{}}
		}
		result = map[string]any{
			"protocolVersion": rs.version,
			"capabilities":    caps,
			"serverInfo":      map[string]any{"name": "raw " + canary, "version": "9 " + canary},
		}
	case rs.status != 0:
		w.WriteHeader(rs.status)
		_, _ = io.WriteString(w, rs.body)
		return
	case rs.handle != nil:
		result, rpcErr = rs.handle(msg.Method, msg.Params)
	default:
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + canary}
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
	if rpcErr != nil {
		reply["error"] = rpcErr
	} else {
		reply["result"] = result
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(reply)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(buf.Bytes())
}

// rawDialer serves rs over httptest, reached at a canary path and query.
func rawDialer(t testing.TB, rs *rawServer) Dialer {
	d, _ := httpDialer(t, rs, "/mcp/"+canary+"?key="+canary)
	return d
}

// fixtureConn runs the fixture server as a child process. aborts counts
// Abort calls; Abort kills the child.
func fixtureConn(t testing.TB, aborts *atomic.Int32, args ...string) *Conn {
	cmd := exec.Command(fixtureBin, args...)
	cmd.Env = []string{"FIXTURE=" + canary}
	kt := &killableCommand{CommandTransport: &mcp.CommandTransport{Command: cmd}}
	return &Conn{
		Transport: kt,
		Abort: func() {
			aborts.Add(1)
			kt.kill()
		},
	}
}

// killableCommand is the SDK's CommandTransport with a race-free kill, as
// a stdio transport adapter provides: a kill before the start kills the
// child as soon as it starts.
type killableCommand struct {
	*mcp.CommandTransport
	mu     sync.Mutex
	killed bool
}

func (k *killableCommand) Connect(ctx context.Context) (mcp.Connection, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	conn, err := k.CommandTransport.Connect(ctx)
	if err == nil && k.killed {
		_ = k.Command.Process.Kill()
	}
	return conn, err
}

func (k *killableCommand) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killed = true
	if k.Command.Process != nil {
		_ = k.Command.Process.Kill()
	}
}

// signalRecorder collects ListChanged calls.
type signalRecorder struct {
	mu    sync.Mutex
	kinds []ports.ListKind
	ch    chan ports.ListKind
}

func newSignalRecorder() *signalRecorder { return &signalRecorder{ch: make(chan ports.ListKind, 64)} }

func (r *signalRecorder) signals() ports.Signals {
	return ports.Signals{ListChanged: func(k ports.ListKind) {
		r.mu.Lock()
		r.kinds = append(r.kinds, k)
		r.mu.Unlock()
		select {
		case r.ch <- k:
		default:
		}
	}}
}

func (r *signalRecorder) seen() []ports.ListKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ports.ListKind(nil), r.kinds...)
}

// memPeer is a hand-written MCP server on the far end of an in-memory
// transport: it answers initialize with version and caps (and, for a
// modern version, server/discover; a legacy one refuses it as an unknown
// method), every other call with handle, and can push notifications.
type memPeer struct {
	conn    mcp.Connection
	version string
	caps    map[string]any
	handle  func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error)
	// discover, when set, answers server/discover in place of the above.
	discover func() (json.RawMessage, *jsonrpc.Error)
	stopped  chan struct{}
	// responses receives the client's replies to requests the peer sent.
	responses chan *jsonrpc.Response

	mu     sync.Mutex
	counts map[string]int
	params map[string]json.RawMessage
}

// startMemPeer starts a memPeer and returns a Conn to it; the peer stops
// when the test ends.
func startMemPeer(t testing.TB, p *memPeer) *Conn {
	ct, st := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	require.NoError(t, err)
	p.conn = conn
	p.stopped = make(chan struct{})
	p.responses = make(chan *jsonrpc.Response, 16)
	go p.loop()
	t.Cleanup(func() {
		_ = conn.Close()
		<-p.stopped
	})
	return &Conn{Transport: ct}
}

func (p *memPeer) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[method]
}

func (p *memPeer) lastParams(method string) json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.params[method]
}

func (p *memPeer) loop() {
	defer close(p.stopped)
	ctx := context.Background()
	for {
		msg, err := p.conn.Read(ctx)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			if resp, ok := msg.(*jsonrpc.Response); ok {
				select {
				case p.responses <- resp:
				default:
				}
			}
			continue
		}
		p.mu.Lock()
		if p.counts == nil {
			p.counts, p.params = map[string]int{}, map[string]json.RawMessage{}
		}
		p.counts[req.Method]++
		p.params[req.Method] = req.Params
		p.mu.Unlock()
		if !req.IsCall() {
			continue
		}
		var result json.RawMessage
		var rpcErr *jsonrpc.Error
		if req.Method == "server/discover" && p.discover != nil {
			result, rpcErr = p.discover()
		} else if req.Method == "server/discover" && !Modern(p.version) {
			// A legacy server: the client falls back to initialize.
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + canary}
		} else if req.Method == "server/discover" {
			caps := p.caps
			if caps == nil {
				caps = map[string]any{"tools": map[string]any{"listChanged": true}}
			}
			result, _ = json.Marshal(map[string]any{"resultType": "complete", "supportedVersions": []string{p.version}, "capabilities": caps})
		} else if req.Method == "initialize" {
			caps := p.caps
			if caps == nil {
				caps = map[string]any{"tools": map[string]any{"listChanged": true}}
			}
			result, _ = json.Marshal(map[string]any{"protocolVersion": p.version, "capabilities": caps})
		} else if p.handle != nil {
			result, rpcErr = p.handle(req.Method, req.Params)
		} else {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + canary}
		}
		resp := &jsonrpc.Response{ID: req.ID, Result: result}
		if rpcErr != nil {
			resp = &jsonrpc.Response{ID: req.ID, Error: rpcErr}
		}
		if err := p.conn.Write(ctx, resp); err != nil {
			return
		}
	}
}

// notify pushes a notification to the client.
func (p *memPeer) notify(t testing.TB, method string) {
	t.Helper()
	require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{Method: method, Params: json.RawMessage(`{}`)}))
}

// fixedDialer always returns conn.
func fixedDialer(conn *Conn) Dialer {
	return DialerFunc(func(context.Context, ports.Target) (*Conn, error) { return conn, nil })
}

// fixtureConnAt runs path (with an env holding envValue) as a stdio server.
func fixtureConnAt(path, envValue string) *Conn {
	cmd := exec.Command(path)
	cmd.Env = []string{"FIXTURE=" + envValue}
	return &Conn{Transport: &mcp.CommandTransport{Command: cmd}}
}
