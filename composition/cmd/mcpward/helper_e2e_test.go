package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLIHeaderHelper runs a server whose definition has a headersHelper:
// refused by name until --allow-header-helper names its exact argv, then
// connected with the headers the helper printed.
func TestCLIHeaderHelper(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "helped", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Answers pong."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var refused atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer helper-secret-token" {
			refused.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer ts.Close()

	helper := filepath.Join(t.TempDir(), "print-token")
	require.NoError(t, os.WriteFile(helper, []byte("#!/bin/sh\necho '{\"Authorization\": \"Bearer helper-secret-token\"}'\n"), 0o700))
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"helped": {"type": "http", "url": ` + jsonString(ts.URL+"/mcp") +
			`, "headersHelper": [` + jsonString(helper) + `, "--for", "api"]}}}`,
	})

	r := w.run(t, "tools", "helped")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout+r.stderr, "header_helper_not_allowed")
	r = w.run(t, "show", "helped")
	assert.Contains(t, r.stdout, "--allow-header-helper", "show says how to allow it")

	r = w.run(t, "--allow-header-helper", `[`+jsonString(helper)+`, "--for", "other"]`, "tools", "helped")
	assert.Equal(t, 1, r.code, "another argv of the same program is not allowed")
	assert.Contains(t, r.stdout+r.stderr, "header_helper_not_allowed")
	assert.Zero(t, refused.Load(), "nothing was sent while refused")

	allow := `[` + jsonString(helper) + `, "--for", "api"]`
	r = w.run(t, "--allow-header-helper", allow, "call", "helped", "ping")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Equal(t, "pong\n", r.stdout)
	assert.Zero(t, refused.Load(), "every request carried the helper's header")
	assert.NotContains(t, r.stdout+r.stderr, "helper-secret-token")

	r = w.run(t, "--allow-header-helper", "not json", "list")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "JSON array")
	assert.NotContains(t, r.stderr, "not json", "the value is not echoed")
}
