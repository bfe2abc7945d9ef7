package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServerLogsReachTheCLILog: with --log-level warn, a server's log
// messages at warning and above reach the CLI's log (stderr), masked and
// sanitized; those below are not even asked for.
func TestServerLogsReachTheCLILog(t *testing.T) {
	const token = "tok-Canary-cli-5521"
	srv := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range []mcp.LoggingLevel{"info", "warning", "error"} {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Data: string(l) + " \x1b[31m" + req.Extra.Header.Get("X-Api-Key")})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	dir := t.TempDir()
	user := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(user, []byte(`{"mcpServers": {"logger": {"type": "http", "url": "`+ts.URL+
		`/mcp", "headers": {"X-Api-Key": "${LOGGER_KEY}"}}}}`), 0o600))
	var log syncBuffer
	a, err := New(Options{User: Path{Value: user, Set: true}, StateDir: Path{Value: filepath.Join(dir, "state"), Set: true},
		Profile: ProfileHeadless, LogLevel: slog.LevelWarn},
		Env{Cwd: dir, Log: &log, Lookup: func(k string) (string, bool) { return token, k == "LOGGER_KEY" }})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.HostErr)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := a.Host.Connect(ctx, a.LibrarySources(), nil)
	defer f.Close()
	_, err = f.CallServerTool(ctx, "logger", "log", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Count(log.String(), `msg="server log"`) == 2 }, 10*time.Second, 5*time.Millisecond, log.String())
	out := log.String()
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "level=ERROR")
	assert.NotContains(t, out, "info ", "below --log-level: not asked for")
	assert.NotContains(t, out, token)
	assert.NotContains(t, out, "\x1b")
}
