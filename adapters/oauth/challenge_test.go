package oauth

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseChallenge(t *testing.T) {
	const rm = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name      string
		h         string
		wantRM    string
		wantScope string
		wantOK    bool
	}{
		{"bearer only resource_metadata", `Bearer resource_metadata="` + rm + `"`, rm, "", true},
		{"bearer with scope and error", `Bearer error="invalid_token", scope="a b", resource_metadata="` + rm + `"`, rm, "a b", true},
		{"token value", `Bearer resource_metadata=abc, scope=mcp.read`, "abc", "mcp.read", true},
		{"case-insensitive scheme and names", `bEaReR Resource_Metadata="` + rm + `", SCOPE="x"`, rm, "x", true},
		{"basic then bearer", `Basic realm="x, Bearer fake=\"y\"", Bearer resource_metadata="` + rm + `"`, rm, "", true},
		{"bearer then basic", `Bearer resource_metadata="` + rm + `", Basic realm="x"`, rm, "", true},
		{"first bearer wins", `Bearer scope="one", Bearer scope="two"`, "", "one", true},
		{"escapes", `Bearer scope="a\"b\\c\ d"`, "", `a"b\c d`, true},
		{"bws around equals", "Bearer scope = \"x\" ,\tresource_metadata\t=\t\"" + rm + "\"", rm, "x", true},
		{"empty list elements", `, ,Basic realm="r" , , Bearer , scope="s" ,,`, "", "s", true},
		{"bearer no params", `Bearer`, "", "", true},
		{"bearer token68", `Bearer abc.def~+/==`, "", "", true},
		{"token68 scheme then bearer", `Negotiate abc==, Bearer scope="s"`, "", "s", true},
		{"empty quoted value", `Bearer scope=""`, "", "", true},
		{"obs-text in quoted", "Bearer scope=\"caf\xc3\xa9\"", "", "caf\xc3\xa9", true},

		{"empty", ``, "", "", false},
		{"whitespace only", " \t ", "", "", false},
		{"no bearer", `Basic realm="x"`, "", "", false},
		{"bearer as param value", `Basic realm=Bearer`, "", "", false},
		{"duplicate param", `Bearer scope="a", scope="b"`, "", "", false},
		{"duplicate param other case", `Bearer scope="a", SCOPE="b"`, "", "", false},
		{"unterminated quote", `Bearer scope="a`, "", "", false},
		{"dangling escape", `Bearer scope="a\`, "", "", false},
		{"control char in quote", "Bearer scope=\"a\x01\"", "", "", false},
		{"escaped control char", "Bearer scope=\"a\\\x01\"", "", "", false},
		{"newline in quote", "Bearer scope=\"a\nb\"", "", "", false},
		{"token68 that looks like a param", `Bearer scope=`, "", "", true},
		{"missing value before comma", `Bearer scope=, realm="x"`, "", "", false},
		{"missing name", `Bearer ="x"`, "", "", false},
		{"param without scheme", `scope="x"`, "", "", false},
		{"param without space after scheme", `Bearer, scope="x"`, "", "", false},
		{"params after token68", `Bearer abc, scope="x"`, "", "", false},
		{"tab after scheme", "Bearer\tscope=\"x\"", "", "", false},
		{"missing comma", `Bearer scope="x" realm="y"`, "", "", false},
		{"junk after quote", `Bearer scope="x"y`, "", "", false},
		{"token68 then junk", `Bearer abc def`, "", "", false},
		{"equals inside token68", `Bearer a=b=c`, "", "", false},
		{"non-tchar scheme", `Bea(rer scope="x"`, "", "", false},
		{"leading junk", `"Bearer" scope="x"`, "", "", false},
		{"nul", "Bearer scope=\"x\"\x00", "", "", false},
		{"trailing equals", `Bearer scope =`, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotRM, gotScope, ok := parseChallenge(tt.h)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantRM, gotRM)
			assert.Equal(t, tt.wantScope, gotScope)
		})
	}
}

// quoteHeader returns s as an RFC 9110 quoted-string, ok false when s
// holds a byte no quoted-string can carry.
func quoteHeader(s string) (string, bool) {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t' || (c >= 0x20 && c != 0x7f):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	b.WriteByte('"')
	return b.String(), true
}

// varyCase changes the case of s's letters by the bits of mask.
func varyCase(s string, mask uint64) string {
	b := []byte(s)
	for i := range b {
		if mask&(1<<(uint(i)%64)) != 0 {
			switch c := b[i]; {
			case c >= 'a' && c <= 'z':
				b[i] = c - 'a' + 'A'
			case c >= 'A' && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
	}
	return string(b)
}

// FuzzParseChallenge checks that parseChallenge never panics on any input
// and, for a well-formed header built from the inputs (another challenge
// around the Bearer one, varied case, whitespace and empty list elements,
// quoted or token values), gives back exactly the values put in.
func FuzzParseChallenge(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://a/b"`, "https://a/b?x=CANARY-7f3a", "mcp.read mcp.write", uint64(0), uint8(0))
	f.Add(`Basic realm="x", Bearer scope="a\"b"`, `a"b\c`, "", uint64(0xf0f0), uint8(7))
	f.Add(`Bearer a=b=c`, "", "x", uint64(1), uint8(255))
	f.Add("\x00\xff\"\\", "\t", "tok", uint64(42), uint8(0x55))
	f.Fuzz(func(t *testing.T, raw, rm, scope string, mask uint64, shape uint8) {
		_, _, _ = parseChallenge(raw) // must not panic
		_, _ = parseChallenges(raw)
		if ch, ok := ParseChallenge(401, raw); ok {
			checkChallengeBounds(t, ch)
		}

		qrm, ok1 := quoteHeader(rm)
		qscope, ok2 := quoteHeader(scope)
		if !ok1 || !ok2 {
			return
		}
		// A value that is a token may go unquoted.
		if shape&1 != 0 && rm != "" && isAllTchar(rm) {
			qrm = rm
		}
		if shape&2 != 0 && scope != "" && isAllTchar(scope) {
			qscope = scope
		}
		sep := ", "
		if shape&4 != 0 {
			sep = " \t,\t, "
		}
		eq := "="
		if shape&8 != 0 {
			eq = " \t= "
		}
		params := []string{
			varyCase("resource_metadata", mask) + eq + qrm,
			varyCase("error", mask>>17) + eq + `"invalid_token"`,
			varyCase("scope", mask>>23) + eq + qscope,
		}
		if shape&16 != 0 {
			params[0], params[2] = params[2], params[0]
		}
		h := varyCase("Bearer", mask>>31) + " " + strings.Join(params, sep)
		switch shape >> 5 & 3 {
		case 1:
			h = `Basic realm="r, Bearer scope=\"no\""` + sep + h
		case 2:
			h = h + sep + `Negotiate abc+/==`
		case 3:
			h = `Negotiate abc` + sep + h + sep + `Basic realm=r`
		}
		if shape&128 != 0 {
			h = " ," + h + ", "
		}
		gotRM, gotScope, ok := parseChallenge(h)
		if !ok || gotRM != rm || gotScope != scope {
			t.Fatalf("parseChallenge(%q) = %q, %q, %v; want %q, %q, true", h, gotRM, gotScope, ok, rm, scope)
		}
		ch, ok := ParseChallenge(403, h)
		if !ok || ch.Status != 403 || ch.Error != "invalid_token" {
			t.Fatalf("ParseChallenge(%q) = %+v, %v", h, ch, ok)
		}
		checkChallengeBounds(t, ch)
		if len(rm) <= maxChallengeLink && ch.ResourceMetadata != rm {
			t.Fatalf("ParseChallenge(%q).ResourceMetadata = %q, want %q", h, ch.ResourceMetadata, rm)
		}
		if !slices.Equal(ch.Scope, scopeList(scope)) {
			t.Fatalf("ParseChallenge(%q).Scope = %q, from %q", h, ch.Scope, scope)
		}
	})
}

// isAllTchar reports whether s is a token.
func isAllTchar(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}

// checkChallengeBounds fails when ch holds what ParseChallenge must not
// keep: a scope that is not a bounded list of distinct scope tokens, an
// error that is not a short lower-case word, an overlong link.
func checkChallengeBounds(t *testing.T, ch Challenge) {
	t.Helper()
	if len(ch.ResourceMetadata) > maxChallengeLink {
		t.Fatalf("link of %d bytes kept", len(ch.ResourceMetadata))
	}
	if ch.Error != "" && !validErrorCode(ch.Error) {
		t.Fatalf("error %q kept", ch.Error)
	}
	if len(ch.Scope) > maxScopes {
		t.Fatalf("%d scopes kept", len(ch.Scope))
	}
	seen := map[string]bool{}
	for _, s := range ch.Scope {
		if seen[s] || len(s) > maxScopeLen || !validScopes([]string{s}) {
			t.Fatalf("scope %q kept in %q", s, ch.Scope)
		}
		seen[s] = true
	}
}

func TestParseChallengeEvidence(t *testing.T) {
	long := strings.Repeat("a", maxScopeLen+1)
	tests := []struct {
		name, h string
		want    Challenge
		ok      bool
	}{
		{"full", `Bearer error="insufficient_scope", scope="a b  a", resource_metadata="https://x/y?z"`,
			Challenge{Status: 403, Error: "insufficient_scope", Scope: []string{"a", "b"}, ResourceMetadata: "https://x/y?z"}, true},
		{"no params", `Bearer`, Challenge{Status: 403}, true},
		{"scope with a tab is dropped", "Bearer scope=\"a\tb\"", Challenge{Status: 403}, true},
		{"overlong scope token is dropped", `Bearer scope="` + long + `"`, Challenge{Status: 403}, true},
		{"too many scopes are dropped", `Bearer scope="` + manyScopes(maxScopes+1) + `"`, Challenge{Status: 403}, true},
		{"odd error dropped", `Bearer error="Invalid-Token"`, Challenge{Status: 403}, true},
		{"overlong link dropped", `Bearer resource_metadata="https://x/` + strings.Repeat("p", maxChallengeLink) + `"`, Challenge{Status: 403}, true},
		{"not Bearer", `Basic realm="x"`, Challenge{}, false},
		{"malformed", `Bearer scope="a`, Challenge{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseChallenge(403, tt.h)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// manyScopes returns n distinct scope tokens separated by spaces.
func manyScopes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "s%d ", i)
	}
	return b.String()
}
