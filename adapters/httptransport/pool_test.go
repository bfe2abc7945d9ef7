package httptransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
)

// jsonOK answers every request with a small JSON-RPC result.
var jsonOK = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
})

// postOK posts one message through tr and reads the answer in full.
func postOK(t *testing.T, tr *Transport) {
	t.Helper()
	resp, err := post(context.Background(), tr, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestSharedTransportPerOrigin: the transports of one Factory share one
// http.Transport per origin while any of them holds it, so a second
// server on an origin reuses the connection the first one's dial admitted
// (no new dial, no new accept) and a server on another origin dials its
// own; per-server headers stay per request on a shared connection; the
// last CloseIdleConnections of an origin takes its transport out of the
// pool and closes its idle connections (TestMain's goleak finds any left),
// and a CloseIdleConnections after a late request closes what it left.
func TestSharedTransportPerOrigin(t *testing.T) {
	one := newTestServer(t, false, jsonOK)
	other := newTestServer(t, false, jsonOK)
	d := &countingDialer{}
	f := New(egress.Default(), &Options{Resolver: &mapResolver{}, Dialer: d})
	ctx := context.Background()

	a, err := f.Transport(ctx, httpTarget("a", one.URL+"/a/mcp", map[string]string{"X-Server-A": "a-only"}), nil)
	require.NoError(t, err)
	b, err := f.WithOnChallenge(func(Challenge) {}).Transport(ctx, httpTarget("b", one.URL+"/b/mcp", nil), nil)
	require.NoError(t, err)
	c, err := f.Transport(ctx, httpTarget("c", other.URL+"/mcp", nil), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, f.shared.origins(), "one shared transport per origin, the Factory's copies included")

	postOK(t, a)
	postOK(t, b)
	postOK(t, b)
	assert.Equal(t, int64(1), one.accepts(), "b reused the connection a's admitted dial made")
	assert.Equal(t, int64(1), d.n.Load(), "one dial for the origin")
	reqs := one.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "a-only", reqs[0].Header.Get("X-Server-A"))
	assert.Empty(t, reqs[1].Header.Values("X-Server-A"), "a's static header is a's requests' only")
	assert.Empty(t, reqs[2].Header.Values("X-Server-A"))

	postOK(t, c)
	assert.Equal(t, int64(1), other.accepts())
	assert.Equal(t, int64(2), d.n.Load(), "another origin dials its own")

	a.CloseIdleConnections()
	a.CloseIdleConnections() // a second release is not a second holder less
	assert.Equal(t, 2, f.shared.origins(), "b still holds the origin")
	postOK(t, b)
	assert.Equal(t, int64(1), one.accepts(), "the idle connection outlived a's release")

	b.CloseIdleConnections()
	c.CloseIdleConnections()
	assert.Equal(t, 0, f.shared.origins(), "the last release empties the pool")

	// A request after the release leaves a connection idle in a
	// transport nobody holds: the next CloseIdleConnections closes it.
	postOK(t, b)
	assert.Equal(t, int64(2), one.accepts(), "the released connections were closed")
	b.CloseIdleConnections()

	// A new transport for the origin gets a fresh shared transport.
	n, err := f.Transport(ctx, httpTarget("n", one.URL+"/mcp", nil), nil)
	require.NoError(t, err)
	closeIdle(t, n)
	postOK(t, n)
	assert.Equal(t, int64(3), one.accepts())
}

// TestSharedTransportConcurrent: many transports of one origin acquired,
// used and released concurrently leave the pool empty and no connection
// behind (goleak in TestMain), under -race.
func TestSharedTransportConcurrent(t *testing.T) {
	srv := newTestServer(t, false, jsonOK)
	f := New(egress.Default(), safeOptions())
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := f.Transport(context.Background(), httpTarget("s"+string(rune('a'+i)), srv.URL+"/mcp", nil), nil)
			if !assert.NoError(t, err) {
				return
			}
			for range 5 {
				resp, err := post(context.Background(), tr, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
				if assert.NoError(t, err) {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			tr.CloseIdleConnections()
		}()
	}
	wg.Wait()
	assert.Equal(t, 0, f.shared.origins())
	assert.Positive(t, srv.accepts())
}

// TestSharedTransportDialErrorNamesItsServer: a dial failure on an origin
// whose shared transport another server's transport made names the server
// whose request failed, not the other.
func TestSharedTransportDialErrorNamesItsServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	f := New(egress.Default(), &Options{Resolver: &mapResolver{}, Dialer: &countingDialer{}})
	first, err := f.Transport(context.Background(), httpTarget("first", "http://"+addr+"/mcp", nil), nil)
	require.NoError(t, err)
	closeIdle(t, first)
	second, err := f.Transport(context.Background(), httpTarget("second", "http://"+addr+"/mcp", nil), nil)
	require.NoError(t, err)
	closeIdle(t, second)
	_, err = post(context.Background(), second, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	r := requireRefusal(t, err, refusal.Transient, ReasonNetwork)
	assert.Equal(t, "second", r.Server)
	var ne *NetError
	require.True(t, errors.As(err, &ne))
	assert.Equal(t, CauseRefused, ne.Cause)
}

// TestTLSSessionsResumed: a connect after every transport of an origin
// was released dials again (admitted again at dial time) but resumes the
// TLS session the Factory cached instead of a full handshake; a caller's
// own ClientSessionCache is used instead of the Factory's.
func TestTLSSessionsResumed(t *testing.T) {
	var mu sync.Mutex
	var resumed []bool
	srv := newTestServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		resumed = append(resumed, r.TLS != nil && r.TLS.DidResume)
		mu.Unlock()
		jsonOK(w, r)
	}))
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	for _, own := range []bool{false, true} {
		mu.Lock()
		resumed = nil
		mu.Unlock()
		tc := &tls.Config{RootCAs: roots}
		var cache *countingCache
		if own {
			cache = &countingCache{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
			tc.ClientSessionCache = cache
		}
		policy, err := egress.New(&egress.Options{Allow: []egress.Rule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}})
		require.NoError(t, err)
		f := New(policy, &Options{Resolver: &mapResolver{}, TLSConfig: tc})
		before := srv.accepts()
		for i := range 2 {
			tr, err := f.Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), nil)
			require.NoError(t, err)
			postOK(t, tr)
			tr.CloseIdleConnections()
			require.Equal(t, before+int64(i)+1, srv.accepts(), "each connect after a release dials")
		}
		mu.Lock()
		assert.Equal(t, []bool{false, true}, resumed, "own cache %v: the second connect resumed", own)
		mu.Unlock()
		if own {
			assert.Positive(t, cache.puts, "the caller's cache was used")
		}
	}
}

// countingCache counts the sessions put into a ClientSessionCache.
type countingCache struct {
	tls.ClientSessionCache
	mu   sync.Mutex
	puts int
}

func (c *countingCache) Put(key string, cs *tls.ClientSessionState) {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	c.ClientSessionCache.Put(key, cs)
}

// TestClientTransportsShared: the clients Factory.Client returns for one
// origin and server (one per OAuth request) share a transport, so
// consecutive requests reuse an admitted connection; another server name
// gets its own (its dialer names it); past maxClientTransports the kept
// transports are closed and forgotten.
func TestClientTransportsShared(t *testing.T) {
	srv := newTestServer(t, false, jsonOK)
	d := &countingDialer{}
	f := New(egress.Default(), &Options{Resolver: &mapResolver{}, Dialer: d})
	u, err := url.Parse(srv.URL + "/token")
	require.NoError(t, err)
	get := func(server string) {
		t.Helper()
		c, err := f.WithOnChallenge(func(Challenge) {}).Client(context.Background(), u, server)
		require.NoError(t, err)
		resp, err := c.Post(u.String(), "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	for range 5 {
		get("")
	}
	assert.Equal(t, int64(1), srv.accepts(), "five clients, one connection")
	assert.Equal(t, int64(1), d.n.Load())
	assert.Equal(t, 1, f.clients.size())
	get("s")
	assert.Equal(t, int64(2), srv.accepts(), "another server's client dials its own")
	assert.Equal(t, 2, f.clients.size())

	// A dial-time refusal names the server the client was made for, not
	// the one whose client made the shared transport.
	g := New(egress.Default(), &Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"intranet.example": {netip.MustParseAddr("10.0.0.1")}}}})
	private, _ := url.Parse("https://intranet.example/token")
	for _, server := range []string{"x", "y"} {
		c, err := g.Client(context.Background(), private, server)
		require.NoError(t, err, "the name is admitted; its address is not")
		_, err = c.Get(private.String())
		r := requireRefusal(t, err, refusal.Refused, egress.ReasonAddressRefused)
		assert.Equal(t, server, r.Server)
	}

	for i := range maxClientTransports {
		c, err := f.Client(context.Background(), u, "many"+strconv.Itoa(i))
		require.NoError(t, err)
		c.CloseIdleConnections()
	}
	assert.LessOrEqual(t, f.clients.size(), maxClientTransports)
	assert.Less(t, f.clients.size(), maxClientTransports, "the cap was reached and the kept transports forgotten")
	c, err := f.Client(context.Background(), u, "")
	require.NoError(t, err)
	c.CloseIdleConnections()
}
