package ports

import (
	"context"
	"net/http"
)

// AuthRequest describes one outgoing request to the server an Authenticator
// is registered for. It never includes the body or other headers.
type AuthRequest struct {
	ServerID string
	// Origin is "scheme://host:port" of the admitted server.
	Origin string
	// Method is the HTTP method ("POST", "GET", "DELETE").
	Method string
	// URL is the request's target URI without query or fragment
	// ("scheme://host[:port]/path", scheme and host lower case), as a
	// proof of possession names it (RFC 9449 htu); "" when the transport
	// does not say, and the Authenticator then assumes its server's URL.
	URL string
}

// AuthRefusal describes the server refusing a credential.
type AuthRefusal struct {
	ServerID string
	Origin   string
	// Status is 401 or 403.
	Status int
	// Challenge is the WWW-Authenticate header value, for parsing only;
	// it is never logged or put into an error.
	Challenge string
	// DPoPNonce is the refusal's DPoP-Nonce header value (RFC 9449 §9),
	// for parsing only, "" when it has none; like Challenge it is never
	// logged or put into an error.
	DPoPNonce string
}

// Authenticator supplies credentials for exactly one server identity. The
// HTTP transport asks it for headers on every request to that server, after
// admission and never across a redirect; its headers override static
// definition headers of the same name and never appear in a projection, log,
// audit record or error.
//
// Implementations are safe for concurrent use; Refused may be called by many
// requests refused together and must coalesce them into one
// re-authorization.
type Authenticator interface {
	// Headers returns the headers for one request. A failure is a
	// *refusal.Error of Class AuthRequired (no credential yet), AuthRefused
	// or Transient; the transport never sends the request unauthenticated.
	Headers(ctx context.Context, r AuthRequest) (http.Header, error)
	// Refused is told the server refused the credential from Headers. It
	// returns retry=true when a fresh credential is ready, in which case the
	// transport retries that request exactly once; retry=false (or an error,
	// a *refusal.Error) makes the transport fail the request with Class
	// AuthRefused.
	Refused(ctx context.Context, r AuthRefusal) (retry bool, err error)
}
