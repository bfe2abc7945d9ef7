package oauth

import "net/url"

// endpoints is what discovery established, and checked, for one server.
type endpoints struct {
	// resource is the server's canonical URL (the RFC 8707 resource
	// indicator) and origin its origin.
	resource string
	origin   string
	// issuer is the authorization server's issuer identifier, exactly as
	// its metadata names it.
	issuer string
	// authorization and token are the authorization server's endpoints;
	// registration and revocation are nil when it offers none. All https.
	authorization *url.URL
	token         *url.URL
	registration  *url.URL
	revocation    *url.URL
	// issParameter is authorization_response_iss_parameter_supported: the
	// redirect must then carry iss (RFC 9207).
	issParameter bool
	// scopes is the scope of the recorded challenge, else the
	// scopes_supported of the protected-resource metadata (MCP's scope
	// selection order); nil for none.
	scopes []string
	// offlineAccess is whether the authorization server lists
	// offline_access in its scopes_supported.
	offlineAccess bool
}
