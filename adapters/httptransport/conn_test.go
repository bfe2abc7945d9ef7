package httptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

// legacyHandler is a hand-written legacy-era server: initialize (session
// "sid"), notifications 202, DELETE 200, the standalone GET 405; a
// tools/call and a GET resuming a stream go to call and resume.
func legacyHandler(call func(w http.ResponseWriter, r *http.Request, id json.RawMessage), resume func(w http.ResponseWriter, last string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			last := r.Header.Get("Last-Event-Id")
			if last == "" || resume == nil {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			resume(w, last)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "sid")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"h","version":"1"}}}`, m.ID)
		case len(m.ID) == 0 || m.Method == "":
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "tools/call":
			call(w, r, m.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	}
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

var lastCallID atomic.Value // json.RawMessage of the last tools/call

func okResult(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"resumed"}]}}`
}

// TestResumption: a call's SSE stream that ends before the answer is
// resumed with GET and Last-Event-ID (after the retry: the server asked
// for); a stream without ids is not resumed and the call fails; a stream
// that makes no progress is given up after MaxRetries, failing the
// connection.
func TestResumption(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dial := func(t *testing.T, h http.Handler, retries int) (*mcp.ClientSession, *testServer) {
		srv := newTestServer(t, false, h)
		tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, MaxRetries: retries}).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
		require.NoError(t, err)
		closeIdle(t, tr)
		cs, err := connect(ctx, tr)
		require.NoError(t, err)
		return cs, srv
	}
	lastEventIDs := func(srv *testServer) (ids []string) {
		for _, r := range srv.requests() {
			if r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "" {
				ids = append(ids, r.Header.Get("Last-Event-Id"))
				assert.Equal(t, "sid", r.Header.Get("Mcp-Session-Id"))
				assert.Equal(t, "2025-11-25", r.Header.Get("Mcp-Protocol-Version"))
			}
		}
		return ids
	}

	t.Run("resumed", func(t *testing.T) {
		start := time.Now()
		cs, srv := dial(t, legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			lastCallID.Store(id)
			sse(w, "id: e1\nretry: 50\ndata: "+note+"\n\n")
		}, func(w http.ResponseWriter, last string) {
			sse(w, "id: e2\ndata: "+okResult(lastCallID.Load().(json.RawMessage))+"\n\n")
		}), 2)
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
		require.NoError(t, err)
		assert.Equal(t, "resumed", res.Content[0].(*mcp.TextContent).Text)
		assert.Equal(t, []string{"e1"}, lastEventIDs(srv))
		assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "retry: honoured")
	})
	t.Run("no ids", func(t *testing.T) {
		cs, srv := dial(t, legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			sse(w, "data: "+note+"\n\n")
		}, func(w http.ResponseWriter, last string) { t.Error("resumed a stream without ids") }), 2)
		defer cs.Close()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "request terminated without response")
		assert.Empty(t, lastEventIDs(srv))
		require.NoError(t, cs.Ping(ctx, nil), "the session goes on")
	})
	t.Run("no progress", func(t *testing.T) {
		cs, srv := dial(t, legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			sse(w, "id: e1\nretry: 1\ndata: "+note+"\n\n")
		}, func(w http.ResponseWriter, last string) {
			sse(w, "id: e1\nretry: 1\n\n")
		}), 2)
		defer cs.Close()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
		require.Error(t, err)
		assert.Equal(t, []string{"e1", "e1", "e1"}, lastEventIDs(srv), "one resumption after the progress e1 made, then MaxRetries without progress (as the SDK counts)")
	})
}

// TestLegacyStandaloneStreamAndDelete: the standalone GET stream opens once
// the session is up and tolerates 405, another 4xx or a non-SSE answer
// (the session goes on); Close sends DELETE with the session id, but not
// when the server answered 404 for the session (it is gone).
func TestLegacyStandaloneStreamAndDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, get := range []struct {
		name string
		h    func(w http.ResponseWriter)
	}{
		{"405", func(w http.ResponseWriter) { w.WriteHeader(http.StatusMethodNotAllowed) }},
		{"404", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) }},
		{"json", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}},
		{"sse", func(w http.ResponseWriter) { sse(w, ": open\n\n") }},
	} {
		t.Run(get.name, func(t *testing.T) {
			inner := legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) { sse(w, "data: "+okResult(id)+"\n\n") }, nil)
			var gets atomic.Int64
			srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					get.h(w)
					return
				}
				inner(w, r)
			}))
			tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			cs, err := connect(ctx, tr)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return gets.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
			require.NoError(t, err, "the session goes on")
			require.NoError(t, cs.Close())
			var deletes int
			for _, r := range srv.requests() {
				if r.Method == http.MethodDelete {
					deletes++
					assert.Equal(t, "sid", r.Header.Get("Mcp-Session-Id"))
				}
				if r.Method == http.MethodGet {
					assert.Equal(t, "text/event-stream", r.Header.Get("Accept"))
				}
			}
			assert.Equal(t, 1, deletes)
			assert.EqualValues(t, 1, gets.Load(), "one standalone stream")
		})
	}
	t.Run("session gone", func(t *testing.T) {
		inner := legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) { w.WriteHeader(http.StatusNotFound) }, nil)
		srv := newTestServer(t, false, inner)
		tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
		require.NoError(t, err)
		closeIdle(t, tr)
		cs, err := connect(ctx, tr)
		require.NoError(t, err)
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
		require.Error(t, err)
		assert.ErrorIs(t, err, mcp.ErrSessionMissing)
		_ = cs.Close()
		for _, r := range srv.requests() {
			assert.NotEqual(t, http.MethodDelete, r.Method, "no DELETE for a session the server says is gone")
		}
	})
}

// TestModernDiscoverAndListenFailuresNotFatal: a server that refuses
// server/discover with a plain-text 400 gets the legacy initialize
// fallback on the same connection; a failed subscriptions/listen leaves
// the modern session usable.
func TestModernDiscoverAndListenFailuresNotFatal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	refuse := func(method string, modern bool) *testServer {
		s := newMCPServer()
		h := mcpHandler(s, &mcp.StreamableHTTPOptions{Stateless: modern})
		return newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				if rpcMethod(body) == method {
					http.Error(w, "no", http.StatusBadRequest)
					return
				}
				r.Body = io.NopCloser(strings.NewReader(string(body)))
			}
			h.ServeHTTP(w, r)
		}))
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpward-test", Version: "0"}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		MultiRoundTrip:         &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	})
	t.Run("discover", func(t *testing.T) {
		srv := refuse("server/discover", false)
		tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
		require.NoError(t, err)
		closeIdle(t, tr)
		cs, err := client.Connect(ctx, tr, nil)
		require.NoError(t, err)
		defer cs.Close()
		assert.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "x"}})
		require.NoError(t, err)
	})
	t.Run("listen", func(t *testing.T) {
		srv := refuse("subscriptions/listen", true)
		tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
		require.NoError(t, err)
		closeIdle(t, tr)
		cs, err := client.Connect(ctx, tr, nil)
		if err != nil {
			// The SDK fails Connect itself when listen fails; the
			// connection must not be what broke: a second session works.
			var r *refusal.Error
			require.ErrorAs(t, err, &r)
			assert.Equal(t, ReasonHTTPStatus, r.Reason)
			return
		}
		defer cs.Close()
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "x"}})
		require.NoError(t, err)
	})
}

// TestCloseEndsEverything: Close, with the standalone GET stream open and
// a call's SSE stream in flight, returns promptly, ends the call, and
// leaves no goroutine (goleak checks the package); Read then returns
// io.EOF. An abandoned call's POST is cancelled and the session goes on.
func TestCloseEndsEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTestServer(t, false, mcpHandler(newMCPServer(), nil))
	tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	cs, err := connect(ctx, tr)
	require.NoError(t, err)

	cctx, abandon := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "block"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	abandon()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned call did not return")
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "x"}})
	require.NoError(t, err, "the session goes on after an abandoned call")

	require.NoError(t, cs.Close())

	// A server whose call stream never ends (until its request does).
	srv2 := newTestServer(t, false, legacyHandler(func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		sse(w, ": open\n\n")
		<-r.Context().Done()
	}, nil))
	tr2, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv2.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr2)
	// The SDK's ClientSession.Close waits for its calls in flight (which
	// mcpsession ends first); the connection's Close itself does not.
	c, err := tr2.Connect(ctx)
	require.NoError(t, err)
	id, _ := jsonrpc.MakeID(float64(1))
	require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: []byte(`{}`)}))
	_, err = c.Read(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}))
	id2, _ := jsonrpc.MakeID(float64(2))
	require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id2, Method: "tools/call", Params: []byte(`{"name":"x"}`)}))
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 2*time.Second, "Close returns promptly")
	_, err = c.Read(ctx)
	assert.ErrorIs(t, err, io.EOF)
	var deleted bool
	for _, r := range srv2.requests() {
		deleted = deleted || r.Method == http.MethodDelete
	}
	assert.True(t, deleted)
}

// TestJSONRPCErrorBody: a non-2xx answer whose body is a JSON-RPC error is
// that error, for that request only: the session goes on.
func TestJSONRPCErrorBody(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := newTestServer(t, false, legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad arguments"}}`, id)
	}, nil))
	tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	cs, err := connect(ctx, tr)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	var we *jsonrpc.Error
	require.ErrorAs(t, err, &we)
	assert.EqualValues(t, -32602, we.Code)
	require.NoError(t, cs.Ping(ctx, nil), "the session goes on")
}

// TestRefusedStreamBodyBounded: a resumption answered with a 4xx whose
// body is an endless event stream (which roundTripper passes uncapped, as
// a GET's 4xx) is read no further than the receive cap: the server's
// writes fail long before it has sent what an unbounded read would take.
func TestRefusedStreamBodyBounded(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	const total = 64 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var written atomic.Int64
	srv := newTestServer(t, false, legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		sse(w, "id: e1\nretry: 1\ndata: "+note+"\n\n")
	}, func(w http.ResponseWriter, last string) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusBadRequest)
		chunk := bytes.Repeat([]byte(": padding\n"), 3277)
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, MaxRetries: 2, ReceiveCap: 64 << 10}).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	cs, err := connect(ctx, tr)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	require.Error(t, err, "the resumption was refused")
	assert.Less(t, written.Load(), int64(total), "the refused stream's body was read to its end")
}

// TestJSONAnswerBufferRecycled: a JSON answer is read into a pooled buffer
// that is reused once the answer is decoded; every message keeps its own
// bytes. Each answer is as long as the last (so the next one lands in the
// same buffer) but different in every byte of its result.
func TestJSONAnswerBufferRecycled(t *testing.T) {
	answersKeepTheirBytes(t, false, 2000)
}

// answersKeepTheirBytes makes 8 calls whose answers (as SSE events when
// sse, else JSON bodies) are fill bytes long each, differing in every byte
// of their result, and checks each message still holds its own answer
// after all of them were read: no message aliases a reused buffer.
func answersKeepTheirBytes(t *testing.T, sse bool, fill int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	result := func(i int) string {
		return `{"fill":"` + strings.Repeat(string(rune('a'+i%26)), fill) + `"}`
	}
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID int `json:"id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}\n\n", req.ID, result(req.ID))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":%s}`, req.ID, result(req.ID))
	}))
	tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	c, err := tr.Connect(ctx)
	require.NoError(t, err)
	defer c.Close()
	var got []*jsonrpc.Response
	for i := range 8 {
		id, err := jsonrpc.MakeID(float64(i))
		require.NoError(t, err)
		require.NoError(t, c.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)}))
		m, err := c.Read(ctx)
		require.NoError(t, err)
		r, ok := m.(*jsonrpc.Response)
		require.True(t, ok, "got %T", m)
		got = append(got, r)
	}
	for i, r := range got {
		assert.JSONEq(t, result(i), string(r.Result), "answer %d", i)
	}
}

// TestAuthRetryCarriesOnlyItsOwnHeaders: the retry after a refused
// credential carries the authenticator's fresh headers and none of the
// first attempt's (a DPoP proof is bound to one request), also when the
// connection wrote the first attempt's headers into its own request.
func TestAuthRetryCarriesOnlyItsOwnHeaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inner := legacyHandler(func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
	}, nil)
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner(w, r)
	}))
	auth := portstest.NewAuthenticator(http.Header{"Authorization": {"DPoP stale"}, "Dpop": {"proof-of-the-first-attempt"}}, 1)
	auth.Reauthorize = func(context.Context) (http.Header, error) {
		return http.Header{"Authorization": {"Bearer fresh"}}, nil
	}
	tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}}).Transport(ctx, httpTarget("s", srv.URL, nil), auth)
	require.NoError(t, err)
	closeIdle(t, tr)
	cs, err := connect(ctx, tr)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	require.NoError(t, err)

	reqs := srv.requests()
	require.GreaterOrEqual(t, len(reqs), 3, "the refused attempt, its retry, the call")
	assert.Equal(t, "proof-of-the-first-attempt", reqs[0].Header.Get("Dpop"), "the first attempt")
	for i, r := range reqs[1:] {
		assert.Equal(t, "Bearer fresh", r.Header.Get("Authorization"), "request %d", i+1)
		assert.Empty(t, r.Header.Values("Dpop"), "request %d carried the first attempt's proof", i+1)
	}
}
