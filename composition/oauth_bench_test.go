package composition

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerRT adds a fixed bearer token to every request.
type bearerRT struct {
	token string
	base  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// BenchmarkOAuthCall makes one tool call per variant per op, interleaved,
// on one TLS server that accepts only the token a sign-in got: raw is the
// go-sdk client with that token in a fixed header; static is mcpward with
// the token as the definition's static Authorization header; oauth is
// mcpward with the credential the OAuth client stored (headless profile:
// file tokens), read from the store on every request; dpop is the same on
// a second such server whose authorization server offers DPoP, so every
// request carries a proof of the sign-in's key (the server checks only
// that there is one: the client's cost alone). It reports each p50, the
// ratios to raw, and what DPoP adds to the OAuth call:
//
//	cd composition && go test -run '^$' -bench OAuthCall -benchtime 2000x -count 4 .
func BenchmarkOAuthCall(b *testing.B) {
	o := newOAuthMCP(b)
	cfg := oauthConfig(b, o.TS)
	h, cleanup, err := Headless(StateDir(b.TempDir()), nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	ctx := context.Background()
	if err := h.SignIn(ctx, oauthSrcs(o.TS.URL), "guarded", browser(b, o.TS)); err != nil {
		b.Fatal(err)
	}
	var token string
	o.Mu.Lock()
	for tok := range o.Tokens {
		token = tok
	}
	o.Mu.Unlock()

	srcs := userSrc(`{"mcpServers": {
	  "guarded": {"type": "http", "url": "` + o.TS.URL + `/mcp", "oauth": {}},
	  "static":  {"type": "http", "url": "` + o.TS.URL + `/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`)
	cfg.Lookup = func(k string) (string, bool) { return token, k == "TOKEN" }
	h2, cleanup2, err := Headless(StateDir(b.TempDir()), nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup2()
	// The static host has no sign-in; the OAuth host signed in above.
	fo := h.Connect(ctx, srcs[:1], &ConnectOptions{Names: []string{"guarded"}})
	defer fo.Close()
	fs := h2.Connect(ctx, srcs, &ConnectOptions{Names: []string{"static"}})
	defer fs.Close()
	if fo.Servers()[0].State != StateConnected || fs.Servers()[0].State != StateConnected {
		b.Fatalf("not connected: %+v %+v", fo.Servers()[0], fs.Servers()[0])
	}

	od := newOAuthMCP(b)
	od.Mu.Lock()
	od.DPoP, od.SkipProofs = true, true
	od.Mu.Unlock()
	hd, cleanupd, err := Headless(StateDir(b.TempDir()), nil, oauthConfig(b, od.TS))
	if err != nil {
		b.Fatal(err)
	}
	defer cleanupd()
	if err := hd.SignIn(ctx, oauthSrcs(od.TS.URL), "guarded", browser(b, od.TS)); err != nil {
		b.Fatal(err)
	}
	fd := hd.Connect(ctx, oauthSrcs(od.TS.URL), &ConnectOptions{Names: []string{"guarded"}})
	defer fd.Close()
	if fd.Servers()[0].State != StateConnected {
		b.Fatalf("not connected: %+v", fd.Servers()[0])
	}

	pool := x509.NewCertPool()
	pool.AddCert(o.TS.Certificate())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: o.TS.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{token, tr}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	calls := [4]func() error{
		func() error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			return err
		},
		func() error { _, err := fs.CallServerTool(ctx, "static", "whoami", nil); return err },
		func() error { _, err := fo.CallServerTool(ctx, "guarded", "whoami", nil); return err },
		func() error { _, err := fd.CallServerTool(ctx, "guarded", "whoami", nil); return err },
	}
	var d [4][]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 4 {
			k := (i + j) % 4
			start := time.Now()
			if err := calls[k](); err != nil {
				b.Fatal(err)
			}
			d[k] = append(d[k], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := func(x []time.Duration) float64 { slices.Sort(x); return float64(x[len(x)/2].Nanoseconds()) }
	raw, static, oauth, dpop := p50(d[0]), p50(d[1]), p50(d[2]), p50(d[3])
	b.ReportMetric(raw, "raw-p50-ns")
	b.ReportMetric(static/raw, "static/raw")
	b.ReportMetric(oauth/raw, "oauth/raw")
	b.ReportMetric(oauth-static, "oauth-static-ns")
	b.ReportMetric(dpop/raw, "dpop/raw")
	b.ReportMetric(dpop-oauth, "dpop-oauth-ns")
	b.ReportMetric(100*(dpop-oauth)/oauth, "dpop-extra-%")
	o.Mu.Lock()
	od.Mu.Lock()
	if od.BoundAsBearer != 0 || len(od.Bound) == 0 {
		b.Errorf("the dpop variant did not use DPoP-bound tokens (%d bound, %d as Bearer)", len(od.Bound), od.BoundAsBearer)
	}
	od.Mu.Unlock()
	o.Mu.Unlock()
}
