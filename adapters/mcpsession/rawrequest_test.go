package mcpsession

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// writeRecorder records every message the client writes, below the
// session's own wrapper.
type writeRecorder struct {
	mcp.Transport
	mu     sync.Mutex
	writes []*jsonrpc.Request
	// ctxVals are the values under ctxKey of the contexts of the
	// tools/call writes.
	ctxVals []any
}

// ctxKey is a context key of these tests.
type ctxKey string

func (r *writeRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &writeRecorderConn{Connection: c, r: r}, nil
}

type writeRecorderConn struct {
	mcp.Connection
	r *writeRecorder
}

func (c *writeRecorderConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if req, ok := m.(*jsonrpc.Request); ok {
		c.r.mu.Lock()
		c.r.writes = append(c.r.writes, req)
		if req.Method == methodCallTool {
			c.r.ctxVals = append(c.r.ctxVals, [2]any{ctx.Value(ctxKey("tool")), ctx.Value(ctxKey("trace"))})
		}
		c.r.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

// requests returns the requests of method written so far.
func (r *writeRecorder) requests(method string) []*jsonrpc.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*jsonrpc.Request
	for _, w := range r.writes {
		if w.Method == method {
			out = append(out, w)
		}
	}
	return out
}

// rawPeer starts a memPeer answering tools/call with handle and connects
// a session to it over a recording transport; sdk keeps the session on
// the SDK's path.
func rawPeer(t *testing.T, version string, caps map[string]any, sig ports.Signals, sdk bool, handle func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error)) (*session, *memPeer, *writeRecorder) {
	t.Helper()
	p := &memPeer{version: version, caps: caps, handle: handle}
	conn := startMemPeer(t, p)
	rec := &writeRecorder{Transport: conn.Transport}
	conn.Transport = rec
	conn.Trace = func(ctx context.Context, tp string) (context.Context, error) {
		return context.WithValue(ctx, ctxKey("trace"), tp), nil
	}
	conn.WithTool = func(ctx context.Context, tool *mcp.Tool) context.Context {
		return context.WithValue(ctx, ctxKey("tool"), tool.Name)
	}
	conn.TraceMeta = true
	c := New(fixedDialer(conn), nil)
	c.sdkCalls = sdk
	s := connect(t, c, sig).(*session)
	return s, p, rec
}

var textResult = json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)

// TestRoundTripUsesItsOwnIDs: a tools/call goes out on the session's own
// path with a string id (the SDK's are integers), its result comes back to
// the caller, and the SDK's own requests keep their integer ids.
func TestRoundTripUsesItsOwnIDs(t *testing.T) {
	for _, version := range []string{"2025-11-25", ModernProtocolVersion} {
		t.Run(version, func(t *testing.T) {
			s, _, rec := rawPeer(t, version, nil, ports.Signals{}, false, func(method string, _ json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
				if method == "tools/list" {
					return json.RawMessage(`{"tools":[]}`), nil
				}
				return textResult, nil
			})
			require.NotNil(t, s.raw)
			for range 3 {
				res, err := s.Call(context.Background(), ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"a":1}`)})
				require.NoError(t, err)
				assert.JSONEq(t, `[{"type":"text","text":"ok"}]`, string(res.Content))
			}
			_, err := s.List(context.Background(), ports.ListTools, "")
			require.NoError(t, err)
			calls := rec.requests("tools/call")
			require.Len(t, calls, 3)
			seen := map[string]bool{}
			for _, c := range calls {
				id, ok := c.ID.Raw().(string)
				require.True(t, ok, "a call's id is a string")
				assert.True(t, strings.HasPrefix(id, rawIDPrefix))
				assert.False(t, seen[id], "ids are unique")
				seen[id] = true
			}
			// tools/list goes on the session's own path too (listraw.go);
			// the SDK's handshake request keeps its integer id.
			for _, l := range rec.requests("tools/list") {
				id, _ := l.ID.Raw().(string)
				assert.True(t, strings.HasPrefix(id, rawIDPrefix), "a page's id is the session's own")
			}
			hs := append(rec.requests("initialize"), rec.requests("server/discover")...)
			require.NotEmpty(t, hs)
			for _, l := range hs {
				_, ok := l.ID.Raw().(int64)
				assert.True(t, ok, "the SDK's ids stay integers")
			}
		})
	}
}

// TestRawParamsMatchSDK pins the params the session's own path sends to
// the ones the SDK's client session sends for the same call, byte for
// byte: the SEP-2575 _meta of a modern session (protocol version, client
// identity and capabilities), the log level it asked for, the progress
// token and traceparent, the name and the arguments.
func TestRawParamsMatchSDK(t *testing.T) {
	caps := map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}
	for _, version := range []string{"2025-11-25", ModernProtocolVersion} {
		for _, progress := range []bool{false, true} {
			t.Run(version+map[bool]string{true: "/progress"}[progress], func(t *testing.T) {
				sig := ports.Signals{Log: func(ports.LogMessage) {}}
				var params [2]json.RawMessage
				for i, sdk := range []bool{true, false} {
					s, p, _ := rawPeer(t, version, caps, sig, sdk, func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
						return textResult, nil
					})
					assert.Equal(t, !sdk, s.raw != nil)
					r := ports.CallRequest{Name: "na<me>", Arguments: json.RawMessage(`{"q":"<&>","n":[1,2.5,{"x":null}]}`),
						Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
					if progress {
						r.OnProgress = func(ports.Progress) {}
					}
					_, err := s.Call(context.Background(), r)
					require.NoError(t, err)
					params[i] = p.lastParams("tools/call")
				}
				require.NotEmpty(t, params[0])
				assert.Equal(t, string(params[0]), string(params[1]))
				if Modern(version) {
					assert.Contains(t, string(params[1]), mcp.MetaKeyClientCapabilities)
					assert.Contains(t, string(params[1]), mcp.MetaKeyLogLevel)
				}
			})
		}
	}
}

// TestRoundTripFailuresAsSDK: an error reply, a connection that ends with
// the call in flight, a call after it ended, a context that ends in
// flight and a Close in flight are refused the same way on both paths;
// an abandoned call is cancelled at the server by its own id.
func TestRoundTripFailuresAsSDK(t *testing.T) {
	type outcome struct {
		class  refusal.Class
		reason string
		detail string
	}
	cases := []struct {
		name string
		run  func(t *testing.T, s *session, p *memPeer, release chan struct{}) error
	}{
		{"error_reply", func(t *testing.T, s *session, _ *memPeer, _ chan struct{}) error {
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "reject"})
			return err
		}},
		{"connection_lost", func(t *testing.T, s *session, p *memPeer, release chan struct{}) error {
			go func() {
				time.Sleep(50 * time.Millisecond)
				_ = p.conn.Close()
				close(release)
			}()
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "hang"})
			return err
		}},
		{"after_loss", func(t *testing.T, s *session, p *memPeer, release chan struct{}) error {
			_ = p.conn.Close()
			close(release)
			<-s.Done()
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "echo"})
			return err
		}},
		{"ctx_ends", func(t *testing.T, s *session, _ *memPeer, release chan struct{}) error {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := s.Call(ctx, ports.CallRequest{Name: "hang"})
			close(release)
			return err
		}},
		{"close", func(t *testing.T, s *session, _ *memPeer, release chan struct{}) error {
			// The peer is released only once the call has returned: released
			// before, it could answer before Close began, and the call would
			// succeed on either path.
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				time.Sleep(50 * time.Millisecond)
				_ = s.Close()
			}()
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "hang"})
			close(release)
			<-closed
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]outcome
			for i, sdk := range []bool{true, false} {
				release := make(chan struct{})
				s, p, rec := rawPeer(t, "2025-11-25", nil, ports.Signals{}, sdk, func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
					var pr struct{ Name string }
					_ = json.Unmarshal(params, &pr)
					switch pr.Name {
					case "reject":
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such tool"}
					case "hang":
						<-release
					}
					return textResult, nil
				})
				err := tc.run(t, s, p, release)
				re := refusalOf(err)
				require.NotNil(t, re, "%v", err)
				got[i] = outcome{re.Class, re.Reason, re.Detail}
				if tc.name == "ctx_ends" && !sdk {
					// The abandoned call is cancelled by its own id.
					id := rec.requests("tools/call")[0].ID.Raw()
					require.Eventually(t, func() bool {
						for _, c := range rec.requests("notifications/cancelled") {
							var cp struct{ RequestID any }
							if json.Unmarshal(c.Params, &cp) == nil && cp.RequestID == id {
								return true
							}
						}
						return false
					}, 5*time.Second, 10*time.Millisecond)
				}
				_ = s.Close()
			}
			assert.Equal(t, got[0], got[1], "the SDK's path and the session's own")
			t.Logf("%s: %+v", tc.name, got[1])
		})
	}
}

// TestRoundTripLeavesServerTrafficToSDK: while a call waits on the
// session's own path, the server's notifications (progress for the call's
// token) and requests (ping) reach the SDK as before.
func TestRoundTripLeavesServerTrafficToSDK(t *testing.T) {
	seen := make(chan struct{}, 1)
	var p *memPeer
	s, p, _ := rawPeer(t, "2025-11-25", nil, ports.Signals{}, false, func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		var pr struct {
			Meta struct {
				ProgressToken string `json:"progressToken"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(params, &pr)
		ctx := context.Background()
		_ = p.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/progress",
			Params: json.RawMessage(`{"progressToken":"` + pr.Meta.ProgressToken + `","progress":1}`)})
		ping, _ := jsonrpc.MakeID(float64(4242))
		_ = p.conn.Write(ctx, &jsonrpc.Request{ID: ping, Method: "ping", Params: json.RawMessage(`{}`)})
		select {
		case <-seen:
		case <-time.After(5 * time.Second):
		}
		return textResult, nil
	})
	var got []ports.Progress
	res, err := s.Call(context.Background(), ports.CallRequest{Name: "echo", OnProgress: func(pr ports.Progress) {
		got = append(got, pr)
		select {
		case seen <- struct{}{}:
		default:
		}
	}})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"text","text":"ok"}]`, string(res.Content))
	require.Len(t, got, 1)
	assert.InDelta(t, 1.0, got[0].Progress, 0)
	select {
	case r := <-p.responses:
		assert.Equal(t, int64(4242), r.ID.Raw())
		assert.Nil(t, r.Error)
	case <-time.After(5 * time.Second):
		t.Fatal("the SDK did not answer the server's ping")
	}
}

// TestRoundTripConcurrentWithSDK: many calls on the session's own path
// and requests on the SDK's, at once over one connection, each get their
// own answer (the transport's Write is shared by both).
func TestRoundTripConcurrentWithSDK(t *testing.T) {
	s, _, _ := rawPeer(t, "2025-11-25", nil, ports.Signals{}, false, func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		if method == "tools/list" {
			return json.RawMessage(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`), nil
		}
		var pr struct{ Arguments struct{ N int } }
		_ = json.Unmarshal(params, &pr)
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", pr.Arguments.N)}}})
		return b, nil
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 50 {
				n := g*50 + i
				res, err := s.Call(context.Background(), ports.CallRequest{Name: "t", Arguments: json.RawMessage(`{"n":` + itoa(n) + `}`)})
				if assert.NoError(t, err) {
					assert.Equal(t, strings.Repeat("x", n), resultText(t, res))
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				p, err := s.List(context.Background(), ports.ListTools, "")
				if assert.NoError(t, err) {
					assert.Len(t, p.Tools, 1)
				}
			}
		}()
	}
	wg.Wait()
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestRoundTripCarriesCallContext: the contexts the Conn's hooks return
// for a call (Trace: the transport's trace context; WithTool: the called
// tool's header annotations) are the ones the transport's Write of the own
// path gets.
func TestRoundTripCarriesCallContext(t *testing.T) {
	s, _, rec := rawPeer(t, "2025-11-25", nil, ports.Signals{}, false, func(method string, _ json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		if method == "tools/list" {
			return json.RawMessage(`{"tools":[{"name":"route","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}`), nil
		}
		return textResult, nil
	})
	_, err := s.List(context.Background(), ports.ListTools, "")
	require.NoError(t, err)
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	_, err = s.Call(context.Background(), ports.CallRequest{Name: "route", Arguments: json.RawMessage(`{"region":"eu"}`), Traceparent: tp})
	require.NoError(t, err)
	_, err = s.Call(context.Background(), ports.CallRequest{Name: "other"})
	require.NoError(t, err)
	id, _ := rec.requests("tools/call")[0].ID.Raw().(string)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []any{[2]any{"route", tp}, [2]any{nil, nil}}, rec.ctxVals)
	assert.True(t, strings.HasPrefix(id, rawIDPrefix), "on the own path")
}
