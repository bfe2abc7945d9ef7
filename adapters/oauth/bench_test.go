package oauth

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpward/mcpward/ports"
)

// BenchmarkHeaders is the Authenticator's cost per request, Bearer beside
// DPoP, on one credential cached in memory (no store read, no network):
// what a DPoP-bound token adds to every request is one proof (an ECDSA
// P-256 signature over a fresh header and claims).
//
//	cd adapters/oauth && go test -run '^$' -bench Headers -benchmem -count 6 .
func BenchmarkHeaders(b *testing.B) {
	for _, dpop := range []bool{false, true} {
		name := "bearer"
		if dpop {
			name = "dpop"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b)
			if dpop {
				e.as.set(func(f *fakeAS) { f.dpopAlgs = []string{"ES256"} })
			}
			s := e.as.server("srv")
			p, err := e.c.BeginSignIn(context.Background(), s)
			if err != nil {
				b.Fatal(err)
			}
			browse(b, e.as.ts, p.URL())
			if err := p.Wait(context.Background()); err != nil {
				b.Fatal(err)
			}
			p.Close()
			a, err := e.c.Authenticator(s)
			if err != nil {
				b.Fatal(err)
			}
			req := authReq(a)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := a.Headers(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// authReq is the AuthRequest the HTTP transport sends for a POST to a's
// server.
func authReq(a *Authenticator) ports.AuthRequest {
	return ports.AuthRequest{ServerID: a.server, Origin: a.origin, Method: http.MethodPost, URL: a.htu}
}
