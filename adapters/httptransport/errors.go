package httptransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"

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
	// does not pass on. Class Transient for 408, 429 and 5xx (a retry may
	// succeed); Class Refused for every other 4xx (the server refuses the
	// request as made: a wrong URL, method or body, which a retry sends
	// again; 401 and 403 are the auth reasons instead); Class Protocol for
	// any other status (1xx, or one HTTP does not define). Always carried by
	// a *StatusError.
	ReasonHTTPStatus = "http_status"
	// ReasonLegacySSE: the server answered the POST that carries a message
	// like an endpoint of the deprecated HTTP+SSE transport (protocol
	// 2024-11-05) does — 405 Method Not Allowed, or 404 at a path ending
	// in "/sse" —, which mcpward does not speak. Class Refused, like the
	// other 4xx (so a refused server/discover still falls back to
	// initialize, which gets the same answer); carried by a *StatusError
	// with the status, its Detail says what to do.
	ReasonLegacySSE = "legacy_sse_endpoint"
	// ReasonTLS: the TLS handshake or certificate verification failed.
	// Class Refused. Carried by a *NetError (Cause CauseTLS).
	ReasonTLS = "tls_failed"
	// ReasonNetwork: a network failure (resolution, connect, reset, a
	// connection closed early, a timeout). Class Transient. Carried by a
	// *NetError when the transport made it (Cause names which).
	ReasonNetwork = "network_error"
	// ReasonTraceparentInvalid: WithTraceparent was given a value that is
	// not a valid W3C traceparent. Class Config.
	ReasonTraceparentInvalid = "traceparent_invalid"
	// ReasonBodyUnavailable: a request had to be resent after an auth
	// refusal but its body cannot be replayed. Class AuthRefused.
	ReasonBodyUnavailable = "body_not_replayable"
	// ReasonMalformedMessage: the server sent a body or SSE event that is
	// not one JSON-RPC message, or an SSE line without a ':'. Class
	// Protocol; the connection fails.
	ReasonMalformedMessage = "malformed_message"
	// ReasonContentType: the server answered a request with a Content-Type
	// that is neither application/json nor text/event-stream. Class
	// Protocol; the connection fails.
	ReasonContentType = "content_type_unsupported"
	// ReasonSessionMismatch: the server answered with an Mcp-Session-Id
	// other than the session's. Class Protocol.
	ReasonSessionMismatch = "session_id_mismatch"
	// ReasonStreamRetries: an SSE stream could not be resumed within
	// Options.MaxRetries attempts without progress. Class Transient.
	ReasonStreamRetries = "stream_retries_exhausted"
	// ReasonConnectionClosed: the connection was closed while a stream
	// was being resumed. Class Transient.
	ReasonConnectionClosed = "connection_closed"
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
	class := statusClass(status)
	detail := strconv.Itoa(status) + " " + http.StatusText(status)
	if http.StatusText(status) == "" {
		detail = strconv.Itoa(status) + " (unrecognised status)"
	}
	return &StatusError{
		Status:  status,
		Refusal: &refusal.Error{Class: class, Reason: ReasonHTTPStatus, Server: server, Origin: origin, Detail: detail},
	}
}

// legacySSEError is the StatusError of a POST answered like a legacy
// HTTP+SSE endpoint (see ReasonLegacySSE).
func legacySSEError(status int, server, origin string) *StatusError {
	return &StatusError{Status: status, Refusal: &refusal.Error{Class: refusal.Refused, Reason: ReasonLegacySSE, Server: server, Origin: origin,
		Detail: strconv.Itoa(status) + " " + http.StatusText(status) + " to POST: the URL answers like a legacy HTTP+SSE endpoint, which mcpward does not speak; use the server's Streamable HTTP endpoint (often /mcp)"}}
}

// legacySSE reports whether a POST answered code at path looks like a
// legacy HTTP+SSE endpoint: 405 (its stream is GET only), or 404 at a
// path whose last segment is "sse" (the conventional name).
func legacySSE(method string, code int, path string) bool {
	if method != http.MethodPost {
		return false
	}
	switch code {
	case http.StatusMethodNotAllowed:
		return true
	case http.StatusNotFound:
		p := strings.TrimSuffix(path, "/")
		return strings.HasSuffix(p, "/sse")
	}
	return false
}

// statusClass is the Class of a status the transport does not pass on
// (see ReasonHTTPStatus).
func statusClass(status int) refusal.Class {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500 && status < 600:
		return refusal.Transient
	case status >= 400 && status < 500:
		return refusal.Refused
	}
	return refusal.Protocol
}

// The causes of network failures: the fixed words NetError.Cause and Cause
// return. They say what kind of failure it was, never where or with what
// text.
const (
	// CauseRefused: the server's address refused the connection.
	CauseRefused = "refused"
	// CauseDNS: the host name did not resolve.
	CauseDNS = "dns"
	// CauseTimeout: connecting, the TLS handshake or a read timed out.
	CauseTimeout = "timeout"
	// CauseTLS: the TLS handshake or certificate verification failed.
	CauseTLS = "tls"
	// CauseReset: the connection was reset or aborted by the peer.
	CauseReset = "reset"
	// CauseEOF: the server closed the connection before a complete
	// response.
	CauseEOF = "eof"
	// CauseUnreachable: no route to the host or its network.
	CauseUnreachable = "unreachable"
	// CauseNetwork: any other network failure.
	CauseNetwork = "network"
)

// NetError is a network failure the transport turned into an error: a
// *refusal.Error (returned by Unwrap, so refusal.ClassOf works on it) and a
// fixed word saying what kind of failure it was. It carries no address,
// URL or error text.
type NetError struct {
	// Cause is one of the Cause* words.
	Cause string
	// Refusal is the typed, secret-free form of the failure: Class
	// Transient ReasonNetwork, or Class Refused ReasonTLS.
	Refusal *refusal.Error
}

func (e *NetError) Error() string { return e.Refusal.Error() + " (" + e.Cause + ")" }

// Unwrap returns the refusal.
func (e *NetError) Unwrap() error { return e.Refusal }

// Cause returns the fixed word (one of the Cause* constants) naming the
// network cause of err: the Cause of the first *NetError in err's chain,
// else the cause of a network error in it (a failure on a stream the SDK
// reads after the request was made); "" when err is nil, a context error,
// or not a network failure. It never looks at err's text.
func Cause(err error) string {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ""
	}
	var ne *NetError
	if errors.As(err, &ne) {
		return ne.Cause
	}
	var r *refusal.Error
	if errors.As(err, &r) {
		return ""
	}
	return netCause(err)
}

// netCause classifies a raw network error; "" when err is none.
func netCause(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return CauseDNS
	case isTLSError(err):
		return CauseTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseRefused
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT),
		errors.As(err, &netErr) && netErr.Timeout():
		return CauseTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return CauseReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTDOWN),
		errors.Is(err, syscall.ENETDOWN):
		return CauseUnreachable
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return CauseEOF
	case errors.As(err, &netErr):
		return CauseNetwork
	}
	return ""
}

// isTLSError reports a TLS handshake or certificate failure in err's chain.
func isTLSError(err error) bool {
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
	)
	return errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recordErr) || errors.As(err, &alertErr)
}

// Classify maps an error returned by a session or transport built by this
// package to a *refusal.Error: the first *refusal.Error in err's chain (a
// *StatusError or *NetError included), stamped with server and origin
// where it has none, or a fixed-text refusal: Class Transient
// ReasonNetwork for network failures (Class Refused ReasonTLS for TLS
// ones), Class Protocol ReasonReceiveCap for an SSE event over the cap,
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
	if isSSECapBreach(err) {
		return &refusal.Error{Class: refusal.Protocol, Reason: ReasonReceiveCap, Server: server, Origin: origin,
			Detail: "an event of the stream exceeded the receive cap"}
	}
	return &refusal.Error{Class: refusal.Internal, Reason: "transport_failed", Server: server, Origin: origin}
}

// sdkSSECapPhrase is the fixed phrase of the go-sdk's (v1.8.0) error for an
// SSE event over StreamableClientTransport.MaxEventSize (mcp/event.go,
// errMalformedEvent is unexported), for an error of a session over the
// SDK's own transport; this package's Transport refuses such an event
// itself (Class Protocol ReasonReceiveCap).
const sdkSSECapPhrase = "SSE event exceeded"

// isSSECapBreach reports the SDK's error for an SSE event over the cap.
// The text is only matched, never copied.
func isSSECapBreach(err error) bool { return strings.Contains(err.Error(), sdkSSECapPhrase) }

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
	if isTLSError(err) {
		return &refusal.Error{Class: refusal.Refused, Reason: ReasonTLS, Server: server, Origin: origin}
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return &refusal.Error{Class: refusal.Transient, Reason: ReasonNetwork, Server: server, Origin: origin}
	}
	return nil
}

// newNetError is the *NetError of a failed request: a *NetError already in
// err's chain (made at dial time) restamped, else the mapping of err
// (mapNetError, Class Transient ReasonNetwork when it maps nothing) with
// err's cause (CauseNetwork when it has none). A refusal in err's chain
// that is not a network failure (an egress refusal at dial time) is
// returned as is, without a cause.
func newNetError(err error, server, origin string) error {
	var ne *NetError
	if errors.As(err, &ne) {
		c := *ne.Refusal
		c.Server = server
		if c.Origin == "" {
			c.Origin = origin
		}
		return &NetError{Cause: ne.Cause, Refusal: &c}
	}
	r := mapNetError(err, server, origin)
	var inner *refusal.Error
	if errors.As(err, &inner) {
		return r
	}
	if r == nil {
		r = &refusal.Error{Class: refusal.Transient, Reason: ReasonNetwork, Server: server, Origin: origin}
	}
	cause := netCause(err)
	if cause == "" {
		cause = CauseNetwork
	}
	return &NetError{Cause: cause, Refusal: r}
}
