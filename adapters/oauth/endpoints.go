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
	// offlineAccess is whether the authorization server lists
	// offline_access in its scopes_supported. request is what an
	// interactive sign-in asks for (signInScopes); scopes below is the
	// scope of the challenge discovery used, else the scopes_supported of
	// the protected-resource metadata (MCP's selection order), nil for none.
	offlineAccess bool
	request       []string
	// scopes is the scopes_supported of the protected-resource metadata.
	scopes []string
	// authMethods, signingAlgs and cimd are what the authorization server
	// says of client authentication (see clientMetadata).
	authMethods []string
	signingAlgs []string
	cimd        bool
}
