package oauth

import (
	"slices"
	"strings"
)

// authChallenge is one challenge of a WWW-Authenticate header value
// (RFC 9110 §11.6.1): its scheme, lower-cased, and either its token68 or
// its auth-params, their names lower-cased and their values unquoted.
type authChallenge struct {
	scheme  string
	token68 string
	params  map[string]string
}

// parseChallenge reads a WWW-Authenticate header value strictly by the
// grammar of RFC 9110 §11 (a list of challenges, each an auth-scheme
// optionally followed by one SP run and either a token68 or a list of
// name=token / name="quoted-string" auth-params, with BWS around "=" and
// empty list elements allowed) and returns the resource_metadata
// (RFC 9728 §5.1) and scope (RFC 6750 §3) auth-params of its first Bearer
// challenge, scheme and parameter names compared case-insensitively.
//
// ok is false when h is not well-formed (including a parameter named twice
// in one challenge) or carries no Bearer challenge; resourceMetadata and
// scope are then "". A Bearer challenge without those parameters, or with
// a token68, gives ok true and "" values. It never panics, whatever h is,
// and is safe for concurrent use.
func parseChallenge(h string) (resourceMetadata, scope string, ok bool) {
	chs, ok := parseChallenges(h)
	if !ok {
		return "", "", false
	}
	for _, ch := range chs {
		if ch.scheme == "bearer" {
			return ch.params["resource_metadata"], ch.params["scope"], true
		}
	}
	return "", "", false
}

// parseChallenges splits h into its challenges; ok is false when h is not
// a well-formed, non-empty WWW-Authenticate value (RFC 9110 §11.6.1).
func parseChallenges(h string) (chs []authChallenge, ok bool) {
	p := &challengeParser{s: h}
	var cur *authChallenge // the challenge auth-params now belong to, if any
	for {
		p.skipOWS()
		if p.eof() {
			break
		}
		if p.peek() == ',' { // an empty list element
			p.i++
			continue
		}
		start := p.i
		name := p.token()
		if name == "" {
			return nil, false
		}
		p.skipOWS()
		if !p.eof() && p.peek() == '=' {
			// An auth-param of the current challenge's list.
			p.i = start
			if cur == nil || !p.param(cur) {
				return nil, false
			}
		} else {
			// A new challenge: auth-scheme [ 1*SP ( token68 / #auth-param ) ].
			p.i = start + len(name)
			chs = append(chs, authChallenge{scheme: strings.ToLower(name)})
			cur = &chs[len(chs)-1]
			if !p.eof() && p.peek() == ' ' {
				for !p.eof() && p.peek() == ' ' {
					p.i++
				}
				switch {
				case p.eof() || p.peek() == ',':
					// An auth-param list starting with empty elements.
				case p.param(cur):
				default:
					t := p.token68()
					if t == "" {
						return nil, false
					}
					cur.token68 = t
					cur = nil // a token68 takes no auth-params
				}
			} else {
				cur = nil // no SP: neither token68 nor auth-params follow
			}
			// chs may be reallocated by a later append; cur points into it
			// only until then, which is while it is the last element.
		}
		p.skipOWS()
		if p.eof() {
			break
		}
		if p.peek() != ',' {
			return nil, false
		}
		p.i++
	}
	return chs, len(chs) > 0
}

// challengeParser is a cursor over one header value; it is used by one
// goroutine.
type challengeParser struct {
	s string
	i int
}

// eof reports whether the cursor is at the end of the value.
func (p *challengeParser) eof() bool { return p.i >= len(p.s) }

// peek returns the byte at the cursor; the caller checks eof first.
func (p *challengeParser) peek() byte { return p.s[p.i] }

// skipOWS skips optional whitespace (SP and HTAB, RFC 9110 §5.6.3).
func (p *challengeParser) skipOWS() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

// token consumes and returns a token (1*tchar), "" when none is there.
func (p *challengeParser) token() string {
	start := p.i
	for !p.eof() && isTchar(p.peek()) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 consumes and returns a token68 that ends the list element
// (1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="), or
// consumes nothing and returns "" when there is none.
func (p *challengeParser) token68() string {
	start := p.i
	for !p.eof() && isToken68Char(p.peek()) {
		p.i++
	}
	if p.i == start {
		return ""
	}
	for !p.eof() && p.peek() == '=' {
		p.i++
	}
	end := p.i
	p.skipOWS()
	if !p.eof() && p.peek() != ',' {
		p.i = start
		return ""
	}
	p.i = end
	return p.s[start:end]
}

// param consumes one auth-param (token BWS "=" BWS ( token /
// quoted-string )) into ch, reporting whether there was one; it consumes
// nothing and returns false when the input there is not one, or names a
// parameter ch already has.
func (p *challengeParser) param(ch *authChallenge) bool {
	start := p.i
	name := p.token()
	p.skipOWS()
	if name == "" || p.eof() || p.peek() != '=' {
		p.i = start
		return false
	}
	p.i++
	p.skipOWS()
	var val string
	var ok bool
	if !p.eof() && p.peek() == '"' {
		val, ok = p.quoted()
	} else {
		val = p.token()
		ok = val != ""
	}
	name = strings.ToLower(name)
	if _, dup := ch.params[name]; !ok || dup {
		p.i = start
		return false
	}
	if ch.params == nil {
		ch.params = map[string]string{}
	}
	ch.params[name] = val
	return true
}

// quoted consumes a quoted-string (RFC 9110 §5.6.4) at p and returns its
// value with quoted-pairs resolved; ok is false when it is unterminated or
// holds a byte neither qdtext nor a valid quoted-pair allows.
func (p *challengeParser) quoted() (val string, ok bool) {
	var b strings.Builder
	p.i++ // the opening DQUOTE
	for !p.eof() {
		c := p.peek()
		p.i++
		switch {
		case c == '"':
			return b.String(), true
		case c == '\\':
			if p.eof() {
				return "", false
			}
			q := p.peek()
			p.i++
			if q != '\t' && (q < 0x20 || q == 0x7f) {
				return "", false
			}
			b.WriteByte(q)
		case c == '\t' || (c >= 0x20 && c != 0x7f):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return "", false
}

// isTchar reports whether c is a tchar (RFC 9110 §5.6.2).
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isToken68Char reports whether c may appear in a token68 before its
// trailing "=" (RFC 9110 §11.2).
func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

// Challenge is what one Bearer challenge (RFC 6750 §3, RFC 9728 §5.1) of
// a server's 401 or 403 said: evidence discovery and step-up use after
// checking it like any other link. Its values come from the server: they
// are never put into an error.
type Challenge struct {
	// Status is the HTTP status the challenge came with (401 or 403; 0
	// when unknown).
	Status int
	// ResourceMetadata is the resource_metadata auth-param as sent
	// (unchecked: discovery follows it only when it is an absolute URL the
	// Client admits); "" when absent or longer than maxChallengeLink.
	ResourceMetadata string
	// Scope is the scope auth-param split on spaces, duplicates dropped;
	// nil when absent, or when it is not a list of at most maxScopes valid
	// scope tokens (RFC 6749 §3.3) of at most maxScopeLen bytes each.
	Scope []string
	// Error is the error auth-param (such as "invalid_token",
	// "insufficient_scope" or "use_dpop_nonce"); "" when absent or not a
	// short word of lower-case letters and "_".
	Error string
	// DPoP is true when this is a DPoP challenge (RFC 9449 §7.1) rather
	// than a Bearer one.
	DPoP bool
}

// Bounds of what a Challenge keeps.
const (
	maxChallengeLink = 2048
	maxScopes        = 64
	maxScopeLen      = 256
	maxErrorCode     = 64
)

// ParseChallenge reads the first Bearer challenge of the WWW-Authenticate
// value h of a response with status, else its first DPoP challenge (RFC
// 9449 §7.1: a server that takes DPoP-bound tokens only may challenge with
// that scheme alone); see parseChallenges for the grammar accepted. ok is
// false when h is malformed or has neither. It never panics and is safe
// for concurrent use.
func ParseChallenge(status int, h string) (ch Challenge, ok bool) {
	return parseChallengeFor(status, h, false)
}

// parseChallengeFor is ParseChallenge, preferring the first DPoP challenge
// to the first Bearer one when dpopFirst is set (a request that carried a
// DPoP-bound token is answered in the DPoP challenge).
func parseChallengeFor(status int, h string, dpopFirst bool) (ch Challenge, ok bool) {
	chs, ok := parseChallenges(h)
	if !ok {
		return Challenge{}, false
	}
	first, second := "bearer", "dpop"
	if dpopFirst {
		first, second = second, first
	}
	for _, scheme := range []string{first, second} {
		for _, c := range chs {
			if c.scheme != scheme {
				continue
			}
			ch = Challenge{Status: status, Scope: scopeList(c.params["scope"]), DPoP: scheme == "dpop"}
			if rm := c.params["resource_metadata"]; len(rm) <= maxChallengeLink {
				ch.ResourceMetadata = rm
			}
			if e := c.params["error"]; validErrorCode(e) {
				ch.Error = e
			}
			return ch, true
		}
	}
	return Challenge{}, false
}

// scopeList splits a scope value (RFC 6749 §3.3) into its scope tokens,
// duplicates dropped; nil when s holds none, or is not within the bounds
// Challenge.Scope names.
func scopeList(s string) []string {
	fields := strings.Split(s, " ")
	var out []string
	for _, f := range fields {
		if f == "" {
			continue
		}
		if len(f) > maxScopeLen || !validScopes([]string{f}) {
			return nil
		}
		out = appendNew(out, f)
		if len(out) > maxScopes {
			return nil
		}
	}
	return out
}

// validErrorCode reports whether e is a non-empty error code this package
// keeps: lower-case letters and "_", at most maxErrorCode bytes.
func validErrorCode(e string) bool {
	if e == "" || len(e) > maxErrorCode {
		return false
	}
	for i := 0; i < len(e); i++ {
		if c := e[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

// appendNew appends to list each of add it does not hold yet, in order.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}
