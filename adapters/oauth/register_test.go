package oauth

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

func TestRegisterRequestAndSecretDropped(t *testing.T) {
	e := newEnv(t)
	e.c.clientName = "host-app"
	got := make(chan map[string]any, 1)
	e.as.handle("/register", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			json.NewDecoder(r.Body).Decode(&body) != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
			return
		}
		got <- body
		writeJSON(w, http.StatusCreated, map[string]any{
			"client_id": "client-" + canary, "client_secret": "secret-" + canary, "token_endpoint_auth_method": "none",
		})
	})
	p, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	require.NoError(t, err)
	defer p.Close()
	body := <-got
	assert.Equal(t, map[string]any{
		"client_name":                "host-app",
		"application_type":           "native",
		"redirect_uris":              []any{p.RedirectURI()},
		"grant_types":                []any{"authorization_code", "refresh_token"},
		"response_types":             []any{"code"},
		"token_endpoint_auth_method": "none",
	}, body)

	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	raw, err := e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "secret-", "the client stays public")
	assert.Equal(t, "client-"+canary, siStored(t, e, "srv").ClientID)
	var lastToken map[string][]string
	e.as.set(func(f *fakeAS) { lastToken = f.lastToken })
	assert.NotContains(t, lastToken, "client_secret")
}

func TestPreRegisteredClientSkipsRegistration(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	s.ClientID = "pre-" + canary
	p, err := e.c.BeginSignIn(context.Background(), s)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	assert.Zero(t, e.as.count("/register"))
	assert.Equal(t, s.ClientID, siLastAuth(e).Get("client_id"))
	assert.Equal(t, s.ClientID, siStored(t, e, "srv").ClientID)
}

func TestRegisterFailures(t *testing.T) {
	answer := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	tests := []struct {
		name   string
		setup  func(e *testEnv)
		class  refusal.Class
		reason string
	}{
		{"refused 400", func(e *testEnv) {
			e.as.handle("/register", answer(400, `{"error":"invalid_redirect_uri","error_description":"`+canary+`"}`))
		}, refusal.Refused, ReasonRegistrationRefused},
		{"refused 403", func(e *testEnv) { e.as.handle("/register", answer(403, canary)) }, refusal.Refused, ReasonRegistrationRefused},
		{"unavailable", func(e *testEnv) {
			e.as.set(func(f *fakeAS) {
				m := f.defaultServerMeta()
				delete(m, "registration_endpoint")
				f.serverMeta = m
			})
		}, refusal.Unsupported, ReasonRegistrationUnavailable},
		{"not json", func(e *testEnv) { e.as.handle("/register", answer(201, "client_id="+canary)) }, refusal.Protocol, ReasonMetadataInvalid},
		{"json array", func(e *testEnv) { e.as.handle("/register", answer(201, `["`+canary+`"]`)) }, refusal.Protocol, ReasonMetadataInvalid},
		{"no client_id", func(e *testEnv) {
			e.as.handle("/register", answer(201, `{"client_secret":"`+canary+`"}`))
		}, refusal.Protocol, ReasonMetadataInvalid},
		{"empty client_id", func(e *testEnv) { e.as.handle("/register", answer(200, `{"client_id":""}`)) }, refusal.Protocol, ReasonMetadataInvalid},
		{"numeric client_id", func(e *testEnv) { e.as.handle("/register", answer(200, `{"client_id":7}`)) }, refusal.Protocol, ReasonMetadataInvalid},
		{"status 204", func(e *testEnv) { e.as.handle("/register", answer(204, "")) }, refusal.Protocol, ReasonMetadataInvalid},
		{"status 202", func(e *testEnv) {
			e.as.handle("/register", answer(202, `{"client_id":"c-`+canary+`"}`))
		}, refusal.Protocol, ReasonMetadataInvalid},
		{"server error", func(e *testEnv) { e.as.handle("/register", answer(503, canary)) }, refusal.Transient, ReasonUnavailable},
		{"redirect", func(e *testEnv) {
			e.as.handle("/register", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, e.as.URL()+"/register2?x="+canary, http.StatusTemporaryRedirect)
			})
		}, refusal.Refused, ReasonRedirectRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			s := e.as.server("srv")
			s.CallbackPort = siFreePort(t)
			p, err := e.c.BeginSignIn(context.Background(), s)
			require.Nil(t, p)
			siRequire(t, err, tt.class, tt.reason)
			// The listener opened for the redirect URI was closed again.
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.CallbackPort)))
			require.NoError(t, err, "the callback port is free again")
			require.NoError(t, ln.Close())
			_, err = e.store.Get(context.Background(), storeKey("srv", e.as.MCP()))
			require.Error(t, err, "nothing stored")
		})
	}
}
