package mcpserve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"
)

// Sealed request states. A round serve hands on to a client on 2026-07-28
// or later (handon.go) ends in an input_required result whose
// requestState is serve's own: the upstream's request state, the server
// and the request it belongs to and an expiry, sealed with an HMAC-SHA256
// under a key drawn when the Server is made (never written anywhere; a
// restarted serve refuses the states of the one before). The client
// echoes it; serve opens it, and only a state it sealed, unexpired, for
// the same server, method and name is forwarded: the upstream then gets
// its own state back byte for byte. Nothing is held in memory between
// rounds.
//
// Layout (before base64url, no padding, after sealedPrefix):
//
//	version (1) | expiry, Unix ms (8) | len+server | len+method | len+name
//	| len+upstream state | HMAC-SHA256 of all before (32)
//
// each len a big-endian uint32.

// sealedPrefix starts every sealed state (a parked call's state, mrtr.go,
// never has it).
const sealedPrefix = "mws1."

// sealVersion is the layout's version byte.
const sealVersion = 1

// MaxSealedState bounds the length of a requestState serve opens: an
// upstream state of at most MaxUpstreamState bytes with its server,
// method and name, sealed, with room to spare. A longer one is refused
// before it is decoded.
const MaxSealedState = 4*(MaxUpstreamState+3*maxSealedName+64)/3 + len(sealedPrefix)

// MaxUpstreamState bounds an upstream's request state serve seals (the
// bound a session puts on the states it holds).
const MaxUpstreamState = 256 << 10

// maxSealedName bounds a server id, method or name in a sealed state.
const maxSealedName = 1024

// Reasons of a refused requestState (a JSON-RPC error, invalid params).
const (
	// ReasonStateInvalid: not a state this serve sealed, or altered.
	ReasonStateInvalid = "request_state_invalid"
	// ReasonStateExpired: sealed, but past its expiry.
	ReasonStateExpired = "request_state_expired"
	// ReasonStateMismatch: sealed for another server, method or name.
	ReasonStateMismatch = "request_state_mismatch"
	// ReasonStateTooLarge: longer than MaxSealedState.
	ReasonStateTooLarge = "request_state_too_large"
)

// stateError is a refused requestState, by its reason.
type stateError struct{ reason string }

func (e *stateError) Error() string {
	return "mcpward: the requestState is refused (" + e.reason + ")"
}

// sealedState is what a sealed requestState binds.
type sealedState struct {
	Server, Method, Name string
	Upstream             string // the upstream's request state, verbatim
	Expiry               time.Time
}

// sealer seals and opens request states under one key.
type sealer struct {
	key [32]byte
	now func() time.Time
}

// newSealer draws a fresh key (crypto/rand.Read never fails: it crashes
// the program when the system has no randomness to give).
func newSealer(now func() time.Time) *sealer {
	s := &sealer{now: now}
	_, _ = rand.Read(s.key[:])
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// seal returns st sealed; an error when a field is over its bound.
func (s *sealer) seal(st sealedState) (string, error) {
	if len(st.Upstream) > MaxUpstreamState || len(st.Server) > maxSealedName || len(st.Method) > maxSealedName || len(st.Name) > maxSealedName {
		return "", &stateError{ReasonStateTooLarge}
	}
	b := make([]byte, 0, 1+8+16+len(st.Server)+len(st.Method)+len(st.Name)+len(st.Upstream)+sha256.Size)
	b = append(b, sealVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(st.Expiry.UnixMilli()))
	for _, f := range []string{st.Server, st.Method, st.Name, st.Upstream} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	m := hmac.New(sha256.New, s.key[:])
	m.Write(b)
	b = m.Sum(b)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// sealed reports whether tok is in the sealed format (whether or not it
// opens).
func sealed(tok string) bool { return strings.HasPrefix(tok, sealedPrefix) }

// open checks tok and returns what it binds: a *stateError when it is too
// long, not sealed under s's key (or altered in any byte), or expired.
// The caller compares server, method and name.
func (s *sealer) open(tok string) (sealedState, error) {
	if len(tok) > MaxSealedState {
		return sealedState{}, &stateError{ReasonStateTooLarge}
	}
	raw, ok := strings.CutPrefix(tok, sealedPrefix)
	if !ok {
		return sealedState{}, &stateError{ReasonStateInvalid}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(raw)
	if err != nil || len(b) < 1+8+16+sha256.Size {
		return sealedState{}, &stateError{ReasonStateInvalid}
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	m := hmac.New(sha256.New, s.key[:])
	m.Write(body)
	if !hmac.Equal(m.Sum(nil), sum) {
		return sealedState{}, &stateError{ReasonStateInvalid}
	}
	// Sealed by this key: the layout is this serve's own, but it is
	// still read with every length checked.
	if body[0] != sealVersion {
		return sealedState{}, &stateError{ReasonStateInvalid}
	}
	var st sealedState
	st.Expiry = time.UnixMilli(int64(binary.BigEndian.Uint64(body[1:9])))
	rest := body[9:]
	fields := [4]*string{&st.Server, &st.Method, &st.Name, &st.Upstream}
	for _, f := range fields {
		if len(rest) < 4 {
			return sealedState{}, &stateError{ReasonStateInvalid}
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return sealedState{}, &stateError{ReasonStateInvalid}
		}
		*f, rest = string(rest[:n]), rest[n:]
	}
	if len(rest) != 0 {
		return sealedState{}, &stateError{ReasonStateInvalid}
	}
	if !s.now().Before(st.Expiry) {
		return sealedState{}, &stateError{ReasonStateExpired}
	}
	return st, nil
}

// errStateMismatch is open's result's refusal when it was sealed for
// another request.
var errStateMismatch error = &stateError{ReasonStateMismatch}

// stateReason returns the reason word of a refused state, "" for another
// error.
func stateReason(err error) string {
	var se *stateError
	if errors.As(err, &se) {
		return se.reason
	}
	return ""
}
