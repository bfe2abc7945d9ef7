package definition

import "strings"

// The reason words Resolve gives a name the managed policy refuses (State
// StateRefused). The fix is the administrator's, not the user's.
const (
	// ReasonPolicyDenied: an entry of a managed deniedMcpServers list
	// matches the server.
	ReasonPolicyDenied = "policy_denied"
	// ReasonPolicyNotAllowed: a managed allowedMcpServers list is present
	// and no entry of it matches the server.
	ReasonPolicyNotAllowed = "policy_not_allowed"
)

// Matches reports whether m matches d: by name (d.Name), by command (a
// stdio definition whose Command followed by Args, as written, equals
// m.Command), or by URL (an http, sse or ws definition whose URL, as
// written, matches the pattern m.URL; see ServerMatcher.URL). A nil d or
// a ServerMatcher with no field set matches nothing.
func (m ServerMatcher) Matches(d *Definition) bool {
	if d == nil {
		return false
	}
	switch {
	case m.Name != "":
		return d.Name == m.Name
	case m.Command != nil:
		if d.Kind != KindStdio || len(m.Command) != 1+len(d.Args) || m.Command[0] != d.Command {
			return false
		}
		for i, a := range d.Args {
			if m.Command[i+1] != a {
				return false
			}
		}
		return true
	case m.URL != "":
		return d.Kind != KindStdio && URLPatternMatch(m.URL, d.URL)
	}
	return false
}

// URLPatternMatch reports whether url matches pattern, where "*" is a
// wildcard. The pattern and the URL are each cut after their authority
// (the first "/" after "://", or the whole string): in the scheme and
// authority "*" matches any run of bytes other than "/", "?", "#" and
// "@", so a wildcard host cannot be stretched over another host, a path
// or a userinfo; in the rest it matches any run of bytes. Schemes and
// hosts are compared as written (exactly, case included).
func URLPatternMatch(pattern, url string) bool {
	pa, pr := urlSplitAuthority(pattern)
	ua, ur := urlSplitAuthority(url)
	if !wildcardMatch(pa, ua, "/?#@") {
		return false
	}
	if pr == "" {
		return ur == "" || ur == "/"
	}
	return wildcardMatch(pr, ur, "")
}

// urlSplitAuthority cuts s before the first "/", "?" or "#" after "://"
// (or after the start when there is no "://").
func urlSplitAuthority(s string) (string, string) {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
		return s[:start+j], s[start+j:]
	}
	return s, ""
}

// wildcardMatch reports whether s matches pattern, "*" matching any run
// of bytes none of which is in stop. It backtracks only to the last "*",
// so it takes at most len(pattern)*len(s) steps.
func wildcardMatch(pattern, s, stop string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0 && strings.IndexByte(stop, s[mark]) < 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// policyVerdict returns the refusal reason the managed policies give d,
// "" when they let it run. Every policy's deny list is checked first;
// then every policy with an allow list must have an entry matching d (so
// two managed sources each narrow, never widen, what runs).
func policyVerdict(pols []*Policy, d *Definition) string {
	for _, p := range pols {
		for _, m := range p.Denied {
			if m.Matches(d) {
				return ReasonPolicyDenied
			}
		}
	}
	for _, p := range pols {
		if p.Allowed == nil {
			continue
		}
		ok := false
		for _, m := range p.Allowed {
			if m.Matches(d) {
				ok = true
				break
			}
		}
		if !ok {
			return ReasonPolicyNotAllowed
		}
	}
	return ""
}
