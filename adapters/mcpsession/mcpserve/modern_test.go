package mcpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headerRecorder records the Mcp-Session-Id of every response.
type headerRecorder struct {
	mu  sync.Mutex
	ids []string
}

func (h *headerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		h.mu.Lock()
		h.ids = append(h.ids, resp.Header.Get("Mcp-Session-Id"))
		h.mu.Unlock()
	}
	return resp, err
}

// TestHTTPModernStateless: a go-sdk client on 2026-07-28 (its default)
// lists and calls over HTTP without a session: no response carries
// Mcp-Session-Id and no session outlives its request, so the session
// cap does not apply (one legacy session fills a cap of 1, the modern
// client still works, a second legacy one is refused 503); its lists
// carry ttlMs 0 and cacheScope "private"; a legacy client still gets a
// session; a request naming a version serve does not speak is refused
// with -32022 and HTTP 400.
func TestHTTPModernStateless(t *testing.T) {
	s, addr := serveHTTP(t, HTTPOptions{MaxSessions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	legacy, err := connectHTTP(ctx, addr)
	require.NoError(t, err)
	defer legacy.Close()
	assert.NotEmpty(t, legacy.ID(), "a legacy client has a session")

	rec := &headerRecorder{}
	c := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp",
		HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	for range 3 {
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		require.Len(t, res.Tools, 1)
		assert.Equal(t, 0, res.TTLMs)
		assert.Equal(t, "private", res.CacheScope)
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.False(t, r.IsError)
	}
	rec.mu.Lock()
	ids := append([]string(nil), rec.ids...)
	rec.mu.Unlock()
	require.NotEmpty(t, ids)
	for _, id := range ids {
		assert.Empty(t, id, "no session id over the modern protocol")
	}
	require.Eventually(t, func() bool { return s.Sessions() == 1 }, 5*time.Second, 10*time.Millisecond,
		"only the legacy session outlives its requests")
	_, err = connectHTTP(ctx, addr)
	assert.Error(t, err, "the session cap still holds for legacy clients")

	body := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2099-01-01")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
	var m struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	assert.Equal(t, mcp.CodeUnsupportedProtocolVersion, m.Error.Code)
}

// TestModernRequest: only a date-shaped MCP-Protocol-Version of
// 2026-07-28 or later is served without a session.
func TestModernRequest(t *testing.T) {
	for v, want := range map[string]bool{"": false, "2025-11-25": false, "2025-06-18": false, "2026-07-28": true,
		"2027-01-01": true, "2099-12-31": true, "2026-07-2": false, "2026/07/28": false, "9999999999": false, "latest": false} {
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		if v != "" {
			r.Header.Set("Mcp-Protocol-Version", v)
		}
		assert.Equal(t, want, ModernRequest(r), "%q", v)
	}
}
