package oauth

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpward/mcpward/conformance"
)

// TestAuthenticatorConformance runs conformance.RunAuthenticator against
// the Authenticator of a signed-in credential at the fake authorization
// server (rotating refresh tokens): a re-authorization is a refresh grant
// at /token; Stall holds the token endpoint; Exhaust kills every refresh
// token there (invalid_grant); SignOut is the Client's SignOut.
func TestAuthenticatorConformance(t *testing.T) {
	conformance.RunAuthenticator(t, func(t *testing.T) conformance.AuthenticatorHarness {
		e := newEnv(t)
		s, _ := tokSeed(t, e, "srv", nil)
		a, req := tokAuth(t, e.c, s)
		return conformance.AuthenticatorHarness{
			Auth:    a,
			Request: req,
			Reauths: func() int { return e.as.count("/token") },
			Stall: func() func() {
				gate := make(chan struct{})
				var once sync.Once
				e.as.handle("/token", func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-gate:
					case <-r.Context().Done():
						return
					}
					e.as.token(w, r)
				})
				return func() { once.Do(func() { close(gate) }) }
			},
			Exhaust: func() { e.as.set(func(f *fakeAS) { clear(f.refreshes) }) },
			SignOut: func() {
				if err := e.c.SignOut(context.Background(), s); err != nil {
					t.Errorf("SignOut: %v", err)
				}
			},
		}
	})
}
