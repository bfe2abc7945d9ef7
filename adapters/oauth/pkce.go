package oauth

import (
	"crypto/rand"
	"encoding/base64"

	"golang.org/x/oauth2"
)

// pkceMethod is the only code_challenge_method this package sends (RFC 7636
// §4.2); "plain" is never used.
const pkceMethod = "S256"

// randomBytes is how many random bytes a PKCE verifier and a state carry
// (256 bits each).
const randomBytes = 32

// pkce is one sign-in's proof key (RFC 7636): the verifier is sent only to
// the token endpoint, the challenge only in the authorization URL.
type pkce struct {
	verifier  string
	challenge string
}

// newPKCE returns a fresh proof key from golang.org/x/oauth2: a verifier
// of 32 bytes from crypto/rand, base64url without padding (43 characters
// of the unreserved set, RFC 7636 §4.1), and its S256 challenge. It cannot
// fail. Safe for concurrent use.
func newPKCE() pkce {
	v := oauth2.GenerateVerifier()
	return pkce{verifier: v, challenge: s256Challenge(v)}
}

// s256Challenge returns the S256 code challenge of verifier:
// base64url(sha256(verifier)) without padding (RFC 7636 §4.2).
func s256Challenge(verifier string) string {
	return oauth2.S256ChallengeFromVerifier(verifier)
}

// randomString returns randomBytes bytes from crypto/rand, base64url
// without padding (43 characters): a sign-in state or an assertion's jti.
// It cannot fail: crypto/rand never returns an error (and aborts the
// program if the system's source breaks). Safe for concurrent use.
func randomString() string {
	b := make([]byte, randomBytes)
	_, _ = rand.Read(b) // documented never to return an error
	return base64.RawURLEncoding.EncodeToString(b)
}
