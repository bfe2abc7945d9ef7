package oauth

import (
	"net"
	"net/url"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// canonicalURL returns the canonical form of an absolute https URL, as
// RFC 8707 resource indicators and RFC 9728 resource identifiers are
// compared: scheme and host lower case, the default port 443 dropped, no
// fragment, no userinfo, no trailing slashes (so "/" is the empty path),
// the query kept. It also returns the origin ("https://host:port", port always
// written). A URL that is not absolute https, carries userinfo or a
// fragment, has no host or a path that is not validly escaped, is refused with Class Config, Reason
// ReasonURLInvalid; reason and class may be replaced by the caller.
func canonicalURL(raw, server string) (canon, origin string, err error) {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Opaque != "" || u.Host == "" ||
		u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", "", refusal.New(refusal.Config, ReasonURLInvalid, server)
	}
	host := strings.ToLower(u.Hostname())
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
	origin = "https://" + net.JoinHostPort(host, "443")
	if port != "" && port != "443" {
		hostport = net.JoinHostPort(host, port)
		origin = "https://" + hostport
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	canon = "https://" + hostport + path
	if u.RawQuery != "" {
		canon += "?" + u.RawQuery
	}
	return canon, origin, nil
}

// originOf returns the origin of raw, an https URL, as canonicalURL does,
// or "" when it is not one.
func originOf(raw string) string {
	_, origin, err := canonicalURL(raw, "")
	if err != nil {
		return ""
	}
	return origin
}

// httpsURL parses raw as an absolute https URL (as canonicalURL checks it)
// for a link found in metadata, returning Class Refused, Reason
// ReasonInsecureEndpoint when it is not one.
func httpsURL(raw, server string) (*url.URL, error) {
	if _, _, err := canonicalURL(raw, server); err != nil {
		return nil, refusal.New(refusal.Refused, ReasonInsecureEndpoint, server)
	}
	return url.Parse(raw)
}
