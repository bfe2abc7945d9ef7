package mcpsession

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestCall(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			s := connect(t, New(tc.dial(t, newSDKServer(nil)), nil), ports.Signals{})
			ctx := context.Background()

			t.Run("result", func(t *testing.T) {
				res, err := s.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"hi <&>"}`)})
				require.NoError(t, err)
				assert.JSONEq(t, `[{"type":"text","text":"hi <&>"}]`, string(res.Content))
				assert.JSONEq(t, `{"echo":"hi <&>"}`, string(res.StructuredContent))
				assert.JSONEq(t, `{"m":1}`, string(res.Meta))
				assert.False(t, res.IsError)
			})
			t.Run("tool error is a result", func(t *testing.T) {
				res, err := s.Call(ctx, ports.CallRequest{Name: "toolerror"})
				require.NoError(t, err)
				assert.True(t, res.IsError)
				assert.Contains(t, string(res.Content), canary, "content is data, passed on whole")
				assert.Nil(t, res.StructuredContent)
				assert.Nil(t, res.Meta)
			})
			t.Run("arguments go on the wire as given", func(t *testing.T) {
				args := `{"z":1,"a":[true,null,1.50],"s":"<&>\u00e9","n":{"k":"v"}}`
				res, err := s.Call(ctx, ports.CallRequest{Name: "rawargs", Arguments: json.RawMessage(args)})
				require.NoError(t, err)
				var content []struct{ Text string }
				require.NoError(t, json.Unmarshal(res.Content, &content))
				require.Len(t, content, 1)
				assert.Equal(t, args, content[0].Text, "no re-encoding: key order, numbers and escapes kept")
			})
			t.Run("whitespace is compacted only", func(t *testing.T) {
				res, err := s.Call(ctx, ports.CallRequest{Name: "rawargs", Arguments: json.RawMessage("{ \"a\" : 1 ,\n \"b\": \"x y\" }")})
				require.NoError(t, err)
				var content []struct{ Text string }
				require.NoError(t, json.Unmarshal(res.Content, &content))
				assert.Equal(t, `{"a":1,"b":"x y"}`, content[0].Text)
			})
			t.Run("no arguments send an empty object", func(t *testing.T) {
				res, err := s.Call(ctx, ports.CallRequest{Name: "rawargs"})
				require.NoError(t, err)
				var content []struct{ Text string }
				require.NoError(t, json.Unmarshal(res.Content, &content))
				assert.Equal(t, `{}`, content[0].Text)
			})
			t.Run("json-rpc error", func(t *testing.T) {
				_, err := s.Call(ctx, ports.CallRequest{Name: "rpcerror", Arguments: json.RawMessage(`{"key":"` + canary + `","n":12345}`)})
				re := requireRefusal(t, err, refusal.Protocol, "call_rejected")
				// The server's own message beside the code's phrase (#25
				// item 6): escaped, argument values masked, keys kept.
				assert.Equal(t, `invalid params: bad \x1b[2J{"key":"<redacted>","n":<redacted>}`, re.Detail)
				assert.Equal(t, "srv", re.Server)
			})
			t.Run("unknown tool", func(t *testing.T) {
				_, err := s.Call(ctx, ports.CallRequest{Name: "nope", Arguments: json.RawMessage(`{"a":"` + canary + `"}`)})
				re := requireRefusal(t, err, refusal.Protocol, "call_rejected")
				assert.Contains(t, re.Detail, "nope", "the server's message says which tool")
			})
		})
	}
}

func TestCallInvalidArguments(t *testing.T) {
	p := &memPeer{version: "2025-11-25"}
	s := connect(t, New(fixedDialer(startMemPeer(t, p)), nil), ports.Signals{})
	for _, args := range []string{"{", "[1]", "null", `"s"`, "1", `{"a":1}x`, " ", "{\"" + canary} {
		t.Run(args, func(t *testing.T) {
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "x", Arguments: json.RawMessage(args)})
			requireRefusal(t, err, refusal.Config, "arguments_invalid")
		})
	}
	assert.Zero(t, p.count("tools/call"), "nothing is sent")
}

// inputRequiredServer answers tools/call with a multi-round-trip "input
// required" result whose empty inputRequests makes the SDK's default
// middleware re-send the call (load shedding).
func inputRequiredServer() *rawServer {
	return &rawServer{version: "2025-11-25", handle: func(method string, _ json.RawMessage) (any, *jsonrpc.Error) {
		return map[string]any{"content": []any{}, "resultType": "input_required", "inputRequests": map[string]any{}}, nil
	}}
}

// TestCallNeverReplayed: the same server makes a default SDK client send
// tools/call several times; through mcpsession it is sent once.
func TestCallNeverReplayed(t *testing.T) {
	t.Run("baseline: the SDK's default client re-sends", func(t *testing.T) {
		rs := inputRequiredServer()
		ts := httptest.NewServer(rs)
		defer ts.Close()
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "x"})
		require.NoError(t, cs.Close())
		assert.Greater(t, rs.count("tools/call"), 1, "the server does trigger re-sends")
	})
	t.Run("mcpsession sends once", func(t *testing.T) {
		rs := inputRequiredServer()
		s := connect(t, New(rawDialer(t, rs), nil), ports.Signals{})
		_, err := s.Call(context.Background(), ports.CallRequest{Name: "x"})
		requireRefusal(t, err, refusal.Protocol, "call_input_required")
		assert.Equal(t, 1, rs.count("tools/call"))
	})
}

func TestCallMalformedResult(t *testing.T) {
	tests := []struct {
		name   string
		result string
		reason string
	}{
		// The SDK refuses the whole result; the reason names why
		// (isUnknownContent matches its phrase).
		{"unknown content type", `{"content":[{"type":"` + canary + `","text":"x"}]}`, "unknown_content_type"},
		{"content not an array", `{"content":"` + canary + `"}`, "malformed_reply"},
		{"isError not a bool", `{"content":[],"isError":"` + canary + `"}`, "malformed_reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handle := func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
				return json.RawMessage(tt.result), nil
			}
			s := connect(t, New(fixedDialer(startMemPeer(t, &memPeer{version: "2025-11-25", handle: handle})), nil), ports.Signals{})
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "x"})
			requireRefusal(t, err, refusal.Protocol, tt.reason)
			assertNoCanary(t, err)
		})
	}
	t.Run("missing content becomes an empty array", func(t *testing.T) {
		handle := func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
			return json.RawMessage(`{"structuredContent":[1,2]}`), nil
		}
		s := connect(t, New(fixedDialer(startMemPeer(t, &memPeer{version: "2025-11-25", handle: handle})), nil), ports.Signals{})
		res, err := s.Call(context.Background(), ports.CallRequest{Name: "x"})
		require.NoError(t, err)
		assert.Equal(t, "[]", string(res.Content))
		assert.JSONEq(t, "[1,2]", string(res.StructuredContent))
	})
}

type traceKey struct{}

// traceRecorder is an http.RoundTripper that records, per JSON-RPC method,
// the trace value found in the request's context.
type traceRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string][]string
}

func (r *traceRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.GetBody != nil {
		body, _ := req.GetBody()
		b, _ := io.ReadAll(body)
		var msg struct{ Method string }
		_ = json.NewDecoder(bytes.NewReader(b)).Decode(&msg)
		tp, _ := req.Context().Value(traceKey{}).(string)
		r.mu.Lock()
		r.seen[msg.Method] = append(r.seen[msg.Method], tp)
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func TestCallTraceparent(t *testing.T) {
	ts := httptest.NewServer(sdkHTTPHandler(newSDKServer(nil)))
	t.Cleanup(ts.Close) // after the session's Close (cleanups run last-in first-out)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

	var traced atomic.Int32
	var traceErr error
	rec := &traceRecorder{next: &http.Transport{}, seen: map[string][]string{}}
	d := DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
		conn := httpConn(ts.URL, ts.URL)
		conn.Transport.(*mcp.StreamableClientTransport).HTTPClient.Transport = rec
		conn.Release = rec.next.(*http.Transport).CloseIdleConnections
		conn.Trace = func(ctx context.Context, got string) (context.Context, error) {
			traced.Add(1)
			if traceErr != nil {
				return nil, traceErr
			}
			return context.WithValue(ctx, traceKey{}, got), nil
		}
		return conn, nil
	})
	s := connect(t, New(d, nil), ports.Signals{})
	ctx := context.Background()

	_, err := s.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"a"}`), Traceparent: tp})
	require.NoError(t, err)
	_, err = s.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"b"}`)})
	require.NoError(t, err)
	_, err = s.List(ctx, ports.ListTools, "")
	require.NoError(t, err)
	assert.Equal(t, int32(1), traced.Load(), "Trace runs only for a call carrying a traceparent")
	rec.mu.Lock()
	assert.Equal(t, []string{tp, ""}, rec.seen["tools/call"], "the call runs under Trace's context")
	assert.Equal(t, []string{""}, rec.seen["tools/list"])
	rec.mu.Unlock()

	tests := []struct {
		name   string
		err    error
		class  refusal.Class
		reason string
	}{
		{"refusal passes through", &refusal.Error{Class: refusal.Refused, Reason: "trace_origin_refused"}, refusal.Refused, "trace_origin_refused"},
		{"plain error", errors.New("bad " + canary), refusal.Config, "traceparent_refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traceErr = tt.err
			defer func() { traceErr = nil }()
			rec.mu.Lock()
			before := len(rec.seen["tools/call"])
			rec.mu.Unlock()
			_, err := s.Call(ctx, ports.CallRequest{Name: "echo", Traceparent: tp + canary})
			re := requireRefusal(t, err, tt.class, tt.reason)
			assert.Equal(t, "srv", re.Server)
			rec.mu.Lock()
			assert.Len(t, rec.seen["tools/call"], before, "no call is made")
			rec.mu.Unlock()
		})
	}
}

// TestCallTraceMeta: with Conn.TraceMeta the call's traceparent is in its
// params._meta (beside the progress token), only on the call that carries
// it, and never without a Trace hook or without TraceMeta.
func TestCallTraceMeta(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tc := range []struct {
		name      string
		trace     bool
		traceMeta bool
		want      bool
	}{
		{"Trace and TraceMeta", true, true, true},
		{"Trace alone", true, false, false},
		{"TraceMeta alone", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []any
			srv := newSDKServer(nil)
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/call" {
						mu.Lock()
						seen = append(seen, req.GetParams().GetMeta()["traceparent"])
						mu.Unlock()
					}
					return next(ctx, method, req)
				}
			})
			d := memDialer(t, srv)
			s := connect(t, New(DialerFunc(func(ctx context.Context, tg ports.Target) (*Conn, error) {
				c, err := d.Dial(ctx, tg)
				if err == nil && tc.trace {
					c.Trace = func(ctx context.Context, _ string) (context.Context, error) { return ctx, nil }
				}
				if err == nil {
					c.TraceMeta = tc.traceMeta
				}
				return c, err
			}), nil), ports.Signals{})
			ctx := context.Background()
			_, err := s.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"a"}`), Traceparent: tp,
				OnProgress: func(ports.Progress) {}})
			require.NoError(t, err)
			_, err = s.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"b"}`)})
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, seen, 2)
			if tc.want {
				assert.Equal(t, tp, seen[0])
			} else {
				assert.Nil(t, seen[0])
			}
			assert.Nil(t, seen[1], "only the call that carries it")
		})
	}
}

// TestCallTraceNil: without a Trace hook a traceparent is ignored.
func TestCallTraceNil(t *testing.T) {
	s := connect(t, New(memDialer(t, newSDKServer(nil)), nil), ports.Signals{})
	_, err := s.Call(context.Background(), ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"x"}`), Traceparent: "00-x"})
	require.NoError(t, err)
}

// TestCallConcurrent makes many calls at once on one session.
func TestCallConcurrent(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			s := connect(t, New(tc.dial(t, newSDKServer(nil)), nil), ports.Signals{})
			var wg sync.WaitGroup
			for i := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					msg := string(rune('a' + i%26))
					res, err := s.Call(context.Background(), ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"` + msg + `"}`)})
					if assert.NoError(t, err) {
						assert.JSONEq(t, `[{"type":"text","text":"`+msg+`"}]`, string(res.Content))
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestCallBeforeSend: an ended ctx refuses the call without sending it or
// abandoning the session.
func TestCallBeforeSend(t *testing.T) {
	p := &memPeer{version: "2025-11-25"}
	var aborts atomic.Int32
	conn := startMemPeer(t, p)
	conn.Abort = func() { aborts.Add(1) }
	s := connect(t, New(fixedDialer(conn), nil), ports.Signals{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Call(ctx, ports.CallRequest{Name: "x"})
	requireRefusal(t, err, refusal.Transient, "canceled")
	_, err = s.List(ctx, ports.ListTools, "")
	requireRefusal(t, err, refusal.Transient, "canceled")
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	_, err = s.Call(dctx, ports.CallRequest{Name: "x"})
	requireRefusal(t, err, refusal.Transient, "deadline_exceeded")
	assert.Zero(t, aborts.Load())
	assert.Zero(t, p.count("tools/call"))
	select {
	case <-s.Done():
		t.Fatal("the session ended")
	default:
	}
}
