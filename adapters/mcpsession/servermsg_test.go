package mcpsession

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/secret"
)

func TestSanitizeMessage(t *testing.T) {
	s := &session{conn: &Conn{Mask: func(m string) string { return strings.ReplaceAll(m, "env-value-77", secret.Redacted) }}}
	tests := []struct {
		name, msg string
		values    []string
		want      string
	}{
		{"kept as written", "Resource demo://nope not found", nil, "Resource demo://nope not found"},
		{"blank", "  \n ", nil, ""},
		{"argument values masked", "bad path /srv/data-secret", []string{"/srv/data-secret", "abc"}, "bad path <redacted>"},
		{"short values left", "bad id 7", []string{"7"}, "bad id 7"},
		{"conn mask", "key env-value-77 refused", nil, "key <redacted> refused"},
		{"literal credential shape", "token ghp_0123456789abcdefghijABCDEFGHIJ012345 refused", nil, "token <redacted> refused"},
		{"escaped", "a\x1b]52;c;eA==\x07b\nforged", nil, `a\x1b]52;c;eA==\x07b\nforged`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, s.sanitizeMessage(tt.msg, tt.values))
		})
	}
	long := s.sanitizeMessage(strings.Repeat("x", 5000), nil)
	assert.LessOrEqual(t, len(long), MaxServerMessage)
	assert.Contains(t, long, "cut by mcpward")
}

func TestArgumentValues(t *testing.T) {
	got := argumentValues(json.RawMessage(`{"k":"v1","n":12.5,"a":[true,null,"v2",{"deep":"v3"}]}`))
	assert.ElementsMatch(t, []string{"v1", "12.5", "v2", "v3"}, got, "values only, never keys")
	assert.Nil(t, argumentValues(json.RawMessage(`{`)))
	assert.Nil(t, argumentValues(nil))
	many := "[" + strings.Repeat(`"x",`, 1000) + `"x"]`
	assert.Len(t, argumentValues(json.RawMessage(many)), maxArgValues)
}

// FuzzSanitizeMessage: whatever a server writes, the kept message has no
// unsafe character and is bounded; an argument value (of letters, so that
// escaping cannot make it up) never survives.
func FuzzSanitizeMessage(f *testing.F) {
	f.Add("Resource demo://nope not found", "secretvalue")
	f.Add("\x1b[31mred secretvalue", "secretvalue")
	f.Fuzz(func(t *testing.T, msg, value string) {
		s := &session{conn: &Conn{}}
		got := s.sanitizeMessage(msg, []string{value})
		if len(got) > MaxServerMessage {
			t.Fatalf("len %d", len(got))
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u202e' {
				t.Fatalf("unsafe rune %U in %q", r, got)
			}
		}
		letters := len(value) >= minMaskedValue && strings.IndexFunc(value, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
		if letters && !strings.Contains(secret.Redacted+"cutbymcpwardbytesinall", value) && strings.Contains(got, value) {
			t.Fatalf("value %q kept in %q", value, got)
		}
	})
}
