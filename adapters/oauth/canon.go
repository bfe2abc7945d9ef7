package oauth

import (
	"net"
	"net/url"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// urlRule is which URLs this package sends a request to or accepts in
// metadata: absolute https URLs, and, only when loopbackHTTP is set (the
// tests' and the conformance client's Options.AllowLoopbackHTTP), http
// URLs whose host is exactly localhost, 127.0.0.1 or [::1]. The zero
// value is the product's rule: https only.
type urlRule struct {
	loopbackHTTP bool
}

// loopbackHosts are the only hosts urlRule.loopbackHTTP admits over http,
// compared after lower-casing (url.URL.Hostname strips an IPv6 literal's
// brackets).
var loopbackHosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}

// canonical returns the canonical form of an absolute URL r admits, as
// RFC 8707 resource indicators and RFC 9728 resource identifiers are
// compared: scheme and host lower case, the scheme's default port dropped,
// no fragment, no userinfo, no trailing slashes (so "/" is the empty path),
// the query kept, the scheme kept (so an http loopback URL and an https
// one are different resources and token keys). It also returns the origin
// ("scheme://host:port", port always written). A URL r does not admit
// (not https, or http on another host than a loopback one or without the
// option), or one that carries userinfo or a fragment, has no host or a
// path that is not validly escaped, is refused with Class Config, Reason
// ReasonURLInvalid; reason and class may be replaced by the caller.
func (r urlRule) canonical(raw, server string) (canon, origin string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" ||
		u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", "", refusal.New(refusal.Config, ReasonURLInvalid, server)
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	defaultPort := "443"
	switch {
	case scheme == "https":
	case scheme == "http" && r.loopbackHTTP && loopbackHosts[host]:
		defaultPort = "80"
	default:
		return "", "", refusal.New(refusal.Config, ReasonURLInvalid, server)
	}
	if host == "" || u.RawPath != "" && u.RawPath != u.EscapedPath() {
		// No host, or a path whose escaping is not valid (a raw space, a
		// stray "%"): its canonical form would not be well defined.
		return "", "", refusal.New(refusal.Config, ReasonURLInvalid, server)
	}
	port := u.Port()
	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	origin = scheme + "://" + net.JoinHostPort(host, defaultPort)
	if port != "" && port != defaultPort {
		hostport = net.JoinHostPort(host, port)
		origin = scheme + "://" + hostport
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	canon = scheme + "://" + hostport + path
	if u.RawQuery != "" {
		canon += "?" + u.RawQuery
	}
	return canon, origin, nil
}

// origin returns the origin of raw, a URL r admits, as canonical does, or
// "" when it is not one.
func (r urlRule) origin(raw string) string {
	_, origin, err := r.canonical(raw, "")
	if err != nil {
		return ""
	}
	return origin
}

// link parses raw, a link found in metadata, as a URL r admits (as
// canonical checks it), returning Class Refused, Reason
// ReasonInsecureEndpoint when it is not one.
func (r urlRule) link(raw, server string) (*url.URL, error) {
	if _, _, err := r.canonical(raw, server); err != nil {
		return nil, refusal.New(refusal.Refused, ReasonInsecureEndpoint, server)
	}
	return url.Parse(raw)
}

// canonicalURL is urlRule.canonical under the product's rule (https
// only).
func canonicalURL(raw, server string) (canon, origin string, err error) {
	return urlRule{}.canonical(raw, server)
}

// originOf is urlRule.origin under the product's rule (https only).
func originOf(raw string) string { return urlRule{}.origin(raw) }

// httpsURL is urlRule.link under the product's rule (https only).
func httpsURL(raw, server string) (*url.URL, error) { return urlRule{}.link(raw, server) }
