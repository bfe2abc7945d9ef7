//go:build linux || darwin

package httptransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/egress"
)

// BenchmarkHTTPConnectShared is, per op, one connect to an origin
// (building the transport, initialize, notifications/initialized, the
// standalone GET stream), closing the session (DELETE) and releasing the
// transport, over plain http and over TLS, on the same in-process go-sdk
// server. Sides, alternated in one run (see paired):
//
//   - raw-fresh: the raw go-sdk client with an http.Transport of its own
//     per connect, what every mcpward connect was before transports were
//     shared per origin: a new dial (and full TLS handshake) each time;
//   - raw-shared: the raw go-sdk client on one http.Transport for the
//     whole run, as a host on http.DefaultClient has it;
//   - mcpward: a Factory's transport while another transport of the same
//     Factory holds the origin (a Fleet's other server there, or a live
//     session the reconnecting one replaces), so its connections and
//     their admission are reused;
//   - mcpward-released: a Factory's transport with nothing else holding
//     the origin, so every connect dials again (admitted again) and, over
//     TLS, resumes the session the Factory cached.
//
// The command of BENCHMARKS.md:
//
//	cd adapters/httptransport
//	go test -run '^$' -bench HTTPConnectShared -benchtime 400x -count 4
func BenchmarkHTTPConnectShared(b *testing.B) {
	for _, tlsOn := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "tls"}[tlsOn]
		b.Run(name, func(b *testing.B) {
			h := mcpHandler(newMCPServer(), nil)
			var srv *httptest.Server
			var tc *tls.Config
			srv = httptest.NewUnstartedServer(h)
			// A session's close cuts its GET stream's connection, at
			// times mid-handshake: nothing to report.
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			if tlsOn {
				srv.StartTLS()
				roots := x509.NewCertPool()
				roots.AddCert(srv.Certificate())
				tc = &tls.Config{RootCAs: roots}
			} else {
				srv.Start()
			}
			b.Cleanup(srv.Close)
			url := srv.URL + "/mcp"
			policy, err := egress.New(&egress.Options{Allow: []egress.Rule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}})
			if err != nil {
				b.Fatal(err)
			}
			newFactory := func() *Factory {
				return New(policy, &Options{Resolver: &mapResolver{}, TLSConfig: tc})
			}
			cycle := func(tr closableTransport) time.Duration {
				t0 := time.Now()
				cs := benchConnect(b, tr)
				if err := cs.Close(); err != nil {
					b.Fatal("close failed")
				}
				tr.CloseIdleConnections()
				return time.Since(t0)
			}
			rawFresh := func() time.Duration {
				return cycle(rawTr{&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}}})
			}
			sharedRT := &http.Transport{TLSClientConfig: tc, MaxIdleConnsPerHost: maxIdlePerOrigin}
			b.Cleanup(sharedRT.CloseIdleConnections)
			rawShared := func() time.Duration {
				// The same transport, not released per connect: a host
				// keeps http.DefaultClient's pool.
				t0 := time.Now()
				cs := benchConnect(b, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: sharedRT}})
				if err := cs.Close(); err != nil {
					b.Fatal("close failed")
				}
				return time.Since(t0)
			}
			held := newFactory()
			keeper, err := held.Transport(context.Background(), httpTarget("keeper", url, nil), nil)
			if err != nil {
				b.Fatal("transport refused")
			}
			b.Cleanup(keeper.CloseIdleConnections)
			ward := func(f *Factory) func() time.Duration {
				return func() time.Duration {
					tr, err := f.Transport(context.Background(), httpTarget("bench", url, nil), nil)
					if err != nil {
						b.Fatal("transport refused")
					}
					return cycle(tr)
				}
			}
			released := newFactory()
			b.Run("raw-fresh-vs-mcpward", func(b *testing.B) {
				b.ReportAllocs()
				paired(b, 4, rawFresh, ward(held))
			})
			b.Run("raw-shared-vs-mcpward", func(b *testing.B) {
				b.ReportAllocs()
				paired(b, 4, rawShared, ward(held))
			})
			b.Run("raw-fresh-vs-mcpward-released", func(b *testing.B) {
				b.ReportAllocs()
				paired(b, 4, rawFresh, ward(released))
			})
		})
	}
}
