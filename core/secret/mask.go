package secret

import (
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Redacted is the display marker that replaces a secret whose source is
// not named: a literal MaskLiterals guessed to be a credential.
const Redacted = "<redacted>"

// RedactedVar returns the display marker "<redacted:NAME>" that replaces
// what the variable name expanded to. Every byte of name outside
// [A-Za-z0-9_.-] is replaced by "_", so the marker is always one
// well-formed token and never carries markup or control characters.
// Variable names from ${NAME} templates never need that replacement.
func RedactedVar(name string) string {
	var b strings.Builder
	b.Grow(len("<redacted:>") + len(name))
	b.WriteString("<redacted:")
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAlnum(c) || c == '_' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte('>')
	return b.String()
}

// IsMarker reports whether s is exactly a display marker produced by this
// package (Redacted or a RedactedVar result).
func IsMarker(s string) bool { return markerRE.MatchString(s) }

var markerRE = regexp.MustCompile(`^<redacted(?::[A-Za-z0-9_.-]*)?>$`)

// templateRefRE matches a value that is only a reference to a variable,
// ${NAME} or ${NAME:-<redacted>}, as a definition shown unexpanded holds.
var templateRefRE = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-<redacted>)?\}$`)

// maskRule masks capture group group (0 for the whole match) of every
// match of re, unless that group is empty or already a marker.
type maskRule struct {
	re *regexp.Regexp
	// need is a cheap test that every text re can match in passes: a
	// literal the pattern cannot match without. When it fails, re is not
	// run, which is where MaskLiterals' speed comes from (most displayed
	// values hold no credential shape). It must never reject a text re
	// matches; TestMaskPrefilters and FuzzMaskPrefilters check that.
	need  func(s string) bool
	group int
	// nameGroup, when non-zero, is a group holding a parameter or flag
	// name that must be credential-shaped for the match to be masked.
	nameGroup int
	// unescape makes nameGroup URL-query-unescaped before the name test.
	unescape bool
}

// maskRules all look at the same text (see maskPass); their order does not
// matter.
var maskRules = []maskRule{
	// PEM private key blocks: the body, up to the END line or, when the
	// block is cut short, to the end of the text.
	{re: regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`), group: 1,
		need: contains("-----BEGIN ")},
	// URL userinfo passwords: scheme://user:PASS@host.
	// A user part that is itself a marker is skipped as a whole.
	{re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://(?:<redacted(?::[A-Za-z0-9_.-]*)?>|[^\s/?#@:])*:([^\s/?#]*)@`), group: 1,
		need: func(s string) bool { return strings.Contains(s, "://") && strings.IndexByte(s, '@') >= 0 }},
	// Authorization credentials: "Bearer xyz", "Basic eHl6".
	// The whole run of non-space characters after the scheme is masked,
	// so a value that is not a clean token68 is not half shown.
	{re: regexp.MustCompile(`(?i)\b(?:bearer|basic)[ \t]+([^\s"',;]{8,})`), group: 1,
		need: needAuthScheme},
	// Query parameters whose names are credential-shaped: ?token=VALUE.
	{re: regexp.MustCompile(`[?&]([^=&#\s?]+)=([^&#\s]*)`), group: 2, nameGroup: 1, unescape: true,
		need: needCredentialParam},
	// --flag=VALUE and -flag=VALUE whose flag names are credential-shaped.
	{re: regexp.MustCompile(`(?:^|[\s"'=,])--?([A-Za-z][A-Za-z0-9_.-]*)=([^\s"']*)`), group: 2, nameGroup: 1,
		need: func(s string) bool { return strings.IndexByte(s, '-') >= 0 && strings.IndexByte(s, '=') >= 0 }},
	// GitHub tokens.
	{re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9_]{16,}`), need: contains("gh")},
	{re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{16,}`), need: contains("github_pat_")},
	// OpenAI / Anthropic style keys.
	{re: regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), need: contains("sk-")},
	// Slack tokens.
	{re: regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), need: contains("xox")},
	// AWS access key ids.
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
		need: func(s string) bool { return strings.Contains(s, "AKIA") || strings.Contains(s, "ASIA") }},
	// Google API keys.
	{re: regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{30,}`), need: contains("AIza")},
	// JWTs: three dot-separated base64url parts, the first a JSON object.
	{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`), need: contains("eyJ")},
}

// contains returns a need test for a literal substring.
func contains(lit string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, lit) }
}

// needCredentialParam is the need test of the query parameter rule: a "?"
// or "&" followed by a name and "=" where the name, query-unescaped when
// that succeeds, is credential-shaped. The rule's name group is the whole
// run after the "?" or "&" of bytes other than "=&#?" and \s (RE2's \s:
// tab, LF, FF, CR, space), since the class excludes "=", so every masked
// match starts at such a place; most URLs' parameters (?tenant=acme) fail
// here and the regexp is never run.
func needCredentialParam(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '?' && s[i] != '&' {
			continue
		}
		j := i + 1
		for j < len(s) && !isParamStop(s[j]) {
			j++
		}
		if j == i+1 || j == len(s) || s[j] != '=' {
			continue
		}
		name := s[i+1 : j]
		if u, err := url.QueryUnescape(name); err == nil {
			name = u
		}
		if IsCredentialName(name) {
			return true
		}
	}
	return false
}

// isParamStop reports whether c ends a query parameter name as the query
// rule's [^=&#\s?] class says.
func isParamStop(c byte) bool {
	switch c {
	case '=', '&', '#', '?', '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

// needAuthScheme is the need test of the Bearer/Basic rule: a space or tab,
// and a "b" or "B" followed by one of "aAeE". The rule is case-insensitive
// with Unicode folding, but b, a and e fold only to their ASCII cases, so
// the second byte of every match is one of those four.
func needAuthScheme(s string) bool {
	if !strings.ContainsAny(s, " \t") {
		return false
	}
	for i := 0; i+1 < len(s); i++ {
		if c := s[i]; c == 'b' || c == 'B' {
			switch s[i+1] {
			case 'a', 'A', 'e', 'E':
				return true
			}
		}
	}
	return false
}

// maxMaskPasses bounds the fixpoint loop of MaskLiterals. Every pass that
// changes the text turns a non-marker stretch into a marker, and markers
// are never masked again, so the loop settles within a few passes.
const maxMaskPasses = 8

// MaskLiterals returns s with every literal that has a credential's shape
// replaced by Redacted, for DISPLAY ONLY.
//
// The shapes are: GitHub tokens (gh[pousr]_…, github_pat_…), sk-… keys,
// Slack xox[abprs]-… tokens, AWS access key ids (AKIA…/ASIA…), Google API
// keys (AIza…), JWTs (eyJ….….…), the body of PEM private key blocks, the
// credential after "Bearer " or "Basic ", URL userinfo passwords
// (scheme://user:PASS@host), query parameter values whose names are
// credential-shaped (?token=VALUE&x=1 masks VALUE only) and --flag=VALUE /
// -flag=VALUE values whose flag names are credential-shaped
// (--api-key=VALUE). Everything else stays as it was, so a command line or
// URL stays readable. Markers already in s are left alone, and so is a
// value that is only a variable reference (--token=${GITHUB_TOKEN}, as a
// definition shown unexpanded holds): it names a variable, not a value.
// MaskLiterals(MaskLiterals(s)) == MaskLiterals(s).
//
// This is a guess from a literal's shape. It misses credentials of no
// recognisable shape and may mask harmless text, so it serves display
// only: it never decides what is secret for a fingerprint, where two
// different tokens masking alike would let an approval carry over to a
// changed token.
func MaskLiterals(s string) string {
	for range maxMaskPasses {
		next := maskPass(s)
		if next == s {
			return s
		}
		s = next
	}
	return s
}

// maskPass finds the spans every rule would mask in s, merges overlapping
// and adjacent spans and replaces each merged span with one Redacted. Every
// rule looks at the same text, so one rule's marker can never hide the
// rest of a credential from another rule.
func maskPass(s string) string { return maskPassWith(s, true) }

// maskPassWith is maskPass; prefilter false runs every rule's regexp
// whatever its need test says (the reference the tests compare with).
func maskPassWith(s string, prefilter bool) string {
	var spans [][2]int
	for _, r := range maskRules {
		if prefilter && !r.need(s) {
			continue
		}
		spans = r.spans(s, spans)
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(Redacted)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// spans appends to dst the [start, end) spans r masks in s.
func (r maskRule) spans(s string, dst [][2]int) [][2]int {
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[2*r.group], m[2*r.group+1]
		if start < 0 || start == end {
			continue
		}
		if r.nameGroup != 0 {
			name := s[m[2*r.nameGroup]:m[2*r.nameGroup+1]]
			if r.unescape {
				if u, err := url.QueryUnescape(name); err == nil {
					name = u
				}
			}
			if !IsCredentialName(name) {
				continue
			}
		}
		if v := s[start:end]; IsMarker(v) || templateRefRE.MatchString(v) {
			continue
		}
		dst = append(dst, [2]int{start, end})
	}
	return dst
}
