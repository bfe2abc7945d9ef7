package oauth

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

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

// BenchmarkLoopbackCall is one HTTP POST on loopback (127.0.0.1, plain
// http, a 60-byte JSON body and answer) per variant per op, interleaved,
// each with the Authenticator's headers for it: bearer, and dpop (a fresh
// proof per request, signed ahead while the previous request was in
// flight). The server reads the headers and nothing more. It reports each
// variant's p50 and the DPoP one's extra time as a share of the Bearer
// call:
//
//	cd adapters/oauth && go test -run '^$' -bench LoopbackCall -benchtime 4000x -count 4 .
func BenchmarkLoopbackCall(b *testing.B) {
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}`)
	}))
	defer rs.Close()
	var auths [2]*Authenticator
	for i, dpop := range []bool{false, true} {
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
		if auths[i], err = e.c.Authenticator(s); err != nil {
			b.Fatal(err)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	call := func(a *Authenticator) {
		h, err := a.Headers(context.Background(), authReq(a))
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, rs.URL+"/mcp", bytes.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var d [2][]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			k := (i + j) % 2
			start := time.Now()
			call(auths[k])
			d[k] = append(d[k], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := func(x []time.Duration) float64 { slices.Sort(x); return float64(x[len(x)/2].Nanoseconds()) }
	bearer, dpop := p50(d[0]), p50(d[1])
	b.ReportMetric(bearer, "bearer-p50-ns")
	b.ReportMetric(dpop, "dpop-p50-ns")
	b.ReportMetric(100*(dpop-bearer)/bearer, "dpop-extra-%")
}
