// Package refusal defines mcpward's typed, secret-free errors.
//
// Every failure mcpward reports to a host is (or wraps) an *Error. A caller
// branches on its Class (with ClassOf or errors.As) and may show its Reason,
// a stable lower_snake_case word. An Error carries the server id and at most
// an origin ("scheme://host:port"); it never carries a path, query string,
// header value, environment value, argv element or stderr text, so it can be
// logged, audited and printed as is.
//
// Errors from lower layers (the SDK, net/http, os/exec) are mapped to an
// *Error by the adapter that sees them; they are never wrapped raw, because
// their text embeds full URLs and command lines.
package refusal

import (
	"errors"
	"strings"
)

// Class is what a caller branches on. The zero value is Internal.
type Class int

const (
	// Internal is a bug or an impossible state in mcpward itself.
	Internal Class = iota
	// Transient may succeed if retried later (network hiccup, 5xx, timeout).
	// The supervisor retries only this class.
	Transient
	// AuthRequired means the server needs a credential the host has not
	// provided yet (sign in, then retry).
	AuthRequired
	// AuthRefused means a credential was presented and refused, after the
	// one permitted fresh retry.
	AuthRefused
	// Refused means a policy said no: egress, process authority, activation,
	// a redirect, a definition feature that is refused by name.
	Refused
	// Unsupported means the definition asks for something this version does
	// not do (a deprecated transport, an authentication it cannot perform).
	Unsupported
	// Protocol means the peer broke the protocol (bad version, oversized
	// message, malformed reply).
	Protocol
	// Config means the host's input is malformed (a definition, a document,
	// an argument).
	Config
	// None is no class: the Class of a status that holds no failure (a
	// connected server's, say), so that such a status never reads as
	// Internal, the zero value. No *Error carries it.
	None
)

var classNames = [...]string{
	Internal:     "internal",
	Transient:    "transient",
	AuthRequired: "auth_required",
	AuthRefused:  "auth_refused",
	Refused:      "refused",
	Unsupported:  "unsupported",
	Protocol:     "protocol",
	Config:       "config",
	None:         "none",
}

// String returns the stable lower_snake_case name of c.
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "internal"
	}
	return classNames[c]
}

// MarshalText implements encoding.TextMarshaler with String's word.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Error is a typed, secret-free refusal or failure.
//
// Construct it with New (or a literal); its fields are exported so a host
// can render them, and every field is safe to print.
type Error struct {
	// Class is what a caller branches on.
	Class Class
	// Reason is a stable lower_snake_case word such as "redirect_refused".
	Reason string
	// Server is the server id (the definition's name), or "" when none applies.
	Server string
	// Origin is "scheme://host:port" of the peer, or "" when none applies.
	// It is never a path, query, userinfo or command.
	Origin string
	// Detail is an optional, secret-free phrase chosen by mcpward code. It
	// may name what the user or model needs to act on — a property path or
	// argument name a server declared, a server's own error message — but
	// only escaped under core/textsafe's rule and cut to a bound, and never
	// a host value (a secret, header, env value, argv element), an
	// argument's value or raw stderr text.
	Detail string
}

// New returns an *Error with the given class, reason and server id.
func New(class Class, reason, server string) *Error {
	return &Error{Class: class, Reason: reason, Server: server}
}

// WithOrigin returns a copy of e carrying origin.
func (e *Error) WithOrigin(origin string) *Error {
	c := *e
	c.Origin = origin
	return &c
}

// Error renders "mcpward: <class>: <reason> (server "<id>", origin <origin>): <detail>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mcpward: ")
	b.WriteString(e.Class.String())
	b.WriteString(": ")
	if e.Reason == "" {
		b.WriteString("unspecified")
	} else {
		b.WriteString(e.Reason)
	}
	if e.Server != "" || e.Origin != "" {
		b.WriteString(" (")
		if e.Server != "" {
			b.WriteString("server ")
			b.WriteString(quote(e.Server))
		}
		if e.Origin != "" {
			if e.Server != "" {
				b.WriteString(", ")
			}
			b.WriteString("origin ")
			b.WriteString(e.Origin)
		}
		b.WriteString(")")
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is reports whether target is an *Error with the same Class and Reason, so
// errors.Is(err, refusal.New(refusal.Refused, "redirect_refused", "")) works
// regardless of server and origin.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Class == e.Class && t.Reason == e.Reason
}

// ClassOf returns the Class of the first *Error in err's chain, Internal when
// err is non-nil and carries none, and Internal for nil (callers check nil
// first).
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return Internal
}

// ReasonOf returns the Reason of the first *Error in err's chain, or "" when
// there is none.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// quote renders a server id for display, replacing control characters so
// an id cannot forge log lines.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString("?")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
