package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mcpward/mcpward/core/refusal"
)

// Where a panic was recovered: the "where" attribute of the log record and
// the Detail of the error.
const (
	panicInConnect = "connect"
	panicInRefresh = "refresh"
	panicInCall    = "call"
)

// recovered turns the value v of a panic recovered at the boundary of one
// server's operation (where) into that server's Class Internal, Reason
// "panic" error, and logs it with the stack of the panicking goroutine. It
// must be called from the deferred function that recovered v.
//
// The log record names the server, the reason, where, the panic value's
// type and the stack: never the value's text, which can carry bytes the
// server sent (a runtime error formats an index, a custom panic anything).
func (s *Server) recovered(v any, where string) *refusal.Error {
	stack := debug.Stack()
	s.logger.LogAttrs(context.Background(), slog.LevelError, "mcpward: recovered a panic of a server's operation",
		slog.String("server", s.target.ServerID),
		slog.String("reason", ReasonPanic),
		slog.String("where", where),
		slog.String("panic_type", fmt.Sprintf("%T", v)),
		slog.String("stack", string(stack)),
	)
	e := s.newErr(refusal.Internal, ReasonPanic)
	e.Detail = "a panic was recovered during " + where
	return e
}

// failPanic ends the Ready session c after a panic in its refresh or call:
// the server is Failed with e (Internal, never retried), the retained
// catalog is kept, marked stale, and c is closed (ending a stdio child).
// Whatever the panic left behind in c is never used again. When c is no
// longer the current session (Close, or it was replaced meanwhile) only c
// is closed.
func (s *Server) failPanic(c *conn, e *refusal.Error) {
	s.mu.Lock()
	if !s.closed && s.cur == c {
		s.cur = nil
		if s.cat != nil && !s.cat.Stale {
			s.cat = s.cat.MarkStale()
		}
		s.err = e
		s.attempts = 0
		s.state = Failed
		s.publishLocked()
		s.unlockNotify()
	} else {
		s.mu.Unlock()
	}
	_ = c.close()
}
