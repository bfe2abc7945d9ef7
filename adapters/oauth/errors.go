package oauth

import (
	"context"
	"errors"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of the *refusal.Error values this package returns, by stage. Each
// names its Class.
const (
	// ReasonURLInvalid (Config): the server URL, or a URL a definition gave
	// (MetadataURL), is not an absolute https URL without userinfo or
	// fragment.
	ReasonURLInvalid = "oauth_url_invalid"
	// ReasonInsecureEndpoint (Refused): metadata named an endpoint or issuer
	// that is not an absolute https URL.
	ReasonInsecureEndpoint = "insecure_endpoint"
	// ReasonResourceMetadataUnavailable (Unsupported): the server publishes
	// no protected-resource metadata where RFC 9728 and its challenge say.
	ReasonResourceMetadataUnavailable = "resource_metadata_unavailable"
	// ReasonResourceMismatch (Refused): the protected-resource metadata
	// describes another resource than this server's canonical URL.
	ReasonResourceMismatch = "resource_mismatch"
	// ReasonAuthorizationServerMissing (Unsupported): the resource metadata
	// names no authorization server.
	ReasonAuthorizationServerMissing = "authorization_server_missing"
	// ReasonServerMetadataUnavailable (Unsupported): the authorization
	// server publishes no metadata at any RFC 8414 or OpenID Connect
	// discovery location.
	ReasonServerMetadataUnavailable = "server_metadata_unavailable"
	// ReasonIssuerMismatch (Refused): the authorization server metadata names
	// another issuer than the one it was fetched for.
	ReasonIssuerMismatch = "issuer_mismatch"
	// ReasonPKCEUnsupported (Refused): code_challenge_methods_supported does
	// not list S256.
	ReasonPKCEUnsupported = "pkce_s256_unsupported"
	// ReasonEndpointMissing (Unsupported): the metadata lacks the
	// authorization or token endpoint; it is never guessed.
	ReasonEndpointMissing = "endpoint_missing"
	// ReasonMetadataInvalid (Protocol): a metadata, registration or token
	// response is not the JSON object it must be, or is larger than
	// Options.MaxResponseBytes.
	ReasonMetadataInvalid = "metadata_invalid"
	// ReasonRedirectRefused (Refused): a response was a redirect; no request
	// of this package follows one.
	ReasonRedirectRefused = "redirect_refused"
	// ReasonUnavailable (Transient): the network failed, or the server
	// answered 429 or 5xx.
	ReasonUnavailable = "oauth_unavailable"

	// ReasonRegistrationUnavailable (Unsupported): the definition names no
	// client id and the authorization server offers no registration
	// endpoint.
	ReasonRegistrationUnavailable = "client_registration_unavailable"
	// ReasonRegistrationRefused (Refused): the registration endpoint
	// refused the registration (4xx).
	ReasonRegistrationRefused = "registration_refused"

	// ReasonCallbackUnavailable (Transient): the loopback redirect listener
	// could not be opened.
	ReasonCallbackUnavailable = "callback_unavailable"
	// ReasonSignInRedirectInvalid (Config): a pasted redirect is not this
	// sign-in's redirect URI, or carries no code.
	ReasonSignInRedirectInvalid = "sign_in_redirect_invalid"
	// ReasonSignInStateMismatch (Refused): the redirect's state is not this
	// sign-in's.
	ReasonSignInStateMismatch = "sign_in_state_mismatch"
	// ReasonSignInIssuerMismatch (Refused): the redirect's iss is not the
	// issuer's, or is missing although the issuer promised it (RFC 9207).
	ReasonSignInIssuerMismatch = "sign_in_issuer_mismatch"
	// ReasonSignInDenied (AuthRefused): the redirect carried an error (the
	// user or the server declined).
	ReasonSignInDenied = "sign_in_denied"
	// ReasonSignInUsed (Config): this sign-in already accepted a redirect,
	// or was closed.
	ReasonSignInUsed = "sign_in_used"
	// ReasonTokenRefused (AuthRefused): the token endpoint refused the code.
	ReasonTokenRefused = "token_refused"
	// ReasonTokenResponseInvalid (Protocol): a token response lacks an
	// access token, has a token type other than the one asked for (Bearer,
	// or DPoP with a proof: see ReasonDPoPDowngrade), or a malformed
	// expires_in.
	ReasonTokenResponseInvalid = "token_response_invalid"
	// ReasonTokenMalformed (Protocol): a token response's access token is
	// empty or holds a byte an Authorization header cannot carry (a space,
	// CR, LF, NUL, ESC, anything outside visible ASCII), or its refresh
	// token one outside printable ASCII. Nothing is stored: the token
	// could never be sent.
	ReasonTokenMalformed = "token_malformed"
	// ReasonTokenTooLarge (Refused): a token response's access token is
	// larger than MaxAccessTokenBytes or its refresh token than
	// MaxRefreshTokenBytes, or the credential is larger than the token
	// store keeps (ports.ErrValueTooLarge). Nothing is stored; retrying
	// cannot help.
	ReasonTokenTooLarge = "token_too_large"

	// ReasonSignInRequired (AuthRequired): there is no credential for this
	// server, or its refresh token was refused (invalid_grant): the user
	// must sign in.
	ReasonSignInRequired = "oauth_sign_in_required"
	// ReasonRefreshRefused (AuthRefused): the token endpoint refused a
	// refresh for another reason than invalid_grant; the credential is kept.
	ReasonRefreshRefused = "refresh_refused"
	// ReasonLockTimeout (Transient): the refresh lock was not obtained within
	// Options.LockTimeout; nothing was sent.
	ReasonLockTimeout = "refresh_lock_timeout"
	// ReasonStoreUnavailable (Transient): the token store or locker failed.
	ReasonStoreUnavailable = "token_store_unavailable"
	// ReasonCredentialCorrupt (Config): the stored credential cannot be
	// read; SignOut deletes it.
	ReasonCredentialCorrupt = "credential_corrupt"
)

// refuse returns the refusal of class and reason for server, naming origin
// ("" for none).
func refuse(class refusal.Class, reason, server, origin string) *refusal.Error {
	return refusal.New(class, reason, server).WithOrigin(origin)
}

// ctxRefusal maps an ended context to Class Transient, Reason "canceled" or
// "deadline_exceeded".
func ctxRefusal(err error, server, origin string) *refusal.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return refuse(refusal.Transient, "deadline_exceeded", server, origin)
	}
	return refuse(refusal.Transient, "canceled", server, origin)
}
