// Package portstest holds in-memory, race-safe reference fakes of every port
// of package ports, for tests only.
//
// Each fake implements its port exactly as the port's doc comment says, so
// the conformance suites can be checked against it, and embeds a Faults so a
// test can inject failures and count calls the same way on every fake.
//
// portstest imports only the standard library, like ports itself. It
// therefore cannot build the *refusal.Error values (package core/refusal)
// some port contracts name: wherever a contract asks for one, the fake
// returns an error the test supplies (a constructor argument, a func field or
// an injected failure), and falls back to one of the sentinels below only
// when the test supplied none. A test in core or an adapter passes
// refusal.New(...) values where the class matters.
package portstest

import "errors"

// Sentinels returned by fakes when a test supplied no error of its own.
// They are not *refusal.Error values (see the package comment).
var (
	// ErrRefused is returned by a policy fake told to refuse without an
	// error of the test's choosing, and by a ProcessAuthority with no
	// Decide func.
	ErrRefused = errors.New("portstest: refused")
	// ErrUndeclared is returned (wrapped) by Session.List for a list kind
	// the session's identity does not declare, when the script has no
	// Undeclared func. The port asks for Class Unsupported there.
	ErrUndeclared = errors.New("portstest: list kind not declared")
	// ErrUnknownCursor is returned (wrapped) by Session.List for a cursor
	// the script has no page for.
	ErrUnknownCursor = errors.New("portstest: unknown cursor")
	// ErrSessionClosed is returned by Session.List and Session.Call after
	// Close.
	ErrSessionClosed = errors.New("portstest: session closed")
)
