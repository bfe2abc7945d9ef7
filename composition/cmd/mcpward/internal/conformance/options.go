package conformance

import "github.com/mcpward/mcpward/composition"

// oauthConfig is the OAuth client configuration of the conformance Host.
func oauthConfig() *composition.OAuthConfig {
	return &composition.OAuthConfig{ClientName: "mcpward-conformance"}
}
