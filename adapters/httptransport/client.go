package httptransport

import (
	"context"
	"net/http"
	"net/url"
	"sync"

	"github.com/mcpward/mcpward/core/refusal"
)

// Client returns a plain http.Client for requests to u's origin only,
// admitted as a transport is: the policy admits u first (nothing is
// constructed when it refuses: Class Refused, ReasonEgressRefused or the
// policy's reason), every dialled address is admitted at dial time, there
// is no proxy, a redirect is refused (ReasonRedirectRefused) and a request
// for another origin is refused before it leaves (ReasonOriginMismatch).
// It adds no header and no authentication; response bodies are not capped
// (the caller bounds its reads). Errors name server and the origin.
//
// It is the client a deployment's OAuth flow uses for metadata, token,
// registration and revocation requests (adapters/oauth's ClientFunc),
// which asks for one per request: the clients of one origin and server
// therefore share one http.Transport of the Factory (and its copies), so
// consecutive requests reuse an admitted connection (each dial is admitted
// as above) and idle connections stay bounded (4 per origin, closed after
// 90 s idle; at most maxClientTransports origins, past which every kept
// transport's idle connections are closed and the Factory starts afresh).
// CloseIdleConnections on a returned client closes the idle connections of
// that shared transport.
func (f *Factory) Client(ctx context.Context, u *url.URL, server string) (*http.Client, error) {
	scheme, origin, err := f.admit(ctx, u, server)
	if err != nil {
		return nil, err
	}
	mk := func() *http.Transport { return f.baseTransport(scheme, u.Hostname(), server, origin) }
	var base *http.Transport
	if f.clients != nil {
		base = f.clients.get(origin, server, mk)
	} else {
		base = mk()
	}
	return &http.Client{
		Transport:     &originOnly{origin: origin, server: server, base: base},
		CheckRedirect: refuseRedirects(server, origin),
	}, nil
}

// maxClientTransports bounds the transports a Factory keeps for Client.
const maxClientTransports = 64

// clientTransports are the http.Transports of Factory.Client, one per
// origin and server (the server stamps the dialer's refusals, which a
// client passes on as they are), kept for the Factory's life.
type clientTransports struct {
	mu sync.Mutex
	m  map[clientKey]*http.Transport
}

type clientKey struct{ origin, server string }

// get returns the transport of origin and server, made with mk when there
// is none. Past maxClientTransports it closes the idle connections of
// every kept transport and forgets them first.
func (c *clientTransports) get(origin, server string, mk func() *http.Transport) *http.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := clientKey{origin, server}
	if tr := c.m[k]; tr != nil {
		return tr
	}
	if len(c.m) >= maxClientTransports {
		for _, tr := range c.m {
			tr.CloseIdleConnections()
		}
		c.m = nil
	}
	if c.m == nil {
		c.m = map[clientKey]*http.Transport{}
	}
	tr := mk()
	c.m[k] = tr
	return tr
}

// size returns the number of transports kept (tests).
func (c *clientTransports) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// originOnly sends requests for one origin and refuses every other.
type originOnly struct {
	origin string
	server string
	base   *http.Transport
}

// CloseIdleConnections closes the idle connections of the shared
// transport under o.
func (o *originOnly) CloseIdleConnections() { o.base.CloseIdleConnections() }

// RoundTrip sends req when its URL is of the admitted origin, without
// userinfo; otherwise it closes the body and refuses (ReasonOriginMismatch).
func (o *originOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.User != nil || originOf(req.URL) != o.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, refusal.New(refusal.Refused, ReasonOriginMismatch, o.server).WithOrigin(o.origin)
	}
	return o.base.RoundTrip(req)
}
