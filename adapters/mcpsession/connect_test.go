package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
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

func TestNewDefaults(t *testing.T) {
	assert.Panics(t, func() { New(nil, nil) })

	tests := []struct {
		name   string
		opts   *Options
		accept []string
	}{
		{"nil options", nil, DefaultAcceptVersions()},
		{"explicit list", &Options{AcceptVersions: []string{"2025-06-18"}}, []string{"2025-06-18"}},
		{"2026 generation dropped", &Options{AcceptVersions: []string{"2026-07-28", "2025-11-25", "2027-01-01", "", "2025-11-25"}}, []string{"2025-11-25"}},
		{"empty list refuses all", &Options{AcceptVersions: []string{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(fixedDialer(nil), tt.opts)
			assert.Equal(t, tt.accept, c.accept)
			assert.Equal(t, DefaultCloseTimeout, c.closeTimeout)
			assert.Equal(t, DefaultClientName, c.impl.Name)
			assert.Equal(t, ClientVersion, c.impl.Version)
		})
	}
	assert.Equal(t, []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, DefaultAcceptVersions())
}

// TestConnectHandshake checks what goes on the wire in initialize: the
// pinned version, the client identity, and no capability at all.
func TestConnectHandshake(t *testing.T) {
	tests := []struct {
		name        string
		opts        *Options
		wantName    string
		wantVersion string
	}{
		{"defaults", nil, "mcpward", ClientVersion},
		{"custom identity", &Options{ClientName: "host", ClientVersion: "7.0"}, "host", "7.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &memPeer{version: "2025-11-25"}
			s := connect(t, New(fixedDialer(startMemPeer(t, p)), tt.opts), ports.Signals{})
			require.NotNil(t, s)
			var init struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ClientInfo      struct{ Name, Version string }
			}
			require.NoError(t, json.Unmarshal(p.lastParams("initialize"), &init))
			assert.Equal(t, PinnedProtocolVersion, init.ProtocolVersion)
			assert.Empty(t, init.Capabilities, "no roots, sampling or elicitation is advertised")
			assert.Equal(t, tt.wantName, init.ClientInfo.Name)
			assert.Equal(t, tt.wantVersion, init.ClientInfo.Version)
			assert.Zero(t, p.count("server/discover"), "a pinned client never probes with server/discover")
			assert.Eventually(t, func() bool { return p.count("notifications/initialized") == 1 }, 5*time.Second, 5*time.Millisecond)
		})
	}
}

func TestConnectIdentity(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			s := connect(t, New(tc.dial(t, newSDKServer(nil)), nil), ports.Signals{})
			assert.Equal(t, ports.SessionIdentity{
				ServerID:        "srv",
				ProtocolVersion: "2025-11-25",
				ServerName:      "sdk-server",
				ServerVersion:   "2.3.4",
				Declared:        []ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates},
			}, s.Identity())
		})
	}

	caps := []struct {
		name string
		caps map[string]any
		want []ports.ListKind
	}{
		{"nothing declared", map[string]any{}, nil},
		{"logging only", map[string]any{"logging": map[string]any{}}, nil},
		{"prompts", map[string]any{"prompts": map[string]any{}}, []ports.ListKind{ports.ListPrompts}},
		{"resources means templates too", map[string]any{"resources": map[string]any{"subscribe": true}}, []ports.ListKind{ports.ListResources, ports.ListResourceTemplates}},
		{"tools and prompts", map[string]any{"prompts": map[string]any{}, "tools": map[string]any{}}, []ports.ListKind{ports.ListTools, ports.ListPrompts}},
	}
	for _, tc := range caps {
		t.Run("declared/"+tc.name, func(t *testing.T) {
			p := &memPeer{version: "2025-06-18", caps: tc.caps}
			s := connect(t, New(fixedDialer(startMemPeer(t, p)), nil), ports.Signals{})
			id := s.Identity()
			assert.Equal(t, tc.want, id.Declared)
			assert.Equal(t, "2025-06-18", id.ProtocolVersion)
			assert.Empty(t, id.ServerName, "no serverInfo: empty name")
			assert.Empty(t, id.ServerVersion)
			// Identity hands out copies.
			id.Declared = append(id.Declared, "x")
			assert.Equal(t, tc.want, s.Identity().Declared)
		})
	}
}

// TestConnectVersion drives the version check with a raw HTTP server that
// answers initialize with the given version.
func TestConnectVersion(t *testing.T) {
	tests := []struct {
		name    string
		version string
		accept  []string
		ok      bool
	}{
		{"2026-07-28 refused (the SDK would accept it)", "2026-07-28", nil, false},
		{"2026-07-28 refused even when listed", "2026-07-28", []string{"2026-07-28", "2025-11-25"}, false},
		{"unknown to the SDK", "1999-01-01", nil, false},
		{"empty version", "", nil, false},
		{"2025-11-25 accepted", "2025-11-25", nil, true},
		{"2025-06-18 accepted", "2025-06-18", nil, true},
		{"2025-03-26 accepted", "2025-03-26", nil, true},
		{"2024-11-05 accepted", "2024-11-05", nil, true},
		{"outside a host's narrower list", "2025-03-26", []string{"2025-11-25"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &rawServer{version: tt.version}
			var released atomic.Int32
			inner := rawDialer(t, rs)
			d := DialerFunc(func(ctx context.Context, tg ports.Target) (*Conn, error) {
				conn, err := inner.Dial(ctx, tg)
				if err != nil {
					return nil, err
				}
				rel := conn.Release
				conn.Release = func() { released.Add(1); rel() }
				return conn, nil
			})
			c := New(d, &Options{AcceptVersions: tt.accept})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := c.Connect(ctx, target("v"), ports.Signals{})
			if tt.ok {
				require.NoError(t, err)
				assert.Equal(t, tt.version, s.Identity().ProtocolVersion)
				require.NoError(t, s.Close())
				assert.Equal(t, int32(1), released.Load())
				return
			}
			re := requireRefusal(t, err, refusal.Protocol, "protocol_version_refused")
			assert.Nil(t, s)
			assert.Equal(t, "v", re.Server)
			assert.NotEmpty(t, re.Origin)
			assert.Equal(t, int32(1), released.Load(), "a refused session releases its transport")
			assert.Zero(t, rs.count("tools/list"), "nothing is used on a refused session")
		})
	}
}

// TestConnectVersionSDKServer: a real go-sdk server speaking only
// 2026-07-28 is refused, though the SDK client would have used it.
func TestConnectVersionSDKServer(t *testing.T) {
	p := &memPeer{version: "2026-07-28"}
	_, err := New(fixedDialer(startMemPeer(t, p)), nil).Connect(context.Background(), target("new"), ports.Signals{})
	requireRefusal(t, err, refusal.Protocol, "protocol_version_refused")
	assert.Zero(t, p.count("tools/list"))
}

func TestConnectFailures(t *testing.T) {
	dialRefusal := &refusal.Error{Class: refusal.Refused, Reason: "egress_refused"}
	tests := []struct {
		name   string
		dialer Dialer
		class  refusal.Class
		reason string
		server string
	}{
		{"dialer refusal passes through, server stamped",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) { return nil, dialRefusal }),
			refusal.Refused, "egress_refused", "srv"},
		{"dialer refusal keeps its own server",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
				return nil, &refusal.Error{Class: refusal.Refused, Reason: "egress_refused", Server: "other"}
			}),
			refusal.Refused, "egress_refused", "other"},
		{"plain dialer error is internal, text dropped",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) { return nil, errors.New("dial " + canary) }),
			refusal.Internal, "dial_failed", "srv"},
		{"dialer returns no transport",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) { return &Conn{}, nil }),
			refusal.Internal, "dial_failed", "srv"},
		{"version unknown to the SDK (in memory)",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
				return startMemPeer(t, &memPeer{version: "x"}), nil
			}),
			refusal.Protocol, "protocol_version_refused", "srv"},
		{"spawn failure",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
				return fixtureConnAt("/nonexistent/"+canary+"/server", canary), nil
			}),
			refusal.Config, "spawn_failed", "srv"},
		{"child exits at once",
			DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
				return fixtureConnAt("/bin/true", canary), nil
			}),
			refusal.Transient, "connection_closed", "srv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := New(tt.dialer, nil).Connect(ctx, target("srv"), ports.Signals{})
			assert.Nil(t, s)
			re := requireRefusal(t, err, tt.class, tt.reason)
			assert.Equal(t, tt.server, re.Server)
		})
	}
}

// TestConnectInitializeRejected: a JSON-RPC error reply to initialize
// becomes Protocol "initialize_rejected" without the server's text, over
// HTTP and in memory.
func TestConnectInitializeRejected(t *testing.T) {
	tests := []struct {
		name   string
		code   int64
		reason string
	}{
		{"generic", jsonrpc.CodeInternalError, "initialize_rejected"},
		{"unsupported version code", mcp.CodeUnsupportedProtocolVersion, "protocol_version_refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, st := mcp.NewInMemoryTransports()
			sconn, err := st.Connect(context.Background())
			require.NoError(t, err)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					msg, err := sconn.Read(context.Background())
					if err != nil {
						return
					}
					if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
						_ = sconn.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: tt.code, Message: canary}})
					}
				}
			}()
			t.Cleanup(func() { _ = sconn.Close(); <-done })
			_, err = New(fixedDialer(&Conn{Transport: ct}), nil).Connect(context.Background(), target("srv"), ports.Signals{})
			requireRefusal(t, err, refusal.Protocol, tt.reason)
		})
	}
}

// TestConnectCancelled: a ctx that ends during the handshake with a child
// that never answers aborts it at once (the SDK alone would take > 5 s).
func TestConnectCancelled(t *testing.T) {
	var aborts atomic.Int32
	conn := fixtureConn(t, &aborts, "-silent")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := New(fixedDialer(conn), nil).Connect(ctx, target("silent"), ports.Signals{})
	assert.Nil(t, s)
	requireRefusal(t, err, refusal.Transient, "deadline_exceeded")
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, int32(1), aborts.Load())

	// An already-ended ctx never dials.
	dialed := false
	_, err = New(DialerFunc(func(context.Context, ports.Target) (*Conn, error) { dialed = true; return nil, nil }), nil).
		Connect(ctx, target("x"), ports.Signals{})
	requireRefusal(t, err, refusal.Transient, "deadline_exceeded")
	assert.False(t, dialed)
}
