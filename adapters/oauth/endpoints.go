package oauth

import "net/url"

// endpoints is what discovery established, and checked, for one server.
type endpoints struct {
	// resource is the server's canonical URL (the identity its
	// credential is stored under) and origin its origin; indicator is the
	// RFC 8707 resource indicator sent: the protected-resource metadata's
	// resource exactly as published, else resource.
	resource  string
	indicator string
	origin    string
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
	// dpop: the authorization server lists ES256 in
	// dpop_signing_alg_values_supported (RFC 9449 §5.1).
	dpop bool
	// offlineAccess is whether the authorization server lists
	// offline_access in its scopes_supported. request is what an
	// interactive sign-in asks for (signInScopes); scopes below is the
	// scope of the challenge discovery used, else the scopes_supported of
	// the protected-resource metadata (MCP's selection order), nil for none.
	offlineAccess bool
	request       []string
	// scopes is the scopes_supported of the protected-resource metadata.
	scopes []string
	// stepUp: a step-up was pending when the sign-in's scopes were chosen
	// (request takes it in).
	stepUp bool
	// authMethods, signingAlgs and cimd are what the authorization server
	// says of client authentication (see clientMetadata).
	authMethods []string
	signingAlgs []string
	cimd        bool
}
