package httptransport

import (
	"net/http"
	"strings"
)

// reserved lists, in canonical form, the headers that the SDK, net/http or
// this transport own. Static, authenticator and helper headers may not set
// them; any header whose name starts with "Mcp-" is reserved as well.
var reserved = map[string]bool{
	"Accept":              true,
	"Accept-Encoding":     true,
	"Connection":          true,
	"Content-Encoding":    true,
	"Content-Length":      true,
	"Content-Type":        true,
	"Expect":              true,
	"Host":                true,
	"Keep-Alive":          true,
	"Last-Event-Id":       true,
	"Proxy-Authorization": true,
	"Proxy-Connection":    true,
	"Te":                  true,
	"Traceparent":         true,
	"Tracestate":          true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// Reserved reports whether name is a header static, authenticator or helper
// headers may not set: the SDK's (Mcp-*, Content-Type, Accept,
// Last-Event-ID), the transport's (traceparent, tracestate) and net/http's
// framing and hop-by-hop headers. The match is case-insensitive.
func Reserved(name string) bool {
	c := http.CanonicalHeaderKey(name)
	return reserved[c] || strings.HasPrefix(c, "Mcp-")
}

// validName reports whether name is a non-empty RFC 9110 token.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isTokenByte(name[i]) {
			return false
		}
	}
	return true
}

func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// validValue reports whether v may be sent as a header value: no CR, LF,
// NUL or other control byte except horizontal tab.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

// checkHeader returns the reason a header may not be set, or "".
func checkHeader(name string, values []string) string {
	if !validName(name) {
		return ReasonHeaderInvalid
	}
	if Reserved(name) {
		return ReasonReservedHeader
	}
	for _, v := range values {
		if !validValue(v) {
			return ReasonHeaderInvalid
		}
	}
	return ""
}
