package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestOwnClassify(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		op     op
		class  refusal.Class
		reason string
	}{
		{"refusal in chain", fmt.Errorf("x %s: %w", canary, &refusal.Error{Class: refusal.AuthRequired, Reason: "auth_required"}), opCall, refusal.AuthRequired, "auth_required"},
		{"connection closed", fmt.Errorf("%w: calling %q: %s", mcp.ErrConnectionClosed, "tools/call", canary), opCall, refusal.Transient, "connection_closed"},
		{"eof", fmt.Errorf("read %s: %w", canary, io.EOF), opList, refusal.Transient, "connection_closed"},
		{"broken pipe", fmt.Errorf("write |1: %w", syscall.EPIPE), opCall, refusal.Transient, "connection_closed"},
		{"closed pipe", io.ErrClosedPipe, opConnect, refusal.Transient, "connection_closed"},
		{"transport rejected", fmt.Errorf("POST %s: %w: %s", canary, &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, canary), opCall, refusal.Transient, "transport_rejected"},
		{"client closing", &jsonrpc.Error{Code: -32003, Message: canary}, opList, refusal.Transient, "connection_closed"},
		{"server error reply on call", &jsonrpc.Error{Code: -32000, Message: canary}, opCall, refusal.Protocol, "call_rejected"},
		{"server error reply on list", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: canary}, opList, refusal.Protocol, "list_rejected"},
		{"server error reply on initialize", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: canary}, opConnect, refusal.Protocol, "initialize_rejected"},
		{"version code on initialize", &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: canary}, opConnect, refusal.Protocol, "protocol_version_refused"},
		{"version code on call", &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: canary}, opCall, refusal.Protocol, "call_rejected"},
		{"exec not found", &exec.Error{Name: canary, Err: exec.ErrNotFound}, opConnect, refusal.Config, "spawn_failed"},
		{"deadline", context.DeadlineExceeded, opCall, refusal.Transient, "deadline_exceeded"},
		{"canceled", fmt.Errorf("%s: %w", canary, context.Canceled), opCall, refusal.Transient, "canceled"},
		{"network", &netErr{}, opList, refusal.Transient, "network_error"},
		{"json syntax", fmt.Errorf("calling %q: %w", canary, &json.SyntaxError{Offset: 1}), opConnect, refusal.Protocol, "malformed_message"},
		{"json type on list", &json.UnmarshalTypeError{Value: canary, Type: reflect.TypeFor[[]string]()}, opList, refusal.Protocol, "malformed_reply"},
		{"json type on initialize", fmt.Errorf("calling %q: %w", "initialize", &json.UnmarshalTypeError{Value: canary, Type: reflect.TypeFor[[]string]()}), opConnect, refusal.Protocol, "malformed_reply"},
		{"undecodable response", fmt.Errorf("sending %q: failed to decode response: %s", canary, canary), opConnect, refusal.Protocol, "malformed_message"},
		{"not json-rpc 2.0", fmt.Errorf("invalid message version tag %q; expected %q", canary, "2.0"), opCall, refusal.Protocol, "malformed_message"},
		{"session missing", fmt.Errorf("%s: failed to connect (session ID: %s): %w", canary, canary, mcp.ErrSessionMissing), opCall, refusal.Transient, "session_missing"},
		{"unknown on call", errors.New(canary), opCall, refusal.Protocol, "malformed_reply"},
		{"unknown on connect", errors.New(canary), opConnect, refusal.Transient, "connect_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := ownClassify(tt.err, tt.op)
			assert.Equal(t, tt.class, re.Class)
			assert.Equal(t, tt.reason, re.Reason)
			assertNoCanary(t, re)
		})
	}
}

type netErr struct{}

func (*netErr) Error() string   { return "dial tcp " + canary }
func (*netErr) Timeout() bool   { return false }
func (*netErr) Temporary() bool { return false }

// TestClassifyHook: the Conn's Classify decides first, and mcpsession's own
// mapping decides what it does not recognise.
func TestClassifyHook(t *testing.T) {
	tests := []struct {
		name     string
		classify func(error) *refusal.Error
		class    refusal.Class
		reason   string
		origin   string
	}{
		{"hook's refusal wins", func(error) *refusal.Error {
			return &refusal.Error{Class: refusal.AuthRefused, Reason: "auth_refused"}
		}, refusal.AuthRefused, "auth_refused", "https://origin.test:443"},
		{"hook's own origin is kept", func(error) *refusal.Error {
			return &refusal.Error{Class: refusal.Transient, Reason: "network_error", Origin: "https://x.test:1"}
		}, refusal.Transient, "network_error", "https://x.test:1"},
		{"internal falls back", func(error) *refusal.Error {
			return &refusal.Error{Class: refusal.Internal, Reason: "transport_failed"}
		}, refusal.Protocol, "call_rejected", "https://origin.test:443"},
		{"nil falls back", func(error) *refusal.Error { return nil }, refusal.Protocol, "call_rejected", "https://origin.test:443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen atomic.Int32
			conn := startMemPeer(t, &memPeer{version: "2025-11-25"})
			conn.Origin = "https://origin.test:443"
			conn.Classify = func(err error) *refusal.Error {
				seen.Add(1)
				var we *jsonrpc.Error
				assert.ErrorAs(t, err, &we, "the hook sees the SDK's error")
				return tt.classify(err)
			}
			s := connect(t, New(fixedDialer(conn), nil), ports.Signals{})
			// memPeer's message names the canary: passed as an argument
			// value, the server's echo of it is masked.
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "x", Arguments: json.RawMessage(`{"v":"` + canary + `"}`)})
			re := requireRefusal(t, err, tt.class, tt.reason)
			assert.Equal(t, "srv", re.Server)
			assert.Equal(t, tt.origin, re.Origin)
			assert.Equal(t, int32(1), seen.Load())
		})
	}
}

// TestUnsupportedVersionDetection pins the SDK's unexported error type the
// version refusal relies on.
func TestUnsupportedVersionDetection(t *testing.T) {
	rs := &rawServer{version: "1999-01-01"}
	ts := httptest.NewServer(rs)
	defer ts.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, err := mcp.NewClient(&mcp.Implementation{Name: "raw"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.Error(t, err)
	assert.True(t, isUnsupportedVersion(err), "the SDK's unsupported-version error is recognised (%T)", err)
	assert.True(t, isUnsupportedVersion(fmt.Errorf("wrapped: %w", err)))
	assert.False(t, isUnsupportedVersion(errors.New("unsupported protocol version: \"x\"")))
	assert.False(t, isUnsupportedVersion(&jsonrpc.Error{Code: 1}))
}

// TestNoCanaryInErrors plants a canary in URL paths and queries, server
// error messages, server info, tool output and process arguments, and
// checks no error string ever carries it.
func TestNoCanaryInErrors(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	type scenario struct {
		name string
		run  func(t *testing.T) error
	}
	raw := func(rs *rawServer, f func(s ports.Session) error) func(t *testing.T) error {
		return func(t *testing.T) error {
			s, err := New(rawDialer(t, rs), nil).Connect(context.Background(), target("srv"), ports.Signals{})
			if err != nil {
				return err
			}
			defer s.Close()
			return f(s)
		}
	}
	rpcErr := func(method string, _ json.RawMessage) (any, *jsonrpc.Error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: canary, Data: json.RawMessage(`"` + canary + `"`)}
	}
	canaryArgs := json.RawMessage(`{"v":"` + canary + `"}`)
	scenarios := []scenario{
		{"connection refused at a canary URL", func(t *testing.T) error {
			d := DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
				return httpConn(closedURL+"/"+canary+"?q="+canary, closedURL), nil
			})
			_, err := New(d, nil).Connect(context.Background(), target("srv"), ports.Signals{})
			return err
		}},
		// A call's refusal keeps the server's own message (#25 item 6),
		// masked: the canary it echoes is the call's argument value.
		{"initialize error reply", raw(&rawServer{version: "2025-11-25", status: 0, handle: rpcErr}, func(s ports.Session) error {
			_, err := s.Call(context.Background(), ports.CallRequest{Name: canary, Arguments: canaryArgs})
			return err
		})},
		{"version refused with canary server info", raw(&rawServer{version: "2027-01-01"}, func(ports.Session) error { return nil })},
		{"unknown version", raw(&rawServer{version: canary}, func(ports.Session) error { return nil })},
		{"list error reply", raw(&rawServer{version: "2025-11-25", handle: rpcErr}, func(s ports.Session) error {
			_, err := s.List(context.Background(), ports.ListTools, canary)
			return err
		})},
		{"http 500 with canary body", raw(&rawServer{version: "2025-11-25", status: 500, body: canary}, func(s ports.Session) error {
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "x"})
			return err
		})},
		{"http 404 with json-rpc error body", raw(&rawServer{version: "2025-11-25", status: 404, body: `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"` + canary + `"}}`}, func(s ports.Session) error {
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "x", Arguments: canaryArgs})
			return err
		})},
		{"unknown content type", raw(&rawServer{version: "2025-11-25", handle: func(string, json.RawMessage) (any, *jsonrpc.Error) {
			return map[string]any{"content": []any{map[string]any{"type": canary}}}, nil
		}}, func(s ports.Session) error {
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "x"})
			return err
		})},
		{"malformed tools", raw(&rawServer{version: "2025-11-25", handle: func(string, json.RawMessage) (any, *jsonrpc.Error) {
			return map[string]any{"tools": canary}, nil
		}}, func(s ports.Session) error {
			_, err := s.List(context.Background(), ports.ListTools, "")
			return err
		})},
		{"go-sdk tool error", func(t *testing.T) error {
			s := connect(t, New(transports[1].dial(t, newSDKServer(nil)), nil), ports.Signals{})
			_, err := s.Call(context.Background(), ports.CallRequest{Name: "rpcerror"})
			return err
		}},
		{"spawn of a canary path", func(t *testing.T) error {
			conn := fixtureConnAt("/nonexistent/"+canary, canary)
			_, err := New(fixedDialer(conn), nil).Connect(context.Background(), target("srv"), ports.Signals{})
			return err
		}},
		{"child with canary argv exits", func(t *testing.T) error {
			cmd := exec.Command("/bin/sh", "-c", "echo "+canary+" >&2; exit 3", canary)
			_, err := New(fixedDialer(&Conn{Transport: &mcp.CommandTransport{Command: cmd}}), nil).Connect(context.Background(), target("srv"), ports.Signals{})
			return err
		}},
		{"abandoned call", func(t *testing.T) error {
			s := connect(t, New(transports[1].dial(t, newSDKServer(nil)), nil), ports.Signals{})
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := s.Call(ctx, ports.CallRequest{Name: "hang", Arguments: json.RawMessage(`{"message":"` + canary + `"}`)})
			return err
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			err := sc.run(t)
			require.Error(t, err)
			var re *refusal.Error
			require.ErrorAs(t, err, &re, "every failure is a refusal")
			assertNoCanary(t, err)
			_, hostport, _ := strings.Cut(re.Origin, "://")
			assert.NotContains(t, hostport, "/", "the origin is scheme://host:port only")
		})
	}
}

func TestDropLog(t *testing.T) {
	d := &dropLog{}
	logger := slog.New(d)
	logger.Error("excluding tool from tools/list", "tool", "t1", "error", errors.New(canary))
	logger.Error("excluding nil tool from tools/list")
	logger.Error("excluding tool from tools/list", "error", canary) // no name
	logger.Error("excluding tool from tools/list", "tool", 42)      // not a string
	logger.Error("something else "+canary, "tool", "t2")
	logger.Warn("excluding tool from tools/list", "tool", "t3") // wrong level
	logger.With("a", 1).Error("excluding tool from tools/list", "tool", "t4")
	logger.WithGroup("g").Error("excluding tool from tools/list", "tool", "t5")

	got := d.take()
	assert.Equal(t, []ports.DroppedTool{
		{Name: "t1", Reason: DropInvalidHeaderAnnotation},
		{Name: "", Reason: DropNullTool},
		{Name: "", Reason: DropInvalidHeaderAnnotation},
		{Name: "", Reason: DropInvalidHeaderAnnotation},
	}, got)
	for _, g := range got {
		assert.NotContains(t, g.Name, canary)
	}
	assert.Empty(t, d.take(), "take drains")
	assert.False(t, d.Enabled(context.Background(), slog.LevelWarn))
}

// TestNoPanic: a panic in a decoding is errMalformed with the zero result
// (the session's one recover); anything else passes through unchanged.
func TestNoPanic(t *testing.T) {
	res, err := noPanic(func() (*int, error) { panic("crafted reply") })
	assert.Nil(t, res)
	assert.ErrorIs(t, err, errMalformed)
	want := errors.New("decode")
	n := 7
	res, err = noPanic(func() (*int, error) { return &n, want })
	assert.Same(t, &n, res)
	assert.Same(t, want, err)
	_, _, ok := decodeToolsPage(json.RawMessage(`{"tools":[`))
	assert.False(t, ok, "a page that does not decode is not taken")
}
