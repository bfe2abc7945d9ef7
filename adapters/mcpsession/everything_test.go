package mcpsession

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// The third-party peer: @modelcontextprotocol/server-everything, installed
// at the exact version of ../../peers/package.json by
//
//	cd peers && npm ci
//
// Without it (or without node) these tests skip, unless
// MCPWARD_REQUIRE_PEERS=1, when they fail.
const everythingEntry = "../../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// everythingCommand returns node and the absolute entry point of the
// server, or skips (fails under MCPWARD_REQUIRE_PEERS=1) when missing.
func everythingCommand(t *testing.T) (node, entry string) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("MCPWARD_REQUIRE_PEERS") == "1" {
			t.Fatalf("MCPWARD_REQUIRE_PEERS=1 but %s is missing (run: cd peers && npm ci)", what)
		}
		t.Skipf("%s is missing (run: cd peers && npm ci; MCPWARD_REQUIRE_PEERS=1 makes this a failure)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	entry, err = filepath.Abs(everythingEntry)
	require.NoError(t, err)
	if _, err := os.Stat(entry); err != nil {
		missing("@modelcontextprotocol/server-everything")
	}
	return node, entry
}

// minimalEnv is the whole environment the peer gets: what node needs to
// run, nothing inherited.
func minimalEnv(t *testing.T, node string, extra ...string) []string {
	return append([]string{"PATH=" + filepath.Dir(node), "HOME=" + t.TempDir()}, extra...)
}

// everythingStdio connects to the peer run as a child over stdio.
func everythingStdio(t *testing.T) Dialer {
	node, entry := everythingCommand(t)
	return DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
		cmd := exec.Command(node, entry, "stdio")
		cmd.Env = minimalEnv(t, node)
		cmd.Dir = t.TempDir()
		kt := &killableCommand{CommandTransport: &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}
		return &Conn{Transport: kt, Abort: kt.kill}, nil
	})
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// everythingHTTP starts the peer in its Streamable HTTP mode on a loopback
// port and connects to http://127.0.0.1:PORT/mcp.
func everythingHTTP(t *testing.T) Dialer {
	node, entry := everythingCommand(t)
	port := freePort(t)
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Env = minimalEnv(t, node, "PORT="+strconv.Itoa(port))
	cmd.Dir = t.TempDir()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "the peer never listened")
	origin := "http://" + addr
	return DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
		return httpConn(origin+"/mcp", origin), nil
	})
}

func TestEverything(t *testing.T) {
	tests := []struct {
		name string
		dial func(t *testing.T) Dialer
	}{
		{"stdio", everythingStdio},
		{"streamable http", everythingHTTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A secret in our own environment must not reach the child.
			t.Setenv("MCPWARD_TEST_SECRET", canary)
			d := tt.dial(t)
			rec := newSignalRecorder()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess, err := New(d, nil).Connect(ctx, target("everything"), rec.signals())
			require.NoError(t, err)
			defer func() { assert.NoError(t, sess.Close()) }()

			id := sess.Identity()
			assert.Equal(t, "everything", id.ServerID)
			assert.Equal(t, PinnedProtocolVersion, id.ProtocolVersion)
			assert.Equal(t, "mcp-servers/everything", id.ServerName)
			assert.NotEmpty(t, id.ServerVersion)
			assert.Equal(t, []ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates}, id.Declared)

			tools := map[string]ports.ToolItem{}
			for _, p := range drain(t, sess, ports.ListTools) {
				assert.Empty(t, p.Dropped)
				for _, tool := range p.Tools {
					tools[tool.Name] = tool
				}
			}
			require.Contains(t, tools, "echo")
			schema, ok := asTree(t, tools["echo"].InputSchema).(map[string]any)
			require.True(t, ok)
			assert.Equal(t, "object", schema["type"])
			assert.Equal(t, "Echoes back the input string", tools["echo"].Description)

			for _, kind := range []ports.ListKind{ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates} {
				n := 0
				for _, p := range drain(t, sess, kind) {
					for _, item := range p.Items {
						assert.True(t, json.Valid(item))
						n++
					}
				}
				assert.Positive(t, n, "%s listed", kind)
			}

			res, err := sess.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"hello from mcpward"}`)})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.JSONEq(t, `[{"type":"text","text":"Echo: hello from mcpward"}]`, string(res.Content))

			// Invalid arguments are the server's tool error, not ours.
			res, err = sess.Call(ctx, ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":42}`)})
			if err == nil {
				assert.True(t, res.IsError)
			} else {
				assertNoCanary(t, err)
			}

			if _, ok := tools["get-env"]; ok {
				res, err := sess.Call(ctx, ports.CallRequest{Name: "get-env"})
				require.NoError(t, err)
				assert.NotContains(t, string(res.Content), canary, "the child's environment is exactly the minimal one")
				assert.NotContains(t, string(res.Content), "MCPWARD_TEST_SECRET")
			}
		})
	}
}
