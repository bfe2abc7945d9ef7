package httptransport

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
)

const (
	tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

func TestValidTraceparent(t *testing.T) {
	tests := []struct {
		name string
		tp   string
		ok   bool
	}{
		{name: "valid sampled", tp: tp1, ok: true},
		{name: "valid unsampled", tp: tp2, ok: true},
		{name: "version ff", tp: "ff" + tp1[2:], ok: false},
		{name: "version 01", tp: "01" + tp1[2:], ok: false},
		{name: "zero trace id", tp: "00-" + strings.Repeat("0", 32) + "-00f067aa0ba902b7-01", ok: false},
		{name: "zero parent id", tp: "00-4bf92f3577b34da6a3ce929d0e0e4736-" + strings.Repeat("0", 16) + "-01", ok: false},
		{name: "uppercase hex", tp: strings.ToUpper(tp1), ok: false},
		{name: "trailing data", tp: tp1 + "-00", ok: false},
		{name: "short", tp: tp1[:54], ok: false},
		{name: "CRLF", tp: tp1[:53] + "\r\n", ok: false},
		{name: "wrong separator", tp: strings.Replace(tp1, "-", "_", 1), ok: false},
		{name: "non-hex flags", tp: tp1[:53] + "0g", ok: false},
		{name: "empty", tp: "", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, ValidTraceparent(tc.tp))
			_, err := WithTraceparent(context.Background(), tc.tp)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				requireRefusal(t, err, refusal.Config, ReasonTraceparentInvalid)
			}
		})
	}
}

func TestTraceForBindsOneCall(t *testing.T) {
	in := &traceIntent{tp: tp1}
	steps := []struct {
		name string
		body string
		want string
	}{
		{name: "list before the call", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{name: "cancel before binding", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`},
		{name: "the call binds id 7", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`, want: tp1},
		{name: "the same call resent", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`, want: tp1},
		{name: "another call in the same ctx", body: `{"jsonrpc":"2.0","id":8,"method":"tools/call"}`},
		{name: "string id \"7\" is another id", body: `{"jsonrpc":"2.0","id":"7","method":"tools/call"}`},
		{name: "its cancellation", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}`, want: tp1},
		{name: "another cancellation", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`},
		{name: "a reply with the same id", body: `{"jsonrpc":"2.0","id":7,"result":{}}`},
		{name: "a batch", body: `[{"jsonrpc":"2.0","id":7,"method":"tools/call"}]`},
		{name: "trailing data", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call"} {}`},
		{name: "not 2.0", body: `{"jsonrpc":"1.0","id":7,"method":"tools/call"}`},
		{name: "cancelled carrying an id", body: `{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":7}}`},
		{name: "float id", body: `{"jsonrpc":"2.0","id":7.5,"method":"tools/call"}`},
	}
	for _, s := range steps {
		assert.Equal(t, s.want, in.traceFor([]byte(s.body)), s.name)
	}
}

func TestTraceparentOnlyOnItsCall(t *testing.T) {
	tests := []struct {
		name   string
		listed bool
	}{
		{name: "listed origin", listed: true},
		{name: "unlisted origin", listed: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bg, stop := context.WithTimeout(context.Background(), 20*time.Second)
			defer stop()
			srv := newTestServer(t, false, mcpHandler(newMCPServer(), nil))
			origin := originOf(mustURL(t, srv.URL))
			opts := safeOptions()
			opts.TraceOrigins = []string{"http://other.example:80"}
			if tc.listed {
				opts.TraceOrigins = append(opts.TraceOrigins, origin)
			}
			tr, err := New(egress.Default(), opts).Transport(bg, httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			cs, err := connect(bg, tr)
			require.NoError(t, err)
			defer cs.Close()

			ctx1, err := WithTraceparent(bg, tp1)
			require.NoError(t, err)
			_, err = cs.CallTool(ctx1, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "a"}})
			require.NoError(t, err)
			_, err = cs.ListTools(ctx1, nil)
			require.NoError(t, err)
			_, err = cs.CallTool(ctx1, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "second"}})
			require.NoError(t, err)

			ctx2, err := WithTraceparent(bg, tp2)
			require.NoError(t, err)
			ctx2, cancel := context.WithCancel(ctx2)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx2, &mcp.CallToolParams{Name: "block"})
				done <- err
			}()
			require.Eventually(t, func() bool { return countMethod(srv, "tools/call") == 3 }, 5*time.Second, 5*time.Millisecond)
			cancel()
			require.Error(t, <-done)
			require.Eventually(t, func() bool { return countMethod(srv, "notifications/cancelled") == 1 }, 5*time.Second, 5*time.Millisecond)

			var traced []string
			for _, r := range srv.requests() {
				if tp := r.Header.Get("Traceparent"); tp != "" {
					traced = append(traced, rpcMethod(r.Body)+" "+tp+" "+string(r.Body))
				}
			}
			if !tc.listed {
				assert.Empty(t, traced)
				return
			}
			require.Len(t, traced, 3, "first call, blocked call and its cancellation only")
			assert.True(t, strings.HasPrefix(traced[0], "tools/call "+tp1), traced[0])
			assert.Contains(t, traced[0], `"msg":"a"`)
			assert.True(t, strings.HasPrefix(traced[1], "tools/call "+tp2), traced[1])
			assert.Contains(t, traced[1], `"block"`)
			assert.True(t, strings.HasPrefix(traced[2], "notifications/cancelled "+tp2), traced[2])
		})
	}
}

func countMethod(s *testServer, method string) int {
	n := 0
	for _, r := range s.requests() {
		if r.Method == http.MethodPost && rpcMethod(r.Body) == method {
			n++
		}
	}
	return n
}
