package httptransport

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestOnChallenge: every 401 or 403 with a WWW-Authenticate header is told
// to Options.OnChallenge with the connection's server, URL and origin, on
// a connection without an authenticator (one request, nothing more sent)
// and on each answer of one with an authenticator; one without the header
// is not told.
func TestOnChallenge(t *testing.T) {
	const challenge = `Bearer error="invalid_token"`
	tests := []struct {
		name     string
		header   bool
		auth     bool
		wantReqs int
		wantSeen int
		reason   string
	}{
		{name: "no authenticator", header: true, wantReqs: 1, wantSeen: 1, reason: ReasonAuthRequired},
		{name: "no authenticator, no header", header: false, wantReqs: 1, wantSeen: 0, reason: ReasonAuthRequired},
		{name: "authenticator, refused twice", header: true, auth: true, wantReqs: 2, wantSeen: 2, reason: ReasonAuthRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.header {
					w.Header().Set("WWW-Authenticate", challenge)
				}
				w.WriteHeader(http.StatusUnauthorized)
			}))
			var mu sync.Mutex
			var seen []Challenge
			opts := safeOptions()
			opts.OnChallenge = func(c Challenge) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, c)
			}
			var auth ports.Authenticator
			class := refusal.AuthRequired
			if tc.auth {
				auth = portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer stale"}}, 1)
				class = refusal.AuthRefused
			}
			tr, err := New(egress.Default(), opts).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), auth)
			require.NoError(t, err)
			closeIdle(t, tr)
			_, err = post(context.Background(), tr, `{}`)
			requireRefusal(t, err, class, tc.reason)
			assert.Len(t, srv.requests(), tc.wantReqs, "no extra request")
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, seen, tc.wantSeen)
			for _, c := range seen {
				assert.Equal(t, Challenge{ServerID: "s", URL: srv.URL + "/mcp", Origin: srv.URL, Status: 401, WWWAuthenticate: challenge}, c)
			}
		})
	}
}

// TestWithOnChallenge: the copy tells both functions, the original only
// its own.
func TestWithOnChallenge(t *testing.T) {
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer scope="a"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	var first, second int
	opts := safeOptions()
	opts.OnChallenge = func(Challenge) { first++ }
	f := New(egress.Default(), opts)
	g := f.WithOnChallenge(func(Challenge) { second++ })
	assert.Same(t, f, f.WithOnChallenge(nil))
	for _, fac := range []*Factory{f, g} {
		tr, err := fac.Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
		require.NoError(t, err)
		closeIdle(t, tr)
		_, err = post(context.Background(), tr, `{}`)
		requireRefusal(t, err, refusal.AuthRequired, ReasonAuthRequired)
	}
	assert.Equal(t, 2, first, "Options.OnChallenge on both")
	assert.Equal(t, 1, second, "the added function on the copy only")
}
