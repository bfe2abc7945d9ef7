// Package httptransport builds the Streamable HTTP client transport of one
// admitted server (Transport, an mcp.Transport whose connection speaks the
// protocol's HTTP framing itself, in both protocol eras, as the go-sdk's
// StreamableClientTransport does), behind the egress policy and with
// per-server authentication.
//
// Admission comes first: Factory.Transport asks the policy about the URL and
// constructs nothing when it refuses. The transport's http.Client then
//
//   - never follows a redirect (ReasonRedirectRefused), same origin included;
//   - has no Timeout (it would end SSE streams) and no proxy;
//   - refuses a request for any origin but the admitted one
//     (ReasonOriginMismatch);
//   - resolves names itself and asks the policy about every address it dials,
//     at dial time, so a name that resolves or rebinds to a refused address
//     is caught;
//   - sets the definition's static headers, then the authenticator's, on a
//     clone of each request, never touching a header the SDK owns;
//   - retries a request refused with 401 or 403 at most once, when the
//     authenticator allows it, and never sends a request unauthenticated;
//   - adds a traceparent only to the one tools/call it belongs to (see
//     WithTraceparent);
//   - caps every non-SSE response body (ReasonReceiveCap) before it is
//     decoded, and every SSE event to the same cap;
//   - turns failures into *refusal.Error values that name at most the origin
//     (a network failure into a *NetError, which adds a fixed cause word).
//
// Errors surface through the SDK's session, which may wrap them in text of
// its own: use Classify to get the typed error back, and Cause for the
// kind of network failure ("refused", "dns", "timeout", "tls", ...).
package httptransport

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// DefaultReceiveCap is the receive cap used when Options.ReceiveCap is 0:
// the largest non-SSE response body, and the largest single SSE event, in
// bytes.
const DefaultReceiveCap = 8 << 20

// Resolver resolves a host name to addresses. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer dials one already-resolved address ("ip:port"). *net.Dialer
// implements it. The transport installs its own Control hook, so a Dialer
// given in Options is used only through DialContext on an address the
// policy admitted; a test may use it to observe dials.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Options adjusts a Factory. A nil *Options (and every zero field) is the
// strict default documented on each field.
type Options struct {
	// TLSConfig is cloned as the base TLS configuration (for example to set
	// RootCAs). nil means the system roots and TLS 1.2 at least. Its
	// InsecureSkipVerify is refused.
	TLSConfig *tls.Config
	// Resolver resolves host names; nil means net.DefaultResolver. Every
	// address it returns is put to the policy before it is dialled.
	Resolver Resolver
	// Dialer dials admitted addresses; nil means a net.Dialer with a 30 s
	// connect timeout. Whatever Dialer is used, the address it is given has
	// been admitted by the policy just before. A *net.Dialer is copied and
	// gets the policy as its ControlContext too, so the address actually
	// connected to is checked once more.
	Dialer Dialer
	// ReceiveCap bounds each non-SSE response body and each SSE event, in
	// bytes; 0 means DefaultReceiveCap.
	ReceiveCap int64
	// TraceOrigins lists the exact origins ("scheme://host:port", port
	// always written) that may receive a traceparent. nil means none.
	TraceOrigins []string
	// MaxRetries bounds the reconnects of one SSE stream without progress
	// (Transport.MaxRetries), as the SDK's StreamableClientTransport's
	// field does; 0 means the SDK's default (5), negative disables them.
	MaxRetries int
	// OnChallenge, when non-nil, is told of every 401 or 403 answer that
	// carries a WWW-Authenticate header, on any connection, before the
	// transport acts on it (see Challenge). It is called synchronously
	// and possibly concurrently, must not block, and must keep nothing of
	// the header but what it parses. nil means nothing is told.
	OnChallenge func(Challenge)
}

// Factory builds admitted transports. It is immutable and safe for
// concurrent use.
type Factory struct {
	policy       ports.EgressPolicy
	tlsConfig    *tls.Config
	resolver     Resolver
	dialer       Dialer
	cap          int64
	traceOrigins map[string]bool
	maxRetries   int
	onChallenge  func(Challenge)
	// shared holds the http.Transports shared per origin (pool.go); the
	// copies of a Factory share it.
	shared *pool
	// clients holds the transports of Client (client.go); shared by the
	// copies of a Factory.
	clients *clientTransports
	// sessions is the TLS session cache of every transport of this
	// Factory (and its copies) when Options.TLSConfig sets none.
	sessions tls.ClientSessionCache
}

// New returns a Factory that admits with policy. It panics when policy is
// nil, since a transport without admission must not exist. opts is copied;
// nil means the strict defaults documented on Options.
func New(policy ports.EgressPolicy, opts *Options) *Factory {
	if policy == nil {
		panic("httptransport: nil EgressPolicy")
	}
	f := &Factory{policy: policy, cap: DefaultReceiveCap, traceOrigins: map[string]bool{}, shared: &pool{}, clients: &clientTransports{}, sessions: newSessionCache()}
	if opts == nil {
		opts = &Options{}
	}
	if opts.TLSConfig != nil {
		f.tlsConfig = opts.TLSConfig.Clone()
	}
	f.resolver = opts.Resolver
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	f.dialer = opts.Dialer
	if opts.ReceiveCap > 0 {
		f.cap = opts.ReceiveCap
	}
	for _, o := range opts.TraceOrigins {
		f.traceOrigins[o] = true
	}
	f.maxRetries = opts.MaxRetries
	f.onChallenge = opts.OnChallenge
	return f
}

// Transport admits t and returns the Streamable HTTP transport for it
// (*Transport; see its Connect) whose every request goes through the
// admitted client described in the package comment. auth, when non-nil, is the authenticator registered for
// t.ServerID: every request then carries its headers, or is not sent.
//
// Admission runs first; on refusal nothing is constructed. Errors are
// *refusal.Error values carrying t.ServerID: Class Config for a Target that
// is not of Kind http (ReasonKindMismatch), a URL that does not parse
// (ReasonURLInvalid) or a static header that is malformed
// (ReasonHeaderInvalid) or reserved (ReasonReservedHeader); Class Refused
// for the policy's refusal (its own Reason) and URL userinfo.
//
// Request failures, as the session's errors carry them (see Classify): a 401 or
// 403 with no authenticator is Class AuthRequired (ReasonAuthRequired); with
// one, Refused is called once per request and the request resent once with
// fresh headers when it allows, else (or on a second 401/403) Class
// AuthRefused (ReasonAuthRefused). A Headers failure sends nothing and keeps
// the refusal's Class (AuthRequired, AuthRefused or Transient). Any 3xx is
// ReasonRedirectRefused; other statuses the SDK would report only as text
// are a *StatusError. A Mcp-Session-Id other than the session's is Class
// Protocol ReasonSessionMismatch; a body or event that is not one
// JSON-RPC message, ReasonMalformedMessage; another Content-Type,
// ReasonContentType; a stream not resumed within MaxRetries,
// ReasonStreamRetries.
//
// The returned transport is for one connection. Its connections come from
// the http.Transport this Factory shares among all transports of t's
// origin (pool.go): a connection pooled there was dialled for that origin
// and admitted at dial time as described above, so a connect to a server
// whose origin another live transport uses does not dial (nor handshake
// TLS) again; TLS sessions are resumed from a cache of the Factory's
// (Options.TLSConfig's ClientSessionCache when it sets one). Idle
// connections are bounded (4 per origin, closed after 90 s idle). When its
// session has ended, call Transport.CloseIdleConnections once: the
// transport lets go of the shared one, and the last to let go of an origin
// closes its idle connections, so nothing of a closed session outlives it
// for long. A call after the first closes the idle connections of the
// transport only when no other transport holds it. A policy whose
// decisions change over time is asked again at every new dial; a pooled
// connection keeps the decision its dial got for as long as some transport
// of its origin holds it (as a session's own connections always did for
// the session's life), while the URL is admitted afresh by every call of
// Transport.
func (f *Factory) Transport(ctx context.Context, t ports.Target, auth ports.Authenticator) (*Transport, error) {
	server := t.ServerID
	if t.Kind != ports.TransportHTTP {
		return nil, refusal.New(refusal.Config, ReasonKindMismatch, server)
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, refusal.New(refusal.Config, ReasonURLInvalid, server)
	}
	scheme, origin, err := f.admit(ctx, u, server)
	if err != nil {
		return nil, err
	}
	static := make(http.Header, len(t.Headers))
	for k, v := range t.Headers {
		if r := checkHeader(k, []string{v}); r != "" {
			return nil, refusal.New(refusal.Config, r, server).WithOrigin(origin)
		}
		static.Set(k, v)
	}

	rt := &roundTripper{
		server:    server,
		origin:    origin,
		urlScheme: u.Scheme,
		urlHost:   u.Host,
		static:    static,
		auth:      auth,
		cap:       f.cap,
		trace:     f.traceOrigins[origin],
		pool:      f.shared,
		scheme:    scheme,
		authReq:   ports.AuthRequest{ServerID: server, Origin: origin},
		htuPath:   u.EscapedPath(),
		htu:       scheme + "://" + strings.ToLower(u.Host) + u.EscapedPath(),
	}
	rt.base = f.shared.acquire(origin, func() *http.Transport {
		return f.baseTransport(scheme, u.Hostname(), server, origin)
	})
	if f.onChallenge != nil {
		rt.onChallenge = f.onChallenge
		rt.endpoint = t.URL
	}
	client := &http.Client{Transport: rt, CheckRedirect: refuseRedirects(server, origin)}
	return &Transport{Endpoint: u.String(), HTTPClient: client, MaxRetries: f.maxRetries, rt: rt}, nil
}

// TracesTo reports whether origin ("scheme://host:port", port always
// written) is listed in Options.TraceOrigins: the transports of this
// Factory send a call's traceparent (WithTraceparent) there and nowhere
// else. Safe for concurrent use.
func (f *Factory) TracesTo(origin string) bool { return f.traceOrigins[origin] }

// Admit runs the URL admission Transport runs, and nothing more: t's URL
// must parse as an absolute http or https URL without userinfo
// (ReasonURLInvalid, "scheme_refused", ReasonUserinfoRefused) and pass the
// egress policy's AdmitURL (its own refusal, Class Refused). It is pure:
// no resolver, no connection (the dial-time address check still runs at
// connect). Safe for concurrent use.
func (f *Factory) Admit(ctx context.Context, t ports.Target) error {
	if t.Kind != ports.TransportHTTP {
		return refusal.New(refusal.Config, ReasonKindMismatch, t.ServerID)
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return refusal.New(refusal.Config, ReasonURLInvalid, t.ServerID)
	}
	_, _, err = f.admit(ctx, u, t.ServerID)
	return err
}

// admit puts u to the policy, then refuses, whatever the policy says, a
// URL that is not absolute http or https or carries userinfo. It returns
// u's lower-case scheme and origin. Errors: Class Config ReasonURLInvalid;
// the policy's refusal (ReasonEgressRefused when it is not a refusal);
// Class Refused "scheme_refused" or ReasonUserinfoRefused.
func (f *Factory) admit(ctx context.Context, u *url.URL, server string) (scheme, origin string, err error) {
	if u == nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return "", "", refusal.New(refusal.Config, ReasonURLInvalid, server)
	}
	if err := f.policy.AdmitURL(ctx, u); err != nil {
		return "", "", stamp(err, refusal.Refused, ReasonEgressRefused, server)
	}
	// Defence in depth: whatever the policy says, these never pass.
	scheme = strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", "", refusal.New(refusal.Refused, "scheme_refused", server)
	}
	origin = originOf(u)
	if u.User != nil {
		return "", "", refusal.New(refusal.Refused, ReasonUserinfoRefused, server).WithOrigin(origin)
	}
	return scheme, origin, nil
}

// refuseRedirects is the CheckRedirect of every client of this package:
// a redirect is refused (ReasonRedirectRefused), same origin included.
func refuseRedirects(server, origin string) func(*http.Request, []*http.Request) error {
	return func(*http.Request, []*http.Request) error {
		return refusal.New(refusal.Refused, ReasonRedirectRefused, server).WithOrigin(origin)
	}
}

// maxIdlePerOrigin bounds the idle connections kept per origin (and per
// http.Transport, which serves one origin).
const maxIdlePerOrigin = 4

// baseTransport returns the http.Transport for one admitted origin: no
// proxy, names resolved here, every dialled address admitted first. server
// stamps the dialer's own refusals (a roundTripper restamps them with its
// own server).
func (f *Factory) baseTransport(scheme, host, server, origin string) *http.Transport {
	var tc *tls.Config
	if f.tlsConfig != nil {
		tc = f.tlsConfig.Clone()
	} else {
		tc = &tls.Config{}
	}
	tc.InsecureSkipVerify = false
	if tc.ClientSessionCache == nil {
		tc.ClientSessionCache = f.sessions
	}
	if tc.MinVersion < tls.VersionTLS12 {
		tc.MinVersion = tls.VersionTLS12
	}
	d := &admittedDialer{
		policy:   f.policy,
		resolver: f.resolver,
		scheme:   scheme,
		host:     strings.ToLower(host),
		server:   server,
		origin:   origin,
	}
	switch nd := f.dialer.(type) {
	case nil:
		d.dialer = &net.Dialer{Timeout: 30 * time.Second, ControlContext: d.control}
	case *net.Dialer:
		c := *nd
		c.ControlContext = d.control
		c.Control = nil
		d.dialer = &c
	default:
		d.dialer = nd
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSClientConfig:       tc,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   15 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          maxIdlePerOrigin,
		MaxIdleConnsPerHost:   maxIdlePerOrigin,
		ExpectContinueTimeout: time.Second,
	}
}

// admittedDialer resolves and dials for one admitted server, asking the
// policy about every address before connecting to it (and once more in the
// dialer's Control hook): AdmitDial, knowing the URL's host, when the
// policy implements ports.EgressDialPolicy; AdmitAddr otherwise.
type admittedDialer struct {
	policy   ports.EgressPolicy
	resolver Resolver
	dialer   Dialer
	scheme   string
	host     string // the admitted host name or literal, lower case, unbracketed
	server   string
	origin   string
}

// DialContext dials addr, which must name the admitted host.
func (d *admittedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !strings.EqualFold(host, d.host) {
		return nil, refusal.New(refusal.Refused, ReasonOriginMismatch, d.server).WithOrigin(d.origin)
	}
	pn, err := netip.ParseAddrPort("0.0.0.0:" + port)
	if err != nil {
		return nil, refusal.New(refusal.Refused, "port_refused", d.server).WithOrigin(d.origin)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		addrs, err = d.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &NetError{Cause: CauseDNS, Refusal: refusal.New(refusal.Transient, ReasonNetwork, d.server).WithOrigin(d.origin)}
		}
	}
	var first error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, pn.Port())
		if err := d.admitAddr(ctx, ap); err != nil {
			if first == nil {
				first = stamp(err, refusal.Refused, ReasonEgressRefused, d.server)
			}
			continue
		}
		c, err := d.dialer.DialContext(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if first == nil {
			first = err
		}
	}
	if first == nil { // the name resolved to no address
		first = &NetError{Cause: CauseDNS, Refusal: refusal.New(refusal.Transient, ReasonNetwork, d.server).WithOrigin(d.origin)}
	}
	return nil, first
}

// control is the net.Dialer hook: it admits the address about to be
// connected to, as the kernel will see it.
func (d *admittedDialer) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refusal.New(refusal.Refused, "address_invalid", d.server).WithOrigin(d.origin)
	}
	if err := d.admitAddr(ctx, ap); err != nil {
		return stamp(err, refusal.Refused, ReasonEgressRefused, d.server)
	}
	return nil
}

// admitAddr puts one address to the policy: AdmitDial with the admitted
// host when the policy is a ports.EgressDialPolicy (so a rule allowing
// that name applies), else AdmitAddr.
func (d *admittedDialer) admitAddr(ctx context.Context, ap netip.AddrPort) error {
	if dp, ok := d.policy.(ports.EgressDialPolicy); ok {
		return dp.AdmitDial(ctx, d.scheme, d.host, ap)
	}
	return d.policy.AdmitAddr(ctx, d.scheme, ap)
}

// stamp returns err as a *refusal.Error carrying server: a refusal keeps
// its Class, Reason, Origin and Detail; anything else becomes a fixed-text
// refusal of class and reason, its text dropped.
func stamp(err error, class refusal.Class, reason, server string) *refusal.Error {
	if r, ok := err.(*refusal.Error); ok {
		c := *r
		c.Server = server
		return &c
	}
	return refusal.New(class, reason, server)
}

// originOf returns "scheme://host:port" of u, lower case, the port always
// written.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
