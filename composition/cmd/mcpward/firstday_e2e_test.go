package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLegacySSEEndpointNamed: an HTTP+SSE endpoint of the 2024-11-05 era
// configured as "http" is named as such, with the status, and the user is
// told which URL to use (#25 item 7). The server is the shape an Express
// app of that era has: GET /sse opens the stream, POST /sse is 404.
func TestLegacySSEEndpointNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=1\n\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Cannot POST /sse")
	}))
	t.Cleanup(srv.Close)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"old": {"type": "http", "url": ` + jsonString(srv.URL+"/sse") + `}}}`,
	})
	r := w.run(t, "tools")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Regexp(t, `(?m)^old: failed \(refused legacy_sse_endpoint\): 127\.0\.0\.1:\d+ \(HTTP 404\)$`, r.stdout)
	assert.Contains(t, r.stderr, "mcpward: hint: the URL is a legacy SSE endpoint, which mcpward does not speak: use the server's Streamable HTTP URL (often /mcp)\n")
	assert.NotContains(t, r.stderr, "retrying", "not retried: the same POST gets the same answer")

	r = w.run(t, "call", "old", "x", "--json")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"reason": "legacy_sse_endpoint"`)
	assert.Contains(t, r.stdout, `"status": 404`)
}
