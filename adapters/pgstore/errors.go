package pgstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Reasons of the *Error values this package returns. Each names its Class
// and the ports sentinel it matches with errors.Is.
const (
	// ReasonUnavailable: the database cannot be reached or failed a
	// statement (down at start, connection lost mid-operation, the Store
	// closed, ctx ended: then ctx.Err() is wrapped too). Class Transient;
	// ports.ErrUnavailable. There is never a fallback to another storage.
	ReasonUnavailable = "store_unavailable"
	// ReasonAuthRefused: the database refused the DSN's credentials.
	// Class Config; ports.ErrUnavailable.
	ReasonAuthRefused = "store_auth_refused"
	// ReasonTLSFailed: the TLS connection the DSN asks for failed (the
	// server certificate did not verify, or the server has no TLS).
	// Class Config; ports.ErrUnavailable.
	ReasonTLSFailed = "store_tls_failed"
	// ReasonConfigInvalid: the DSN cannot be parsed, or Options are
	// invalid (no Keyring, a bad Schema name). Class Config;
	// ports.ErrUnavailable.
	ReasonConfigInvalid = "store_config_invalid"
	// ReasonSchemaTooNew: the database schema was written by a newer
	// version of this package; it is never downgraded or changed. Class
	// Config; ports.ErrUnavailable.
	ReasonSchemaTooNew = "store_schema_too_new"
	// ReasonKeyringFailed: the Keyring returned an error or a malformed
	// key. Class Config; ports.ErrUnavailable.
	ReasonKeyringFailed = "store_keyring_failed"
	// ReasonKeyMismatch: a key id of the Keyring names different key bytes
	// than the ones the database's data was sealed with (a wrong key). Open
	// refuses a wrong current key; a row sealed under a key id whose
	// Keyring bytes are wrong is unreadable. Nothing is overwritten. Class
	// Config; ports.ErrCorrupt.
	ReasonKeyMismatch = "store_key_mismatch"
	// ReasonKeyUnknown: a row was sealed under a key id the Keyring does
	// not hold (retired before a Rekey finished). Class Config;
	// ports.ErrCorrupt.
	ReasonKeyUnknown = "store_key_unknown"
	// ReasonCorrupt: a row fails its authentication (edited, moved to
	// another record, forged) or cannot be decoded. Class Config;
	// ports.ErrCorrupt.
	ReasonCorrupt = "store_corrupt"
	// ReasonAuditChainBroken: the audit log's hash chain does not verify:
	// a record was edited, deleted, inserted or reordered, or a checkpoint
	// given to Verify is not in the chain. Class Config; ports.ErrCorrupt.
	ReasonAuditChainBroken = "audit_chain_broken"
	// ReasonApprovalReplayed: an approval row authenticates (the store
	// wrote it once) but is not one of the approvals the store holds now:
	// it was revoked or replaced and then put back by someone who can
	// write the database but has no key (a replay), or the approvals of a
	// server were otherwise restored from an earlier state. The row is
	// never used: List refuses the server's approvals whole. The error
	// names the server. Class Config; ports.ErrReplayed and
	// ports.ErrCorrupt.
	ReasonApprovalReplayed = "approval_replayed"
	// ReasonRolledBack: the store's state is older than a state already
	// seen: older than this Store read it before (its head went back),
	// audit records lie beyond the head of the chain, or the approvals'
	// authenticated state is missing although records written after it
	// existed show it did. Class Config; ports.ErrReplayed and
	// ports.ErrCorrupt.
	ReasonRolledBack = "store_rolled_back"
	// ReasonCheckpointPruned: Verify was given a checkpoint older than
	// the retention kept (Prune removed it). Class Config;
	// ports.ErrNotFound.
	ReasonCheckpointPruned = "audit_checkpoint_pruned"
	// ReasonNotFound: no value, approval or record. Class Config;
	// ports.ErrNotFound.
	ReasonNotFound = "not_found"
	// ReasonInvalidKey: a TokenStore or Locker key is empty or longer than
	// ports.MaxKeyLen. Class Config; ports.ErrInvalidKey.
	ReasonInvalidKey = "invalid_key"
	// ReasonValueTooLarge: a value longer than ports.MaxValueLen. Class
	// Config; ports.ErrValueTooLarge.
	ReasonValueTooLarge = "value_too_large"
	// ReasonLockTimeout: Lock's ctx ended before the lock was free. Class
	// Transient; ports.ErrLockTimeout and ctx.Err().
	ReasonLockTimeout = "lock_timeout"
	// ReasonLockLost: the lock connection dropped while the lock was held
	// (the database released the lock). Class Transient;
	// ports.ErrUnavailable.
	ReasonLockLost = "lock_lost"
)

// Error is every failure of this package: a *refusal.Error (errors.As finds
// it, so refusal.ClassOf and refusal.ReasonOf work) that also matches the
// ports sentinel its Reason names (errors.Is), and, for ReasonLockTimeout,
// ctx.Err(). Its text is fixed phrases only: it never holds a DSN, a
// password, a key, a value, a server's message or a driver error's text.
type Error struct {
	// Refusal is the typed refusal (Class, Reason, a fixed Detail).
	Refusal *refusal.Error
	// sentinel is the ports sentinel (also a second one, or nil); cause
	// is ctx.Err() or nil.
	sentinel, also error
	cause          error
}

// Error returns the refusal's text.
func (e *Error) Error() string { return e.Refusal.Error() }

// Unwrap returns the refusal, the ports sentinel and the context error, if
// any.
func (e *Error) Unwrap() []error {
	out := []error{e.Refusal, e.sentinel}
	if e.also != nil {
		out = append(out, e.also)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// reasonClass maps each Reason to its Class and sentinel.
var reasonClass = map[string]struct {
	class          refusal.Class
	sentinel, also error
}{
	ReasonUnavailable:      {class: refusal.Transient, sentinel: ports.ErrUnavailable},
	ReasonAuthRefused:      {class: refusal.Config, sentinel: ports.ErrUnavailable},
	ReasonTLSFailed:        {class: refusal.Config, sentinel: ports.ErrUnavailable},
	ReasonConfigInvalid:    {class: refusal.Config, sentinel: ports.ErrUnavailable},
	ReasonSchemaTooNew:     {class: refusal.Config, sentinel: ports.ErrUnavailable},
	ReasonKeyringFailed:    {class: refusal.Config, sentinel: ports.ErrUnavailable},
	ReasonKeyMismatch:      {class: refusal.Config, sentinel: ports.ErrCorrupt},
	ReasonKeyUnknown:       {class: refusal.Config, sentinel: ports.ErrCorrupt},
	ReasonCorrupt:          {class: refusal.Config, sentinel: ports.ErrCorrupt},
	ReasonAuditChainBroken: {class: refusal.Config, sentinel: ports.ErrCorrupt},
	ReasonApprovalReplayed: {class: refusal.Config, sentinel: ports.ErrCorrupt, also: ports.ErrReplayed},
	ReasonRolledBack:       {class: refusal.Config, sentinel: ports.ErrCorrupt, also: ports.ErrReplayed},
	ReasonCheckpointPruned: {class: refusal.Config, sentinel: ports.ErrNotFound},
	ReasonNotFound:         {class: refusal.Config, sentinel: ports.ErrNotFound},
	ReasonInvalidKey:       {class: refusal.Config, sentinel: ports.ErrInvalidKey},
	ReasonValueTooLarge:    {class: refusal.Config, sentinel: ports.ErrValueTooLarge},
	ReasonLockTimeout:      {class: refusal.Transient, sentinel: ports.ErrLockTimeout},
	ReasonLockLost:         {class: refusal.Transient, sentinel: ports.ErrUnavailable},
}

// fail returns the *Error of reason with a fixed detail phrase.
func fail(reason, detail string) *Error {
	c, ok := reasonClass[reason]
	if !ok {
		c.class, c.sentinel = refusal.Internal, ports.ErrUnavailable
	}
	return &Error{
		Refusal:  &refusal.Error{Class: c.class, Reason: reason, Detail: "pgstore: " + detail},
		sentinel: c.sentinel,
		also:     c.also,
	}
}

// failServer is fail naming the server the failure concerns.
func failServer(reason, server, detail string) *Error {
	e := fail(reason, detail)
	e.Refusal.Server = server
	return e
}

// lockTimeout returns the ReasonLockTimeout error wrapping ctx's error.
func lockTimeout(ctx context.Context) *Error {
	e := fail(ReasonLockTimeout, "lock wait ended")
	e.cause = ctx.Err()
	if e.cause == nil {
		e.cause = context.Canceled
	}
	return e
}

// dbFail maps a driver error to a fixed *Error: never its text. what is a
// fixed phrase naming the operation.
func dbFail(err error, what string) *Error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000": // invalid_password, invalid_authorization_specification
			return fail(ReasonAuthRefused, what+": the database refused the credentials")
		}
	}
	var (
		unknownCA *x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		alert     tls.AlertError
		record    tls.RecordHeaderError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &alert) || errors.As(err, &record) {
		return fail(ReasonTLSFailed, what+": TLS to the database failed")
	}
	if anyError(err, func(e error) bool { return e.Error() == "server refused TLS connection" }) {
		return fail(ReasonTLSFailed, what+": the database does not offer TLS")
	}
	e := fail(ReasonUnavailable, what+": database unavailable")
	switch {
	case errors.Is(err, context.Canceled):
		e.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		e.cause = context.DeadlineExceeded
	}
	return e
}

// anyError reports whether match holds for err or anything it wraps
// (through Unwrap() error and Unwrap() []error).
func anyError(err error, match func(error) bool) bool {
	if err == nil {
		return false
	}
	if match(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return anyError(u.Unwrap(), match)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if anyError(e, match) {
				return true
			}
		}
	}
	return false
}
