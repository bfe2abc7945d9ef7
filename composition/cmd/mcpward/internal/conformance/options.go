package conformance

import "github.com/mcpward/mcpward/composition"

// oauthConfig is the OAuth client configuration of the conformance Host:
// the suite serves http on localhost, so the test-only AllowLoopbackHTTP
// is on (and nowhere else in mcpward's programs).
func oauthConfig() *composition.OAuthConfig {
	return &composition.OAuthConfig{
		ClientName:        "mcpward-conformance",
		AllowLoopbackHTTP: true,
		ClientMetadataURL: ClientMetadataURL,
	}
}

// ClientMetadataURL is the client id metadata document URL the client
// offers an authorization server that supports such documents (the suite
// takes the URL as the client id without fetching it).
const ClientMetadataURL = "https://conformance-test.local/client-metadata.json"
