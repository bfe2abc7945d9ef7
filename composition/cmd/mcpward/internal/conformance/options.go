package conformance

import "github.com/mcpward/mcpward/composition"

// oauthConfig is the OAuth client configuration of the conformance Host:
// the suite serves http on localhost, so the test-only AllowLoopbackHTTP
// is on (and nowhere else in mcpward's programs).
func oauthConfig() *composition.OAuthConfig {
	return &composition.OAuthConfig{ClientName: "mcpward-conformance", AllowLoopbackHTTP: true}
}
