package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isUnreserved reports whether s uses only the base64url alphabet, a subset
// of RFC 7636's unreserved characters, with no padding.
func isUnreserved(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

func TestS256ChallengeRFC7636Vector(t *testing.T) {
	// RFC 7636 Appendix B.
	assert.Equal(t, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		s256Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
}

func TestNewPKCE(t *testing.T) {
	seen := map[string]bool{}
	for range 64 {
		p := newPKCE()
		require.Len(t, p.verifier, 43, "32 bytes, base64url without padding")
		require.True(t, isUnreserved(p.verifier), "verifier alphabet")
		raw, err := base64.RawURLEncoding.DecodeString(p.verifier)
		require.NoError(t, err)
		require.Len(t, raw, 32)
		sum := sha256.Sum256([]byte(p.verifier))
		require.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), p.challenge)
		require.NotEqual(t, p.verifier, p.challenge)
		require.False(t, seen[p.verifier], "verifiers repeat")
		seen[p.verifier] = true
	}
	assert.Equal(t, "S256", pkceMethod)
}

func TestRandomString(t *testing.T) {
	a, b := randomString(), randomString()
	assert.Len(t, a, 43)
	assert.True(t, isUnreserved(a))
	assert.NotEqual(t, a, b)
}
