package httptransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strconv"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons carried by the refusals of this package. Egress refusals keep the
// Reason of the policy that made them (see package core/egress).
const (
	// ReasonKindMismatch: Transport was given a Target whose Kind is not http.
	ReasonKindMismatch = "transport_kind_mismatch"
	// ReasonURLInvalid: the Target's URL does not parse or is not an
	// absolute http(s) URL. Class Config.
	ReasonURLInvalid = "url_invalid"
	// ReasonUserinfoRefused: the URL carries userinfo. Class Refused.
	ReasonUserinfoRefused = "userinfo_refused"
	// ReasonEgressRefused: the policy refused with an error that is not a
	// *refusal.Error. Class Refused.
	ReasonEgressRefused = "egress_refused"
	// ReasonReservedHeader: a static, authenticator or helper header names a
	// header the transport or the protocol owns. Class Config for a
	// definition's static headers, AuthRequired for an authenticator's.
	ReasonReservedHeader = "reserved_header"
	// ReasonHeaderInvalid: a header name is not an RFC 9110 token or a value
	// holds CR, LF or NUL.
	ReasonHeaderInvalid = "header_invalid"
	// ReasonRedirectRefused: the server answered with a redirect. Class
	// Refused; the redirect is never followed, same origin included.
	ReasonRedirectRefused = "redirect_refused"
	// ReasonOriginMismatch: a request was about to leave for an origin other
	// than the admitted one. Class Refused.
	ReasonOriginMismatch = "origin_mismatch"
	// ReasonReceiveCap: a response body exceeded the receive cap. Class
	// Protocol; the Detail names the cap in bytes.
	ReasonReceiveCap = "receive_cap_exceeded"
	// ReasonAuthRequired: the server asked for a credential and no
	// authenticator is registered, or the authenticator has none. Class
	// AuthRequired.
	ReasonAuthRequired = "auth_required"
	// ReasonAuthRefused: the credential was refused after the one permitted
	// retry, or the authenticator did not allow a retry. Class AuthRefused.
	ReasonAuthRefused = "auth_refused"
	// ReasonAuthFailed: the authenticator failed with an error that is not a
	// *refusal.Error. Class AuthRequired.
	ReasonAuthFailed = "auth_headers_failed"
	// ReasonHTTPStatus: the server answered with a status the transport
	// does not pass on. Class Transient for 408, 429 and 5xx, Protocol
	// otherwise. Always carried by a *StatusError.
	ReasonHTTPStatus = "http_status"
	// ReasonTLS: the TLS handshake or certificate verification failed.
	// Class Refused.
	ReasonTLS = "tls_failed"
	// ReasonNetwork: a network failure (resolution, connect, reset). Class
	// Transient.
	ReasonNetwork = "network_error"
	// ReasonTraceparentInvalid: WithTraceparent was given a value that is
	// not a valid W3C traceparent. Class Config.
	ReasonTraceparentInvalid = "traceparent_invalid"
	// ReasonBodyUnavailable: a request had to be resent after an auth
	// refusal but its body cannot be replayed. Class AuthRefused.
	ReasonBodyUnavailable = "body_not_replayable"
)

// StatusError is a non-success HTTP status the transport turned into an
// error. It carries the status code and a *refusal.Error (returned by
// Unwrap), so refusal.ClassOf works on it; it never carries the response
// body or a header value.
type StatusError struct {
	// Status is the HTTP status code.
	Status int
	// Refusal is the typed, secret-free form of the failure.
	Refusal *refusal.Error
}

func (e *StatusError) Error() string {
	return e.Refusal.Error() + " (status " + strconv.Itoa(e.Status) + ")"
}

// Unwrap returns the refusal.
func (e *StatusError) Unwrap() error { return e.Refusal }

func newStatusError(status int, server, origin string) *StatusError {
	class := refusal.Protocol
	if status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500 {
		class = refusal.Transient
	}
	detail := http.StatusText(status)
	if detail == "" {
		detail = "unrecognised status"
	}
	return &StatusError{
		Status:  status,
		Refusal: &refusal.Error{Class: class, Reason: ReasonHTTPStatus, Server: server, Origin: origin, Detail: detail},
	}
}

// Classify maps an error returned by a session or transport built by this
// package to a *refusal.Error: the first *refusal.Error in err's chain (a
// *StatusError included), stamped with server and origin where it has none,
// or a fixed-text refusal of Class Transient for network failures and of
// Class Internal otherwise. The text of err (which may embed the full URL)
// is never copied. A nil err gives nil; context errors give nil as well, so
// a caller checks ctx first.
func Classify(err error, server, origin string) *refusal.Error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	var r *refusal.Error
	if errors.As(err, &r) {
		c := *r
		if c.Server == "" {
			c.Server = server
		}
		if c.Origin == "" {
			c.Origin = origin
		}
		return &c
	}
	if m := mapNetError(err, server, origin); m != nil {
		return m
	}
	return &refusal.Error{Class: refusal.Internal, Reason: "transport_failed", Server: server, Origin: origin}
}

// mapNetError maps a dial, TLS or I/O error to a fixed-text refusal, or
// returns nil when err is none of those. A refusal in the chain (an egress
// refusal raised at dial time) wins.
func mapNetError(err error, server, origin string) *refusal.Error {
	var r *refusal.Error
	if errors.As(err, &r) {
		c := *r
		c.Server = server
		if c.Origin == "" {
			c.Origin = origin
		}
		return &c
	}
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recordErr) || errors.As(err, &alertErr) {
		return &refusal.Error{Class: refusal.Refused, Reason: ReasonTLS, Server: server, Origin: origin}
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return &refusal.Error{Class: refusal.Transient, Reason: ReasonNetwork, Server: server, Origin: origin}
	}
	return nil
}
