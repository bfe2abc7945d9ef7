package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLIBearerChallenge: an HTTP server without "oauth" whose 401
// carries a Bearer challenge is listed by tools as oauth_sign_in_required
// with the login hint, after the one request any server without
// authentication gets; doctor NAME says what to do and shows the OAuth
// discovery it ran (here it stops at once: the CLI signs in over https
// only, and this loopback server is http).
func TestCLIBearerChallenge(t *testing.T) {
	var mcpRequests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			mcpRequests.Add(1)
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource/mcp", scope="files:read"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"guarded": {"type": "http", "url": "` + srv.URL + `/mcp"}}}`,
	})

	r := w.run(t, "tools", "guarded")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, `failed (auth_required oauth_sign_in_required); sign in with "mcpward login guarded"`)
	assert.Equal(t, int32(1), mcpRequests.Load(), "one request, as for any server without authentication")

	r = w.run(t, "tools", "guarded", "--json")
	var got []struct{ Name, State, Class, Reason string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	require.Len(t, got, 1)
	assert.Equal(t, "auth_required", got[0].Class)
	assert.Equal(t, "oauth_sign_in_required", got[0].Reason)

	r = w.run(t, "doctor", "guarded")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, `fix: run "mcpward login guarded"`)
	assert.Contains(t, r.stdout, "OAuth discovery of guarded:")
	assert.NotContains(t, r.stdout+r.stderr, "files:read", "nothing the server sent is printed but projected URLs")

	r = w.run(t, "doctor", "guarded", "--json")
	var doc struct {
		OAuth *struct {
			Steps []struct{ Check, Outcome, Reason string } `json:"steps"`
		} `json:"oauth"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	require.NotNil(t, doc.OAuth, r.stdout)
	require.NotEmpty(t, doc.OAuth.Steps)
	assert.Equal(t, "failed", doc.OAuth.Steps[0].Outcome, "http is refused: the CLI signs in over https only")
}
