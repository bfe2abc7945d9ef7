package httptransport

import (
	"crypto/tls"
	"net/http"
	"sync"
)

// tlsSessionCacheSize bounds the TLS session tickets a Factory keeps (one
// per server name and configuration, least recently used first out).
const tlsSessionCacheSize = 64

// pool holds the http.Transports a Factory's transports share: one per
// origin, for as long as at least one transport of that origin holds it.
// Sharing is sound under the admission rule because everything a pooled
// connection was admitted for is the origin: the dial-time check asks the
// policy about (scheme, host, address), never about the server, and
// nothing per server (static headers, authentication, traceparent) lives
// on a connection — it is set on each request. A connection dialled for
// one server of an origin is therefore one the policy admitted for every
// server of that origin. The copies of a Factory (WithOnChallenge) share
// its pool.
type pool struct {
	mu sync.Mutex
	m  map[string]*pooled
}

// pooled is one origin's shared transport and the number of transports
// holding it.
type pooled struct {
	tr   *http.Transport
	refs int
}

// acquire returns origin's shared transport, made with mk when there is
// none, and counts one more holder.
func (p *pool) acquire(origin string, mk func() *http.Transport) *http.Transport {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*pooled{}
	}
	e := p.m[origin]
	if e == nil {
		e = &pooled{tr: mk()}
		p.m[origin] = e
	}
	e.refs++
	return e.tr
}

// release counts one holder of tr (origin's shared transport) less. When
// it was the last, tr leaves the pool and its idle connections are closed
// (a request still in flight keeps its connection until it ends; see
// roundTripper.CloseIdleConnections for what comes after).
func (p *pool) release(origin string, tr *http.Transport) {
	p.mu.Lock()
	e := p.m[origin]
	last := false
	if e != nil && e.tr == tr {
		e.refs--
		if e.refs <= 0 {
			delete(p.m, origin)
			last = true
		}
	}
	p.mu.Unlock()
	if last {
		tr.CloseIdleConnections()
	}
}

// held reports whether tr is origin's shared transport still held by
// some transport.
func (p *pool) held(origin string, tr *http.Transport) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.m[origin]
	return e != nil && e.tr == tr
}

// origins returns the number of origins with a shared transport (tests).
func (p *pool) origins() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// newSessionCache returns the TLS session cache of a Factory.
func newSessionCache() tls.ClientSessionCache {
	return tls.NewLRUClientSessionCache(tlsSessionCacheSize)
}
