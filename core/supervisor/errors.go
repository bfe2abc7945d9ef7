package supervisor

import (
	"context"
	"errors"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of the *refusal.Error values the supervisor makes itself. Errors
// of the Connector and the sessions are passed on with their own reasons.
const (
	// ReasonServerUnavailable: Call, Refresh or a content request on a
	// server that is not Ready; nothing reached the server. Class
	// Transient, except in Failed, where the Class is that of the failure
	// that ended there. The error names the server.
	ReasonServerUnavailable = "server_unavailable"
	// ReasonNotConnected is the former name of ReasonServerUnavailable,
	// now the same word.
	//
	// Deprecated: use ReasonServerUnavailable.
	ReasonNotConnected = ReasonServerUnavailable
	// ReasonClosed: Class Internal; the server was closed with Close (the
	// owner that closes it with CloseWith chooses the refusal instead).
	ReasonClosed = "closed"
	// ReasonDisconnected: Class Transient; the session ended on its own.
	ReasonDisconnected = "disconnected"
	// ReasonCancelled: Class Transient; the caller's ctx was cancelled.
	ReasonCancelled = "cancelled"
	// ReasonTimeout: Class Transient; the caller's ctx deadline passed.
	ReasonTimeout = "timeout"
	// ReasonConnectTimeout: Class Transient; an attempt outlived
	// Options.ConnectTimeout.
	ReasonConnectTimeout = "connect_timeout"
	// ReasonCallTimeout: Class Transient; a call outlived
	// Options.CallTimeout without progress, or Options.CallTimeoutMax in
	// all. It was abandoned and is never replayed.
	ReasonCallTimeout = "call_timeout"
	// ReasonPanic: Class Internal; a panic was recovered at the server's
	// boundary (connect, discovery, catalog building, refresh or call).
	// The server is Failed and its session closed; never retried.
	ReasonPanic = "panic"
	// ReasonUnclassified: Class Internal; a port returned an error that is
	// not a *refusal.Error (a defect of that port). Never retried.
	ReasonUnclassified = "unclassified_error"
	// ReasonNoSession: Class Internal; the Connector returned neither a
	// session nor an error.
	ReasonNoSession = "no_session"
	// ReasonClockFailed: Class Internal; the Clock's Sleep failed while its
	// ctx was still alive.
	ReasonClockFailed = "clock_failed"
)

// newErr returns a supervisor error of class and reason for s's server.
func (s *Server) newErr(class refusal.Class, reason string) *refusal.Error {
	return refusal.New(class, reason, s.target.ServerID)
}

// errClosed is the error of any use after Close: a copy of the refusal
// CloseWith was given, with the server id, or Class Internal ReasonClosed.
func (s *Server) errClosed() *refusal.Error {
	if why := s.closedWhy.Load(); why != nil {
		e := *why
		e.Server = s.target.ServerID
		return &e
	}
	e := s.newErr(refusal.Internal, ReasonClosed)
	e.Detail = "the server was closed"
	return e
}

// ctxErr maps the end of a caller's ctx (which must have ended).
func (s *Server) ctxErr(ctx context.Context) *refusal.Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return s.newErr(refusal.Transient, ReasonTimeout)
	}
	return s.newErr(refusal.Transient, ReasonCancelled)
}

// classify returns err as a *refusal.Error carrying the server id: the first
// *refusal.Error in its chain, or an Internal unclassified error (err's text
// is never copied). err must be non-nil.
func (s *Server) classify(err error) *refusal.Error {
	var e *refusal.Error
	if errors.As(err, &e) && e != nil {
		if e.Server == "" {
			c := *e
			c.Server = s.target.ServerID
			return &c
		}
		return e
	}
	e = s.newErr(refusal.Internal, ReasonUnclassified)
	e.Detail = "a port returned an unclassified error"
	return e
}
