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
// package (Redacted, or a RedactedVar, RedactedDigest or RedactedDefault
// result).
func IsMarker(s string) bool { return markerRE.MatchString(s) || digestMarkerRE.MatchString(s) }

var markerRE = regexp.MustCompile(`^<redacted(?::[A-Za-z0-9_.-]*)?>$`)

// templateRefRE matches a value that is only a reference to a variable,
// ${NAME} or ${NAME:-<redacted>}, as a definition shown unexpanded holds.
var templateRefRE = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-<redacted>)?\}$`)

// maskRule masks capture group group (0 for the whole match) of every
// match of re, unless that group is empty or already a marker.
type maskRule struct {
	re *regexp.Regexp
	// find, when set, replaces re: it appends the spans the rule masks.
	find func(s string, dst [][2]int) [][2]int
	// lits are literals one of which occurs in every text re can match in.
	// A rule with lits runs only when one of them does: maskPass finds
	// which in one scan of the text (litScan) rather than one search per
	// rule, which is where MaskLiterals' speed comes from (most displayed
	// values hold no credential shape). Rules without lits have need
	// instead; init gives every rule with lits the equivalent need. Neither
	// may ever reject a text re masks something in; TestFastMask and
	// FuzzFastMask check that.
	lits []string
	need func(s string) bool
	// context marks a rule that masks a value because of WHERE it stands
	// (after a credential-shaped flag or parameter name, as a userinfo
	// password, after an authorization scheme or an npm auth key) rather
	// than what it looks like. PositionSpans runs only these.
	context bool
	group   int
	// nameGroup, when non-zero, is a group holding a parameter or flag
	// name that must be credential-shaped for the match to be masked.
	nameGroup int
	// unescape makes nameGroup URL-query-unescaped before the name test.
	unescape bool
}

// tokenChar is the character class of a credential that stands in a
// position (after --token=, ?token=, API_KEY=, _authToken=, "Bearer "):
// anything but white space, quotes and the characters that make text code
// rather than a token (a shell's $ ( ) ; & | < > ` { } [ ] \ and ","). So
// the masked extent is exactly the token: in AUTH=$(curl …) nothing is
// masked, and in --token=abc;rm -rf x only "abc" is.
const tokenChar = `[^\s"'` + "`" + `;&|<>(){}\[\]$\\,]`

// userinfoTokenChar is tokenChar without "/", "?" and "#", which end a
// URL's userinfo ("@" may stand in a password written raw: the last "@"
// ends it).
const userinfoTokenChar = `[^\s"'` + "`" + `;&|<>(){}\[\]$\\,/?#]`

// queryTokenChar is tokenChar without "#", which ends a URL's query.
const queryTokenChar = `[^\s"'` + "`" + `;&|<>(){}\[\]$\\,#]`

// maskRules all look at the same text (see maskPass); their order does not
// matter. Each shape rule anchors on a prefix its issuer documents, so that
// ordinary words, paths and identifiers are not mistaken for one.
var maskRules = []maskRule{
	// PEM private key blocks (PKCS#1/#8, EC, OpenSSH, encrypted, PGP
	// "PRIVATE KEY BLOCK"): the body, that is the whole lines after the
	// BEGIN line that are base64 text or "Name: value" headers (see
	// pemSpans). Text after the body that is not key material (code, a
	// command) stays visible.
	{find: pemSpans, lits: []string{"-----BEGIN "}},
	// URL userinfo passwords: scheme://user:PASS@host.
	// A user part that is itself a marker is skipped as a whole. The
	// password's extent is its run of credential characters (tokenChar):
	// a URL allows $ ( ) ' ; … there, code uses them, and whatever follows
	// the run up to "@" stays visible.
	{re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://(?:<redacted(?::[A-Za-z0-9_.-]*)?>|[^\s/?#@:])*:(` + userinfoTokenChar + `*)[^\s/?#]*@`), group: 1, context: true,
		need: func(s string) bool { return strings.Contains(s, "://") && strings.IndexByte(s, '@') >= 0 }},
	// Authorization credentials: "Bearer xyz", "Basic eHl6".
	// The whole run of non-space characters after the scheme is masked,
	// so a value that is not a clean token68 is not half shown.
	{re: regexp.MustCompile(`(?i)\b(?:bearer|basic)[ \t]+(` + tokenChar + `{8,})`), group: 1, context: true,
		need: needAuthScheme},
	// Query parameters whose names are credential-shaped: ?token=VALUE.
	{re: regexp.MustCompile(`[?&]([^=&#\s?]+)=(` + queryTokenChar + `*)`), group: 2, nameGroup: 1, unescape: true, context: true,
		need: needCredentialParam},
	// --flag=VALUE and -flag=VALUE whose flag names are credential-shaped.
	{re: regexp.MustCompile(`(?:^|[\s"'=,])--?([A-Za-z][A-Za-z0-9_.-]*)=(` + tokenChar + `*)`), group: 2, nameGroup: 1, context: true,
		need: needCredentialFlag},
	// NAME=VALUE whose NAME (an environment-variable style name) is
	// credential-shaped, at the start of the text or after a space, quote,
	// "," or ";": docker's -e API_KEY=VALUE, connection strings'
	// ;Password=VALUE;. (A query's &token=VALUE is the query rule's.)
	{re: regexp.MustCompile(`(?:^|[\s"',;])([A-Za-z_][A-Za-z0-9_]*)=(` + tokenChar + `*)`), group: 2, nameGroup: 1, context: true,
		need: needCredentialAssignment},
	// npm auth settings, as .npmrc lines and npm's --KEY=VALUE config
	// flags write them: //registry.example/:_authToken=VALUE, _auth=…,
	// _password=….
	{re: regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:_authToken|_auth|_password)=(` + tokenChar + `*)`), group: 1, context: true,
		lits: []string{"_auth", "_password"}},
	// GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and
	// fine-grained (github_pat_).
	{re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9_]{16,}`), lits: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}},
	{re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{16,}`), lits: []string{"github_pat_"}},
	// GitLab tokens: personal, deploy, runner, trigger, CI job, OAuth app,
	// SCIM, feed, incoming mail, agent and feature flag tokens.
	{re: regexp.MustCompile(`\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_.-]{20,}`),
		lits: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-", "glagent-", "glffct-"}},
	// OpenAI and Anthropic style keys (sk-…, sk-proj-…, sk-ant-…).
	{re: regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), lits: []string{"sk-"}},
	// Stripe secret and restricted keys (sk_live_…, rk_test_…) and
	// webhook signing secrets (whsec_…). Publishable keys (pk_…) are
	// public by design and stay shown.
	{re: regexp.MustCompile(`\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}`), lits: []string{"k_live_", "k_test_", "k_prod_"}},
	{re: regexp.MustCompile(`\bwhsec_[A-Za-z0-9+/=]{24,}`), lits: []string{"whsec_"}},
	// Slack tokens (xoxb-, xoxp-, xoxa-, xoxe-, xoxr-, xoxs-, xoxo-) and
	// app-level tokens (xapp-1-…).
	{re: regexp.MustCompile(`\bxox[abeoprs]-[A-Za-z0-9-]{10,}`), lits: []string{"xox"}},
	{re: regexp.MustCompile(`\bxapp-[0-9]+-[A-Za-z0-9-]{10,}`), lits: []string{"xapp-"}},
	// Slack and Discord incoming webhook URLs: the path after the fixed
	// prefix is the credential; the host stays readable.
	{re: regexp.MustCompile(`\bhooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{8,})`), group: 1,
		lits: []string{"hooks.slack.com/"}},
	{re: regexp.MustCompile(`\bdiscord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]{16,})`), group: 1,
		lits: []string{"/api/webhooks/"}},
	// npm access tokens.
	{re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36,}`), lits: []string{"npm_"}},
	// PyPI upload tokens (a macaroon whose first bytes encode "pypi.org").
	{re: regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`), lits: []string{"pypi-AgEIcHlwaS5vcmc"}},
	// Hugging Face user and organization tokens.
	{re: regexp.MustCompile(`\b(?:hf|api_org)_[A-Za-z0-9]{30,}`), lits: []string{"hf_", "api_org_"}},
	// SendGrid API keys: SG.<id>.<secret>.
	{re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`), lits: []string{"SG."}},
	// Twilio API key SIDs: SK and 32 hex digits.
	{re: regexp.MustCompile(`\bSK[0-9a-fA-F]{32}\b`), lits: []string{"SK"}},
	// AWS access key ids.
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`), lits: []string{"AKIA", "ASIA", "ABIA", "ACCA"}},
	// Google API keys.
	{re: regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{30,}`), lits: []string{"AIza"}},
	// DigitalOcean personal, OAuth and refresh tokens.
	{re: regexp.MustCompile(`\bdo[opr]_v1_[a-f0-9]{64}`), lits: []string{"_v1_"}},
	// Shopify access tokens and shared secrets.
	{re: regexp.MustCompile(`\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`), lits: []string{"shpat_", "shpca_", "shppa_", "shpss_"}},
	// Other services' tokens with a documented prefix: Linear (lin_api_),
	// Notion (ntn_), Perplexity (pplx-), Groq (gsk_), Sentry (sntrys_,
	// sntryu_), Postman (PMAK-), HashiCorp Vault (hvs., hvb.), Atlassian
	// (ATATT3) and age secret keys.
	{re: regexp.MustCompile(`\b(?:lin_api_[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}|gsk_[A-Za-z0-9]{40,}|sntry[su]_[A-Za-z0-9+/=_]{40,}|PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}|hv[sb]\.[A-Za-z0-9_-]{90,}|ATATT3[A-Za-z0-9_=-]{100,}|AGE-SECRET-KEY-1[0-9A-Z]{58})`),
		lits: []string{"lin_api_", "ntn_", "pplx-", "gsk_", "sntrys_", "sntryu_", "PMAK-", "hvs.", "hvb.", "ATATT3", "AGE-SECRET-KEY-1"}},
	// JWTs: three dot-separated base64url parts, the first a JSON object.
	{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`), lits: []string{"eyJ"}},
}

// litEntry is one of a rule's lits (at least 2 bytes long), filed under
// its first byte.
type litEntry struct {
	lit string
	bit uint64 // 1 << the rule's index in maskRules
}

// litTable files every rule's lits under their first byte, and litPairs
// has bit a|b<<8 set for the first two bytes a, b of every lit, for
// litScan: most bytes of a text start no lit's first two bytes, and one
// probe of litPairs tells.
var (
	litTable [256][]litEntry
	litPairs [1 << 16 / 64]uint64
)

func init() {
	if len(maskRules) > 64 {
		panic("secret: more mask rules than litScan's bit set holds")
	}
	for i := range maskRules {
		r := &maskRules[i]
		if len(r.lits) == 0 {
			continue
		}
		bit := uint64(1) << i
		for _, lit := range r.lits {
			if len(lit) < 2 {
				panic("secret: a mask rule literal shorter than 2 bytes")
			}
			litTable[lit[0]] = append(litTable[lit[0]], litEntry{lit: lit, bit: bit})
			pair := uint(lit[0]) | uint(lit[1])<<8
			litPairs[pair/64] |= 1 << (pair % 64)
		}
		lits := r.lits
		r.need = func(s string) bool {
			for _, lit := range lits {
				if strings.Contains(s, lit) {
					return true
				}
			}
			return false
		}
	}
}

// litScan returns the set (bit i for maskRules[i]) of rules with lits one
// of which occurs in s, in one pass over s.
func litScan(s string) uint64 {
	var found uint64
	for i := 0; i+1 < len(s); i++ {
		pair := uint(s[i]) | uint(s[i+1])<<8
		if litPairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		for _, e := range litTable[s[i]] {
			if found&e.bit == 0 && len(s)-i >= len(e.lit) && s[i+1] == e.lit[1] && s[i:i+len(e.lit)] == e.lit {
				found |= e.bit
			}
		}
	}
	return found
}

// runs reports whether maskPass runs rule i on s, given litScan(s).
func (r *maskRule) runs(s string, found uint64, i int) bool {
	if len(r.lits) > 0 {
		return found&(uint64(1)<<i) != 0
	}
	return r.need(s)
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

// needCredentialFlag is the need test of the --flag=VALUE rule: an "="
// after a run of [A-Za-z0-9_.-] that stands at the start of s or after one
// of the rule's separators (\s, quotes, "=", ","), and is "-" or "--"
// followed by a credential-shaped name that starts with a letter. The
// rule's name class holds no separator, so that run is exactly the dashes
// and name of every match it masks.
func needCredentialFlag(s string) bool {
	for j := strings.IndexByte(s, '='); j >= 0; {
		i := j
		for i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '.' || s[i-1] == '-') {
			i--
		}
		if i == 0 || strings.IndexByte(" \t\n\f\r\"'=,", s[i-1]) >= 0 {
			if name, ok := strings.CutPrefix(s[i:j], "-"); ok {
				if len(name) > 0 && name[0] == '-' {
					name = name[1:]
				}
				if len(name) > 0 && (isUpper(name[0]) || isLower(name[0])) && IsCredentialName(name) {
					return true
				}
			}
		}
		next := strings.IndexByte(s[j+1:], '=')
		if next < 0 {
			break
		}
		j += 1 + next
	}
	return false
}

// needCredentialAssignment is the need test of the NAME=VALUE rule: an "="
// after a run of [A-Za-z0-9_] that starts with a letter or "_", is
// credential-shaped and stands at the start of s or after one of the
// rule's separators. The rule's name class cannot hold a separator, so
// that run is exactly the name of every match it masks.
func needCredentialAssignment(s string) bool {
	for j := strings.IndexByte(s, '='); j >= 0; {
		i := j
		for i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_') {
			i--
		}
		if i < j && !isDigit(s[i]) && (i == 0 || strings.IndexByte(" \t\n\f\r\"',;", s[i-1]) >= 0) && IsCredentialName(s[i:j]) {
			return true
		}
		next := strings.IndexByte(s[j+1:], '=')
		if next < 0 {
			break
		}
		j += 1 + next
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
// Masked by shape (a prefix its issuer documents, then the token's
// alphabet; see maskRules for each pattern): GitHub tokens (gh[pousr]_…,
// github_pat_…), GitLab tokens (glpat-…, gldt-…, glrt-…, …), sk-… keys
// (OpenAI, Anthropic), Stripe secret and restricted keys (sk_live_…,
// rk_test_…, …) and webhook secrets (whsec_…), Slack tokens
// (xox[abeoprs]-…, xapp-…), npm tokens (npm_…), PyPI upload tokens,
// Hugging Face tokens (hf_…, api_org_…), SendGrid keys (SG.….…), Twilio
// API key SIDs (SK…), AWS access key ids (AKIA…, ASIA…, ABIA…, ACCA…),
// Google API keys (AIza…), DigitalOcean tokens (do[opr]_v1_…), Shopify
// tokens (shpat_…, …), Linear, Notion, Perplexity, Groq, Sentry,
// Postman, Vault and Atlassian tokens, age secret keys, JWTs (eyJ….….…),
// the body of PEM private key blocks (PGP "PRIVATE KEY BLOCK" included),
// and the secret path of Slack and Discord webhook URLs.
//
// Masked by position (see PositionSpans): the credential after "Bearer "
// or "Basic ", URL userinfo passwords (scheme://user:PASS@host), query
// parameter values whose names are credential-shaped (?token=VALUE&x=1
// masks VALUE only), --flag=VALUE / -flag=VALUE values whose flag names
// are credential-shaped (--api-key=VALUE), NAME=VALUE assignments whose
// names are credential-shaped (API_KEY=VALUE, as docker -e takes it) and
// npm auth values (//registry/:_authToken=VALUE, _auth=, _password=).
//
// Everything else stays as it was, so a command line or URL stays
// readable. Markers already in s are left alone, and so is a value that is
// only a variable reference (--token=${GITHUB_TOKEN}, as a definition
// shown unexpanded holds): it names a variable, not a value.
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
	var found uint64
	if prefilter {
		found = litScan(s)
	}
	for i := range maskRules {
		r := &maskRules[i]
		if prefilter && !r.runs(s, found, i) {
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
func (r *maskRule) spans(s string, dst [][2]int) [][2]int {
	if r.find != nil {
		return r.find(s, dst)
	}
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

// PositionSpans returns the [start, end) spans of s that MaskLiterals masks
// because of where they stand rather than what they look like: the value
// after a credential-shaped --flag= or -flag=, after a credential-shaped
// query parameter name, after a credential-shaped NAME= (API_KEY=VALUE at
// the start of the text or after a space, quote, "," or ";"), after
// an npm auth key (_authToken=, _auth=,
// _password=), after "Bearer " or "Basic " (8 bytes or more), and a URL
// userinfo password. Spans are in no particular order and may overlap;
// empty values, markers and values that are only a variable reference are
// not returned.
//
// Definition materialization runs it on a template with every ${…}
// replaced by a placeholder, to find the templates written where a
// credential goes (--api-key=${X}, ?token=${X}, Bearer ${X}): what such a
// template produces is secret whatever its variable is called. Unlike the
// shape guesses, that is decided by the definition's own text, so it may
// decide what a fingerprint hides.
func PositionSpans(s string) [][2]int {
	var spans [][2]int
	found := litScan(s)
	for i := range maskRules {
		if r := &maskRules[i]; r.context && r.runs(s, found, i) {
			spans = r.spans(s, spans)
		}
	}
	return spans
}

// IsCredentialFlag reports whether arg is a command-line flag with a
// credential-shaped name and no value of its own, so that the argument
// after it is its value: "-" or "--", then a name that starts with an
// ASCII letter, continues with ASCII letters, digits, "_", "." and "-",
// and IsCredentialName. So "--api-key", "--apikey", "--token",
// "--access-token", "--password", "-password", "--client-secret" and
// "--secret" are, while "--api-key=x" (which carries its value), "-p",
// "--port" and "--" are not. As with names, the rule leans towards hiding:
// "--no-auth" counts too.
func IsCredentialFlag(arg string) bool {
	name := strings.TrimPrefix(arg, "-")
	name = strings.TrimPrefix(name, "-")
	if len(name) == len(arg) || name == "" || !isUpper(name[0]) && !isLower(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return IsCredentialName(name)
}

// pemSpans appends the body of every PEM private key block of s: after a
// "-----BEGIN …PRIVATE KEY-----" (or "…PRIVATE KEY BLOCK-----") line, the
// longest run of whole lines each of which is base64 text
// ([A-Za-z0-9+/=]+) or a header ("Proc-Type: 4,ENCRYPTED": a name of
// letters, digits and "-", ": ", then letters, digits and ",.+/=_ -"),
// blank lines allowed between them. A line ends at a line break, at the
// two characters \n (or \r\n) of an escaped one, at "-----" (the END line
// glued to the body) or at the end of s. The body stops before the first
// line that is neither, so code written after a BEGIN line is shown.
func pemSpans(s string, dst [][2]int) [][2]int {
	const begin = "-----BEGIN "
	for i := 0; ; {
		j := strings.Index(s[i:], begin)
		if j < 0 {
			return dst
		}
		at := i + j + len(begin)
		i = at
		k := at
		for k < len(s) && (isUpper(s[k]) || isDigit(s[k]) || s[k] == ' ') {
			k++
		}
		label := s[at:k]
		if !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") ||
			!strings.HasPrefix(s[k:], "-----") {
			continue
		}
		start := k + len("-----")
		end := start
		p := start
		for p < len(s) {
			q := p
			for {
				n := pemBreakLen(s[q:])
				if n == 0 {
					break
				}
				q += n
			}
			lineEnd, ok := pemLineEnd(s, q)
			if !ok {
				break
			}
			end, p = lineEnd, lineEnd
			if strings.HasPrefix(s[p:], "-----") {
				break
			}
		}
		if end > start {
			dst = append(dst, [2]int{start, end})
		}
		i = max(i, end)
	}
}

// pemBreakLen returns the length of the line break s starts with (a real
// one, or an escaped \n or \r\n), 0 when none.
func pemBreakLen(s string) int {
	switch {
	case strings.HasPrefix(s, "\r\n"):
		return 2
	case strings.HasPrefix(s, "\n"):
		return 1
	case strings.HasPrefix(s, `\r\n`):
		return 4
	case strings.HasPrefix(s, `\n`):
		return 2
	}
	return 0
}

// pemLineEnd reports whether a PEM body line starts at s[p:] and where it
// ends: a non-empty run of base64 characters, or a header, followed by a
// line break, "-----" or the end of s.
func pemLineEnd(s string, p int) (int, bool) {
	q := p
	for q < len(s) && (isAlnum(s[q]) || s[q] == '+' || s[q] == '/' || s[q] == '=') {
		q++
	}
	if q > p && pemLineStop(s[q:]) {
		return q, true
	}
	// A header: Name: value.
	q = p
	if q >= len(s) || !isUpper(s[q]) && !isLower(s[q]) {
		return 0, false
	}
	for q < len(s) && (isAlnum(s[q]) || s[q] == '-') {
		q++
	}
	if !strings.HasPrefix(s[q:], ": ") {
		return 0, false
	}
	q += 2
	for q < len(s) && (isAlnum(s[q]) || strings.IndexByte(",.+/=_ -", s[q]) >= 0) {
		if strings.HasPrefix(s[q:], "-----") {
			break
		}
		q++
	}
	if pemLineStop(s[q:]) {
		return q, true
	}
	return 0, false
}

// pemLineStop reports whether a PEM body line may end where rest starts.
func pemLineStop(rest string) bool {
	return rest == "" || pemBreakLen(rest) > 0 || strings.HasPrefix(rest, "-----")
}
