package httptransport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

// authServer answers 401 to every request whose Authorization is not
// accept (or to every request when accept is ""), 200 otherwise.
func authServer(t *testing.T, accept string) *testServer {
	return newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if accept == "" || r.Header.Get("Authorization") != accept {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
}

func TestAuthRetry(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name      string
		accept    string // "" = 401 forever
		retries   int
		reauthErr error
		wantReqs  int
		wantErr   string // "" = success
		wantClass refusal.Class
	}{
		{name: "401 then 200 with fresh headers", accept: "Bearer fresh", retries: 1, wantReqs: 2},
		{name: "401 forever: exactly one retry", retries: 5, wantReqs: 2, wantErr: ReasonAuthRefused, wantClass: refusal.AuthRefused},
		{name: "authenticator allows no retry", accept: "Bearer fresh", retries: 0, wantReqs: 1, wantErr: ReasonAuthRefused, wantClass: refusal.AuthRefused},
		{name: "re-authorization fails", accept: "Bearer fresh", retries: 1, reauthErr: errors.New("secret-reauth-text"), wantReqs: 1, wantErr: ReasonAuthRefused, wantClass: refusal.AuthRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := authServer(t, tc.accept)
			auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer stale"}}, tc.retries)
			auth.Reauthorize = func(context.Context) (http.Header, error) {
				if tc.reauthErr != nil {
					return nil, tc.reauthErr
				}
				return http.Header{"Authorization": {"Bearer fresh"}}, nil
			}
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), auth)
			require.NoError(t, err)
			closeIdle(t, tr)

			resp, err := post(context.Background(), tr, body)
			reqs := srv.requests()
			require.Len(t, reqs, tc.wantReqs)
			assert.LessOrEqual(t, len(auth.Refusals()), 1, "Refused at most once per request")
			if len(auth.Refusals()) == 1 {
				r := auth.Refusals()[0]
				assert.Equal(t, http.StatusUnauthorized, r.Status)
				assert.Equal(t, "s", r.ServerID)
				assert.Equal(t, `Bearer error="invalid_token"`, r.Challenge)
			}
			assert.Equal(t, "Bearer stale", reqs[0].Header.Get("Authorization"))
			if tc.wantReqs == 2 {
				assert.Equal(t, "Bearer fresh", reqs[1].Header.Get("Authorization"), "the retry has fresh headers")
				assert.Equal(t, body, string(reqs[1].Body), "the POST body is resent whole")
			}
			if tc.wantErr == "" {
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, 200, resp.StatusCode)
				return
			}
			requireRefusal(t, err, tc.wantClass, tc.wantErr)
			assert.NotContains(t, err.Error(), "secret-reauth-text")
			assert.NotContains(t, err.Error(), "Bearer")
		})
	}
}

func TestAuthHeadersFailureSendsNothing(t *testing.T) {
	tests := []struct {
		name   string
		fail   error
		header http.Header
		class  refusal.Class
		reason string
	}{
		{name: "no credential yet", fail: refusal.New(refusal.AuthRequired, "signin_required", ""), class: refusal.AuthRequired, reason: "signin_required"},
		{name: "transient", fail: refusal.New(refusal.Transient, "token_endpoint_down", ""), class: refusal.Transient, reason: "token_endpoint_down"},
		{name: "plain error is not wrapped", fail: errors.New("token=canary-secret"), class: refusal.AuthRequired, reason: ReasonAuthFailed},
		{name: "reserved header from the authenticator", header: http.Header{"Mcp-Session-Id": {"canary-secret"}}, class: refusal.AuthRequired, reason: ReasonReservedHeader},
		{name: "CRLF from the authenticator", header: http.Header{"Authorization": {"canary-secret\r\nX: 1"}}, class: refusal.AuthRequired, reason: ReasonHeaderInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := authServer(t, "Bearer ok")
			h := tc.header
			if h == nil {
				h = http.Header{"Authorization": {"Bearer ok"}}
			}
			auth := portstest.NewAuthenticator(h, 1)
			if tc.fail != nil {
				auth.Fail("Headers", tc.fail)
			}
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL, nil), auth)
			require.NoError(t, err)
			closeIdle(t, tr)
			_, err = post(context.Background(), tr, `{}`)
			requireRefusal(t, err, tc.class, tc.reason)
			assert.NotContains(t, err.Error(), "canary-secret")
			assert.Zero(t, srv.accepts(), "never an unauthenticated attempt")
		})
	}
}

func TestNoAuthenticator401IsAuthRequired(t *testing.T) {
	srv := authServer(t, "")
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	_, err = post(context.Background(), tr, `{}`)
	requireRefusal(t, err, refusal.AuthRequired, ReasonAuthRequired)
	assert.Len(t, srv.requests(), 1)
}

func TestConcurrentRefusalsShareOneReauthorization(t *testing.T) {
	const n = 8
	srv := authServer(t, "Bearer fresh")
	auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer stale"}}, 1)
	release := make(chan struct{})
	auth.Reauthorize = func(ctx context.Context) (http.Header, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return http.Header{"Authorization": {"Bearer fresh"}}, nil
	}
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL, nil), auth)
	require.NoError(t, err)
	closeIdle(t, tr)

	var wg sync.WaitGroup
	var ok atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := post(context.Background(), tr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
			if err == nil {
				resp.Body.Close()
				ok.Add(1)
			}
		}()
	}
	require.Eventually(t, func() bool { return auth.Waiting() == n }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	assert.EqualValues(t, n, ok.Load())
	assert.Equal(t, 1, auth.Reauths(), "one re-authorization for all")
	assert.Len(t, auth.Refusals(), n, "one Refused per request")
	assert.Len(t, srv.requests(), 2*n)
}

func TestCanaryNeverInErrors(t *testing.T) {
	const staticCanary = "static-canary-4f1e"
	const authCanary = "auth-canary-9b2c"
	mk := func(h http.HandlerFunc) *testServer { return newTestServer(t, false, h) }
	servers := map[string]*testServer{
		"401 forever": mk(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", "Bearer "+authCanary)
			w.WriteHeader(401)
			io.WriteString(w, authCanary+staticCanary)
		}),
		"403 forever": mk(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }),
		"redirect": mk(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/?"+staticCanary, http.StatusTemporaryRedirect)
		}),
		"500": mk(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, r.Header.Get("X-Static")+r.Header.Get("Authorization"))
		}),
		"cap": mk(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, strings.Repeat(r.Header.Get("Authorization"), 1000))
		}),
		"json error": mk(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`)
		}),
	}
	for name, srv := range servers {
		t.Run(name, func(t *testing.T) {
			auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer " + authCanary}, "X-Auth": {authCanary}}, 1)
			tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: 1024}).Transport(context.Background(),
				httpTarget("s", srv.URL+"/p?q=url-canary", map[string]string{"X-Static": staticCanary, "Authorization": staticCanary}), auth)
			require.NoError(t, err)
			closeIdle(t, tr)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = connect(ctx, tr)
			require.Error(t, err)
			c := Classify(err, "s", "")
			require.NotNil(t, c)
			for _, s := range []string{err.Error(), c.Error()} {
				assert.NotContains(t, s, staticCanary)
				assert.NotContains(t, s, authCanary)
			}
			// The SDK's own text embeds the URL; Classify's never does.
			assert.NotContains(t, c.Error(), "url-canary")
			assert.NotContains(t, c.Error(), "/p")
		})
	}
	t.Run("reserved static header value", func(t *testing.T) {
		_, err := New(egress.Default(), safeOptions()).Transport(context.Background(),
			httpTarget("s", "http://127.0.0.1:1/", map[string]string{"Mcp-Session-Id": staticCanary, "X-Bad": staticCanary + "\n"}), nil)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), staticCanary)
	})
}

// TestAuthRequestURLAndNonce: the authenticator is told each request's
// target URI without query or fragment (scheme and host lower case, as a
// DPoP proof's htu names it), and a refusal's DPoP-Nonce header.
func TestAuthRequestURLAndNonce(t *testing.T) {
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "DPoP fresh" {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.Header().Set("DPoP-Nonce", "n-1")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	auth := portstest.NewAuthenticator(http.Header{"Authorization": {"DPoP stale"}}, 1)
	auth.Reauthorize = func(context.Context) (http.Header, error) {
		return http.Header{"Authorization": {"DPoP fresh"}}, nil
	}
	endpoint := strings.Replace(srv.URL, "http://", "HTTP://", 1) + "/Mcp/x?tenant=1"
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", endpoint, nil), auth)
	require.NoError(t, err)
	closeIdle(t, tr)
	resp, err := post(context.Background(), tr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.NoError(t, err)
	resp.Body.Close()

	want := strings.ToLower(srv.URL) + "/Mcp/x"
	reqs := auth.Requests()
	require.Len(t, reqs, 2, "the request and its retry")
	for _, r := range reqs {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, want, r.URL, "no query; scheme and host lower case, the path as it is")
	}
	require.Len(t, auth.Refusals(), 1)
	assert.Equal(t, "n-1", auth.Refusals()[0].DPoPNonce)
	assert.Equal(t, `DPoP error="use_dpop_nonce"`, auth.Refusals()[0].Challenge)
}
