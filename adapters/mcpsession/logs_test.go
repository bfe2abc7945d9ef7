package mcpsession

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// logRecorder collects the log messages of a session.
type logRecorder struct {
	mu   sync.Mutex
	msgs []ports.LogMessage
}

func (r *logRecorder) signals() ports.Signals {
	return ports.Signals{Log: func(m ports.LogMessage) {
		r.mu.Lock()
		r.msgs = append(r.msgs, m)
		r.mu.Unlock()
	}}
}

func (r *logRecorder) seen() []ports.LogMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ports.LogMessage(nil), r.msgs...)
}

func TestLogGate(t *testing.T) {
	now := time.Unix(0, 0)
	g := newInboundGate()
	g.now = func() time.Time { return now }
	assert.False(t, g.admit(methodLog, false), "closed until the session asks for logs")
	assert.Zero(t, g.logs.takeDropped(), "a closed gate counts nothing")

	g.logs.openUp()
	for i := range maxLogPending {
		require.True(t, g.admit(methodLog, false), "message %d", i)
	}
	assert.False(t, g.admit(methodLog, false), "bounded while the handler lags")
	assert.False(t, g.admit(methodLog, false))
	assert.Equal(t, 2, g.logs.takeDropped())
	assert.Zero(t, g.logs.takeDropped(), "taking resets the count")
	g.handled(methodLog)
	assert.True(t, g.admit(methodLog, false), "one handled, one more admitted")
	assert.False(t, g.admit(methodLog, false))
	now = now.Add(gateStale)
	assert.True(t, g.admit(methodLog, false), "messages the SDK dropped unhandled stop counting")
	assert.True(t, g.admit("notifications/tools/list_changed", false), "other methods are gated on their own")
}

// loggingServer is a go-sdk server that declares logging and, on its "log"
// tool, logs one message at each of the levels given (data as given).
func loggingServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: objSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Levels []string `json:"levels"`
				Data   any      `json:"data"`
				Logger string   `json:"logger"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			for _, l := range args.Levels {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(l), Logger: args.Logger, Data: args.Data})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	return srv
}

func callLog(t *testing.T, s ports.Session, args string) {
	t.Helper()
	_, err := s.Call(context.Background(), ports.CallRequest{Name: "log", Arguments: json.RawMessage(args)})
	require.NoError(t, err)
}

// TestLogsFromAGoSDKServer: the session asks a go-sdk server (which sends
// nothing before logging/setLevel) for its log messages at
// Options.LogLevel, and passes each to Signals.Log as sent, its data
// rendered as text.
func TestLogsFromAGoSDKServer(t *testing.T) {
	rec := &logRecorder{}
	s := connect(t, New(memDialer(t, loggingServer()), &Options{LogLevel: ports.LogWarning}), rec.signals())
	callLog(t, s, `{"levels":["debug","info","warning","error","emergency"],"data":"disk almost full","logger":"fs"}`)
	callLog(t, s, `{"levels":["error"],"data":{"code":7,"msg":"x"}}`)
	require.Eventually(t, func() bool { return len(rec.seen()) == 4 }, 5*time.Second, time.Millisecond)
	msgs := rec.seen()
	assert.Equal(t, []ports.LogMessage{
		{Level: ports.LogWarning, Logger: "fs", Text: "disk almost full"},
		{Level: ports.LogError, Logger: "fs", Text: "disk almost full"},
		{Level: ports.LogEmergency, Logger: "fs", Text: "disk almost full"},
		{Level: ports.LogError, Text: `{"code":7,"msg":"x"}`},
	}, msgs, "the server filtered below warning: setLevel was sent")
}

func TestLogsBounded(t *testing.T) {
	rec := &logRecorder{}
	s := connect(t, New(memDialer(t, loggingServer()), nil), rec.signals())
	long := strings.Repeat("é", ports.MaxLogText) // 2 bytes each
	args, err := json.Marshal(map[string]any{"levels": []string{"info"}, "data": long, "logger": strings.Repeat("l", 1000)})
	require.NoError(t, err)
	callLog(t, s, string(args))
	require.Eventually(t, func() bool { return len(rec.seen()) == 1 }, 5*time.Second, time.Millisecond)
	m := rec.seen()[0]
	assert.True(t, m.Truncated)
	assert.LessOrEqual(t, len(m.Text), ports.MaxLogText)
	assert.True(t, strings.HasPrefix(long, m.Text), "cut on a character boundary")
	assert.Len(t, m.Logger, ports.MaxLogLogger)
}

// TestLogsNotAskedFor: without Signals.Log, or from a server that does not
// declare logging, nothing is asked for and nothing is delivered.
func TestLogsNotAskedFor(t *testing.T) {
	for _, tt := range []struct {
		name string
		caps map[string]any
		log  bool
	}{
		{"host wants none", map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}, false},
		{"server declares none", map[string]any{"tools": map[string]any{}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &memPeer{version: "2025-11-25", caps: tt.caps, handle: func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
				return json.RawMessage(`{}`), nil
			}}
			conn := startMemPeer(t, p)
			var got atomic.Int32
			sig := ports.Signals{}
			if tt.log {
				sig.Log = func(ports.LogMessage) { got.Add(1) }
			}
			s := connect(t, New(fixedDialer(conn), nil), sig)
			p.notify(t, methodLog)
			_, err := s.List(context.Background(), ports.ListTools, "") // a round trip after the notification
			require.NoError(t, err)
			assert.Zero(t, p.count("logging/setLevel"))
			assert.Zero(t, got.Load())
		})
	}
}

// TestSetLevelRefusedStillConnects: a server that declares logging but
// refuses logging/setLevel (or never answers it) still connects.
func TestSetLevelRefusedStillConnects(t *testing.T) {
	p := &memPeer{version: "2025-11-25", caps: map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
		handle: func(method string, _ json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
			if method == "logging/setLevel" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no " + canary}
			}
			return json.RawMessage(`{"tools":[]}`), nil
		}}
	conn := startMemPeer(t, p)
	rec := &logRecorder{}
	s := connect(t, New(fixedDialer(conn), &Options{LogLevel: ports.LogDebug}), rec.signals())
	assert.Equal(t, 1, p.count("logging/setLevel"))
	assert.JSONEq(t, `{"level":"debug"}`, string(p.lastParams("logging/setLevel")))
	require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{Method: methodLog, Params: json.RawMessage(`{"level":"info","data":"hi"}`)}))
	require.Eventually(t, func() bool { return len(rec.seen()) == 1 }, 5*time.Second, time.Millisecond)
	_, err := s.List(context.Background(), ports.ListTools, "")
	require.NoError(t, err)
}

// TestLogFloodIsBounded: while the host's Log callback is blocked, a
// server floods log messages. Over a filtering transport the SDK queues at
// most maxLogPending of them, and the next message delivered counts the
// ones dropped.
func TestLogFloodIsBounded(t *testing.T) {
	const flood = 20_000
	frozen := time.Now()
	gateClock = func() time.Time { return frozen } // nothing goes stale
	defer func() { gateClock = time.Now }()
	p := &memPeer{version: "2025-11-25", caps: map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
		handle: func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
			return json.RawMessage(`{"tools":[]}`), nil
		}}
	conn := startMemPeer(t, p)
	ft := &filteringTransport{inner: conn.Transport}
	conn.Transport = ft
	conn.InboundFilter = ft.set
	release := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var msgs []ports.LogMessage
	s := connect(t, New(fixedDialer(conn), nil), ports.Signals{Log: func(m ports.LogMessage) {
		mu.Lock()
		first := len(msgs) == 0
		msgs = append(msgs, m)
		mu.Unlock()
		if first {
			<-release // the first message holds the SDK's handler
		}
	}})
	defer once.Do(func() { close(release) })

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	params := json.RawMessage(`{"level":"info","data":"a line of server logging, as servers write them"}`)
	for range flood {
		require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{Method: methodLog, Params: params}))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grown, int64(2<<20), "the flood is not queued")
	once.Do(func() { close(release) })

	// The messages let through behind the first are delivered, then one
	// more after the flood carries the count of the dropped ones.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(msgs) == 1+maxLogPending }, 10*time.Second, time.Millisecond)
	require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{Method: methodLog, Params: params}))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(msgs) == 2+maxLogPending }, 10*time.Second, time.Millisecond)
	mu.Lock()
	dropped := 0
	for _, m := range msgs {
		dropped += m.Dropped
	}
	mu.Unlock()
	assert.Equal(t, flood-1-maxLogPending, dropped, "every message dropped is counted")
	_, err := s.List(context.Background(), ports.ListTools, "")
	require.NoError(t, err, "the session goes on")
}
