package oauth

import (
	"errors"
	"net/url"
	"strings"
)

// Outcome is the result of one discovery Step, a fixed word.
type Outcome string

// The Outcomes of a Step.
const (
	// OutcomeOK: the document was fetched and passed its checks, or the
	// check passed.
	OutcomeOK Outcome = "ok"
	// OutcomeNotFound: the location answered 4xx; discovery moved on to
	// the next one, if any.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeFailed: the step failed; its Reason is the refusal's.
	OutcomeFailed Outcome = "failed"
)

// The Checks a Step names.
const (
	// CheckServerURL: the server URL is one the Client accepts.
	CheckServerURL = "server_url"
	// CheckChallenge: the resource_metadata link of the server's recorded
	// Bearer challenge is one the Client follows.
	CheckChallenge = "challenge"
	// CheckResourceMetadata: a protected-resource metadata location
	// (RFC 9728) and the resource its document describes.
	CheckResourceMetadata = "resource_metadata"
	// CheckAuthorizationServer: the resource metadata names an
	// authorization server the Client follows.
	CheckAuthorizationServer = "authorization_server"
	// CheckServerMetadata: an authorization server metadata location
	// (RFC 8414 or OpenID Connect discovery) and the issuer it names.
	CheckServerMetadata = "server_metadata"
	// CheckPKCE: the authorization server lists S256.
	CheckPKCE = "pkce"
	// CheckEndpoints: the authorization server names its authorization and
	// token endpoints, all of them https.
	CheckEndpoints = "endpoints"
	// CheckIssuerParameter: whether the authorization server promises iss
	// in its redirect (RFC 9207), and so what a redirect must carry.
	CheckIssuerParameter = "iss_parameter"
	// CheckDPoP: the authorization server issues DPoP-bound tokens (RFC
	// 9449) that a sign-in binds to a proof key.
	CheckDPoP = "dpop"
	// CheckAuthorizationServerChange: the resource metadata no longer names
	// the authorization server the stored credential came from; the
	// credential is deleted before a sign-in at the new one.
	CheckAuthorizationServerChange = "authorization_server_change"
)

// Step is one thing discovery tried, with JSON names for a host's output.
// Every field is safe to print: URL is
// projected (scheme, host, port and path: no userinfo, query or fragment),
// Hint is a fixed sentence mcpward wrote, in which URLs taken from
// metadata are projected the same way.
type Step struct {
	// Check names what was tried (one of the Check... constants).
	Check string `json:"check"`
	// URL is the location fetched, projected; "" when nothing was fetched.
	URL string `json:"url,omitempty"`
	// Status is the HTTP status of the answer; 0 when there was none.
	Status int `json:"status,omitempty"`
	// Outcome is what happened.
	Outcome Outcome `json:"outcome"`
	// Reason is the refusal's Reason word when Outcome is OutcomeFailed.
	Reason string `json:"reason,omitempty"`
	// Hint says, for a person, what did not line up and what may help;
	// "" when there is nothing to add.
	Hint string `json:"hint,omitempty"`
}

// Report is what one discovery did, step by step, for a person to act on
// (doctor; JSON names for a host's output): it says more than the error, which names at most an origin.
// It never holds a token, a query, a client id or any text of a response
// but the URLs metadata named, projected.
type Report struct {
	// Server is the server id.
	Server string `json:"server"`
	// Resource is the resource indicator sent on authorization and token
	// requests, projected (its query left out): the protected-resource
	// metadata's resource, else the server's canonical URL.
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer, projected; "" until it
	// is established.
	Issuer string `json:"issuer,omitempty"`
	// Scopes are the scopes a sign-in would request now (see
	// Client.Discover); nil when it requests none.
	Scopes []string `json:"scopes,omitempty"`
	// Steps are the steps in the order they were tried.
	Steps []Step `json:"steps"`
	// Reason is the Reason of the refusal discovery ended with; "" when it
	// succeeded.
	Reason string `json:"reason,omitempty"`
}

// add appends a step.
func (r *Report) add(st Step) {
	if r != nil {
		r.Steps = append(r.Steps, st)
	}
}

// DiscoveryError is the error of a discovery that failed within
// Client.BeginSignIn (and so SignInWith): the *refusal.Error, which names
// at most an origin, and beside it the Report of what discovery tried.
// errors.As finds the *refusal.Error through it.
type DiscoveryError struct {
	// Err is the refusal; Error and Unwrap return it.
	Err error
	// Report is the discovery's report, never nil.
	Report *Report
}

// Error returns the refusal's text (never the report's).
func (e *DiscoveryError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal.
func (e *DiscoveryError) Unwrap() error { return e.Err }

// ReportOf returns the discovery Report err carries (a *DiscoveryError in
// its chain), or nil when it carries none.
func ReportOf(err error) *Report {
	var de *DiscoveryError
	if errors.As(err, &de) {
		return de.Report
	}
	return nil
}

// maxProjected bounds a projected URL; a longer one is cut and ends in
// "...".
const maxProjected = 200

// projectURL returns raw as it may be shown: scheme, host, port and
// escaped path, without userinfo, query or fragment, bytes outside
// printable ASCII replaced by "_", at most maxProjected bytes. A value that
// is not an absolute URL with a host is "(not an absolute URL)"; "" stays
// "".
func projectURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "(not an absolute URL)"
	}
	s := strings.ToLower(u.Scheme) + "://" + u.Host + u.EscapedPath()
	b := []byte(s)
	for i, c := range b {
		if c < 0x21 || c > 0x7e {
			b[i] = '_'
		}
	}
	if len(b) > maxProjected {
		return string(b[:maxProjected-3]) + "..."
	}
	return string(b)
}
