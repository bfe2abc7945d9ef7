package httptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
)

// refTopMethod is topMethod's definition by a full decode: exact member
// names, the last duplicate winning.
func refTopMethod(data []byte) (method string, call, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return "", false, false
	}
	if id, has := m["id"]; has {
		call = !bytes.Equal(bytes.TrimSpace(id), []byte("null"))
	}
	raw, has := m["method"]
	if !has || json.Unmarshal(raw, &method) != nil {
		return "", false, false
	}
	return method, call, true
}

func TestTopMethod(t *testing.T) {
	tests := []struct {
		in     string
		method string
		call   bool
		ok     bool
	}{
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`, "notifications/message", false, true},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, "ping", true, true},
		{`{"id":null,"method":"ping"}`, "ping", false, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"method":"inside"}}`, "", false, false},
		{`{"params":{"method":"x","id":1},"method":"y"}`, "y", false, true},
		{`{"method":"a","method":"b"}`, "b", false, true},
		{`{"\u006dethod":"escaped-key"}`, "escaped-key", false, true},
		{`{"Method":"case"}`, "", false, false},
		{`{"method":"esc\"aped\u0041"}`, `esc"apedA`, false, true},
		{`{"method":5}`, "", false, false},
		{` [ {"method":"x"} ] `, "", false, false},
		{`{"method":"x"`, "x", false, true}, // cut: the SDK fails it, whatever the filter says
		{`not json`, "", false, false},
	}
	for _, tt := range tests {
		m, c, ok := topMethod([]byte(tt.in))
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.method, m, tt.in)
		assert.Equal(t, tt.call, c, tt.in)
	}
}

// FuzzTopMethod: on every valid JSON object topMethod agrees with a full
// decode; on anything else it does not panic.
func FuzzTopMethod(f *testing.F) {
	for _, s := range []string{`{"method":"a","id":1}`, `{"a":[1,{"method":"x"}],"method":"m"}`, `{"\u006dethod":"k"}`, `{"id":null}`, `{"method":"\ud800"}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, c, ok := topMethod(data)
		if !json.Valid(data) || bytes.TrimSpace(data)[0] != '{' {
			return
		}
		rm, rc, rok := refTopMethod(data)
		require.Equal(t, rok, ok)
		require.Equal(t, rm, m)
		if ok {
			require.Equal(t, rc, c)
		}
	})
}

// sseEvent writes one SSE message event carrying msg.
func sseEvent(msg string) string { return "event: message\ndata: " + msg + "\n\n" }

// sseMessages reads the data of the message events of stream the way the
// go-sdk does.
func sseMessages(t *testing.T, stream []byte) []string {
	t.Helper()
	var out []string
	for ev := range strings.SplitSeq(strings.ReplaceAll(string(stream), "\r\n", "\n"), "\n\n") {
		var data []string
		name := ""
		for line := range strings.SplitSeq(ev, "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "event":
				name = strings.TrimSpace(v)
			case "data":
				data = append(data, strings.TrimSpace(v))
			}
		}
		if len(data) > 0 && (name == "" || name == "message") {
			out = append(out, strings.Join(data, "\n"))
		}
	}
	return out
}

// dropLogging refuses notifications/message and admits the rest.
func dropLogging(seen *[]string) func(string, bool) bool {
	return func(m string, _ bool) bool {
		*seen = append(*seen, m)
		return m != "notifications/message"
	}
}

// TestSSEFloodThroughSession: a server floods a session's stream with
// logging notifications; with the filter set, every one is judged and none
// reaches the SDK's handler (so none was queued for it), and the session
// goes on.
func TestSSEFloodThroughSession(t *testing.T) {
	const flood = 20_000
	s := newMCPServer()
	mcp.AddTool(s, &mcp.Tool{Name: "flood"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for range flood {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "x"}); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	for _, filtered := range []bool{true, false} {
		t.Run(fmt.Sprintf("filtered=%v", filtered), func(t *testing.T) {
			srv := newTestServer(t, false, mcpHandler(s, nil))
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			var judged, handled atomic.Int64
			if filtered {
				tr.SetInboundFilter(func(m string, _ bool) bool { judged.Add(1); return m != "notifications/message" })
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "mcpward-test", Version: "0"}, &mcp.ClientOptions{
				Capabilities:   &mcp.ClientCapabilities{},
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
					handled.Add(1)
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			defer cs.Close()
			require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "flood"})
			require.NoError(t, err)
			require.False(t, res.IsError)
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "after"}})
			require.NoError(t, err, "the session goes on")
			if filtered {
				assert.GreaterOrEqual(t, judged.Load(), int64(flood), "every notification was judged")
				assert.Zero(t, handled.Load(), "none reached the SDK")
			} else {
				assert.Eventually(t, func() bool { return handled.Load() == flood }, 10*time.Second, 10*time.Millisecond,
					"without the filter, the SDK queues and handles every one")
			}
		})
	}
}

// sdkEvents reads stream exactly as the go-sdk's scanner does (lines end
// at '\n', "\r\n" trimmed from the right, an empty line dispatches, a line
// without ':' ends the stream) and returns the data of the events it would
// decode as messages.
func sdkEvents(stream []byte) []string {
	var out []string
	var name string
	var data []byte
	hasData := false
	dispatch := func() {
		if hasData && len(data) > 0 && (name == "" || name == "message") {
			out = append(out, string(data))
		}
		name, data, hasData = "", nil, false
	}
	for len(stream) > 0 {
		line := stream
		if i := bytes.IndexByte(stream, '\n'); i >= 0 {
			line, stream = stream[:i+1], stream[i+1:]
		} else {
			stream = nil
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			dispatch()
			continue
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return out
		}
		switch string(k) {
		case "event":
			name = string(bytes.TrimSpace(v))
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimSpace(v)...)
			hasData = true
		}
	}
	dispatch()
	return out
}
