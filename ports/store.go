package ports

import (
	"context"
	"errors"
	"time"
)

// Sentinels returned by the store ports. Implementations return them (or
// wrap them so errors.Is matches); they carry no key or value.
var (
	// ErrNotFound: the key, approval or record does not exist.
	ErrNotFound = errors.New("mcpward: not found")
	// ErrInvalidKey: the key is empty or longer than MaxKeyLen bytes.
	ErrInvalidKey = errors.New("mcpward: invalid key")
	// ErrValueTooLarge: the value is longer than the store can keep
	// (every store keeps at least MaxValueLen bytes).
	ErrValueTooLarge = errors.New("mcpward: value too large")
	// ErrCorrupt: stored data exists but cannot be read back as written.
	// The store never repairs, overwrites or deletes such data by itself.
	ErrCorrupt = errors.New("mcpward: stored data corrupt")
	// ErrUnavailable: the backing store (a keychain, a directory) is locked,
	// missing or refused access. A store never falls back to a weaker
	// storage when it is unavailable.
	ErrUnavailable = errors.New("mcpward: store unavailable")
	// ErrLockTimeout: Locker.Lock could not take the lock before its
	// context ended. The caller must treat this as "not locked" and fail
	// closed.
	ErrLockTimeout = errors.New("mcpward: lock wait timed out")
	// ErrReplayed: stored data authenticates (it was written by the store
	// once) but is not what the store holds now: a record put back after
	// it was removed or replaced (a replay by someone who can write the
	// backing store but has no key), or the store's state rolled back. A
	// store that returns it also matches ErrCorrupt, and never uses such
	// data.
	ErrReplayed = errors.New("mcpward: stored data replayed")
)

// MaxKeyLen is the longest key (in bytes) every TokenStore and Locker must
// accept. A key is any non-empty byte string up to this length, including
// '/', "..", NUL and non-UTF-8 bytes; a store encodes it so no key can escape
// or alias another.
const MaxKeyLen = 1024

// MaxValueLen is the largest value (in bytes) every TokenStore must keep.
const MaxValueLen = 16 << 10

// TokenStore keeps opaque byte values (serialized credentials) by key.
//
// Implementations are safe for concurrent use by multiple goroutines, and a
// value written through one handle is visible to every other handle on the
// same backing store (in this process or another) once Set returns. A Set is
// atomic: a reader sees the old value or the new one, never a mix. The store
// does no coordination beyond that; read-modify-write sequences (token
// refresh) are serialized by the caller with a Locker.
type TokenStore interface {
	// Get returns a copy of the value stored under key: ErrNotFound when
	// there is none, ErrInvalidKey, ErrCorrupt or ErrUnavailable.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores a copy of value under key, replacing any previous value:
	// ErrInvalidKey, ErrValueTooLarge, ErrUnavailable, or ErrCorrupt when
	// the stored data under key is unreadable (a store never overwrites
	// corrupt data silently; Delete removes it explicitly).
	Set(ctx context.Context, key string, value []byte) error
	// Delete removes key: ErrNotFound when there is none, ErrInvalidKey or
	// ErrUnavailable.
	Delete(ctx context.Context, key string) error
}

// Locker is a lock by key that excludes every holder of the same key on the
// same backing store, across goroutines and across OS processes.
//
// Lock waits until the lock is free or ctx ends, so the caller bounds the
// wait with a deadline. A holder that dies (even by SIGKILL) releases its
// locks. Locks are not reentrant: a second Lock of a held key by the same
// process waits like any other. Safe for concurrent use.
type Locker interface {
	// Lock takes the lock for key. On success it returns the function that
	// releases it (idempotent; later calls return nil). It returns
	// ErrLockTimeout when ctx ends first (ctx.Err() is wrapped as well),
	// ErrInvalidKey or ErrUnavailable.
	Lock(ctx context.Context, key string) (unlock func() error, err error)
}

// Tier names a configuration source's precedence tier, highest first:
// managed, local, project, user, plugin.
type Tier string

// The tiers, highest precedence first.
const (
	TierManaged Tier = "managed"
	TierLocal   Tier = "local"
	TierProject Tier = "project"
	TierUser    Tier = "user"
	TierPlugin  Tier = "plugin"
)

// Tiers lists every tier, highest precedence first.
var Tiers = []Tier{TierManaged, TierLocal, TierProject, TierUser, TierPlugin}

// Identity is everything an activation decision is bound to. Two identities
// match only when every field is equal (package core/activation does the
// matching; stores only keep and return them).
type Identity struct {
	// ServerID is the definition's name.
	ServerID string `json:"serverId"`
	// Tier and Origin are the definition's provenance: its tier and the
	// host-given label (a file path, a plugin id) of the source it won from.
	Tier   Tier   `json:"tier"`
	Origin string `json:"origin"`
	// Fingerprint is the definition fingerprint (lowercase hex sha256).
	Fingerprint string `json:"fingerprint"`
	// Security is the security identity: the activation endpoint (the
	// canonical URL or the command a definition runs), secrets masked.
	Security string `json:"security"`
	// Repository and Generation are the workspace facts for sources outside
	// managed and user; both are "" for managed and user sources.
	Repository string `json:"repository,omitempty"`
	Generation string `json:"generation,omitempty"`
}

// Approval is a grant bound to one exact Identity.
type Approval struct {
	Identity  Identity  `json:"identity"`
	GrantedAt time.Time `json:"grantedAt"`
	// GrantedBy is a display label of who granted it ("cli", a user name).
	GrantedBy string `json:"grantedBy,omitempty"`
}

// ApprovalStore keeps approvals. It only stores and returns them; deciding
// whether one matches is core/activation's job, so a store cannot widen an
// approval by matching loosely.
//
// Safe for concurrent use; grants and revokes from several handles or
// processes on the same backing store are never lost.
type ApprovalStore interface {
	// List returns every approval whose Identity.ServerID equals serverID,
	// oldest first (nil, nil when there is none): ErrCorrupt or
	// ErrUnavailable.
	List(ctx context.Context, serverID string) ([]Approval, error)
	// Grant adds a, replacing an approval with an identical Identity:
	// ErrUnavailable or ErrCorrupt (an unreadable store is never replaced).
	Grant(ctx context.Context, a Approval) error
	// Revoke removes the approval with exactly this identity: ErrNotFound
	// when there is none, ErrUnavailable or ErrCorrupt.
	Revoke(ctx context.Context, id Identity) error
}

// ApprovalVerifier is implemented by an ApprovalStore that can tell the
// approvals it holds now from approvals it held once (an approval revoked,
// then put back by someone who can write the backing store but has no
// key). A host's health check (mcpward doctor) asks it; List already
// refuses such an approval. Safe for concurrent use.
type ApprovalVerifier interface {
	// VerifyApprovals checks every approval the store keeps, of every
	// server: nil when each is one the store holds now; ErrReplayed (and
	// ErrCorrupt) naming the first server found with a replayed approval,
	// ErrCorrupt or ErrUnavailable otherwise.
	VerifyApprovals(ctx context.Context) error
	// RemoveReplayed removes the approvals of serverID that VerifyApprovals
	// refuses (never one the store holds now: removing never widens
	// anything) and returns how many it removed: ErrCorrupt when the store
	// cannot tell which are current, ErrUnavailable.
	RemoveReplayed(ctx context.Context, serverID string) (int, error)
}

// AuditAction names what an audit record records.
type AuditAction string

// The audit actions.
const (
	AuditGrant  AuditAction = "grant"
	AuditRevoke AuditAction = "revoke"
	AuditDecide AuditAction = "decide"
	// AuditCall records one tool call a host forwarded for a client (the
	// mcpward serve gateway), in two records: one when the call starts
	// (Outcome "started"; Reason's words call, tool, args_bytes) and one
	// of its outcome (Outcome "ok", "tool_error" or "refused"; Reason's
	// words call, tool, ms, args_bytes, result_bytes, and the refusal's
	// reason word when refused). Identity.ServerID is the server, Reason
	// the call's facts as space-separated key=value words, and the call
	// word, the same in both, ties them. Its arguments and result are
	// never recorded, not even hashed.
	AuditCall AuditAction = "call"
)

// AuditRecord is one secret-free line of the audit trail: who, what, when,
// why, and the identity it concerns. It never holds a configuration value.
type AuditRecord struct {
	Time     time.Time   `json:"time"`
	Action   AuditAction `json:"action"`
	Identity Identity    `json:"identity"`
	// Outcome is "allowed", "denied", "granted" or "revoked".
	Outcome string `json:"outcome"`
	// Reason is a stable word (core/activation's decision reasons).
	Reason string `json:"reason,omitempty"`
	// Actor is a display label of who acted ("host", "cli").
	Actor string `json:"actor,omitempty"`
}

// AuditLog is an append-only log of AuditRecords.
//
// Safe for concurrent use; appends from several handles or processes on the
// same backing store are all kept, each record whole.
type AuditLog interface {
	// Append adds r at the end: ErrUnavailable.
	Append(ctx context.Context, r AuditRecord) error
	// Records returns every record in append order: ErrCorrupt (with no
	// records) when any stored record cannot be read, or ErrUnavailable.
	Records(ctx context.Context) ([]AuditRecord, error)
}

// AuditQueue is an AuditLog that can also take a record without waiting
// for it to be stored: for a record a host need not wait for before it
// answers (the outcome of a forwarded call, appended after the call's own
// record was made durable). A host tests for it with a type assertion and
// appends with Append where it does not implement it.
//
// Durability: a record passed to Append is durable when Append returns
// nil. A record passed to Enqueue is durable once a later Flush on the
// same handle returns nil; until then a crash may lose it (the handle
// writes it with its next write: a later Append's, or one it makes on its
// own shortly after, a few milliseconds at most). Records appended and
// enqueued through one handle are stored in the order of the calls.
//
// Safe for concurrent use.
type AuditQueue interface {
	AuditLog
	// Enqueue takes r to be stored after every record this handle
	// appended or enqueued before it, and returns without waiting for the
	// write: ErrUnavailable when r cannot be taken (the handle is closed,
	// r cannot be encoded). A failure of the later write is reported by
	// the next Flush.
	Enqueue(r AuditRecord) error
	// Flush returns once every record enqueued on this handle before the
	// call is durable: nil; ErrUnavailable when one could not be written
	// since the last Flush (it is lost), or when ctx ends first (ctx.Err()
	// wrapped too).
	Flush(ctx context.Context) error
}
