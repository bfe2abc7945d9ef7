// Package pgstore keeps mcpward's tokens, approvals, audit trail and refresh
// locks in PostgreSQL, so that many hosts on many machines share one
// sign-in per server, one set of approvals, one audit trail and one refresh
// lock per credential.
//
// A *Store returned by Open implements ports.TokenStore, ports.Locker,
// ports.ApprovalStore and ports.AuditLog, with the semantics the
// conformance suites of module github.com/mcpward/mcpward/conformance check
// (RunTokenStore, RunLocker, RunApprovalStore, RunAuditLog). Every Store
// opened on the same database and schema shares one backing store.
//
// # Connecting
//
// Open takes a libpq DSN ("host=db.example.com dbname=mcpward user=agent
// sslmode=verify-full sslrootcert=/etc/mcpward/db-ca.pem") or URL
// ("postgres://agent@db.example.com/mcpward?sslmode=verify-full"). TLS is
// what the DSN's sslmode asks, as libpq defines it: use sslmode=verify-full
// (with sslrootcert naming the CA that signed the server's certificate)
// for any database reached over a network — it encrypts and checks that the
// certificate names the host; require encrypts without checking who
// answers; prefer (libpq's default) and disable may send everything in the
// clear. A failed verification is ReasonTLSFailed. A Unix-socket host
// ("host=/run/postgresql") needs no TLS.
//
// The DSN may carry a password (or the driver reads PGPASSWORD or a
// .pgpass file). The password is a secret: no error of this package holds
// the DSN or any part of it, nor a driver or server message; errors are
// fixed phrases (see Error).
//
// Sessions carry application_name "mcpward" (the lock connection
// "mcpward-lock") unless the DSN sets one. A Store holds a pool of at most
// Options.MaxConns connections plus one lock connection. Connect directly
// or through a pooler in session mode: a transaction-mode pooler breaks
// session-level advisory locks.
//
// The database role needs, the first time, CREATE on the database (for the
// schema) or an existing schema it owns.
//
// # Schema and migrations
//
// The tables live in Options.Schema (default "mcpward"). The schema and its
// tables are created by embedded, versioned migrations (migrations/*.sql;
// the applied versions are recorded in schema_migrations) that Open applies
// when they are missing, in one transaction holding an advisory lock of the
// schema: processes that start at the same time apply each migration once,
// the others wait and find nothing to do. A schema at a version above
// SchemaVersion (written by a newer mcpward) is refused with
// ReasonSchemaTooNew and never changed or downgraded.
//
// # Keys
//
// The host supplies keys through a Keyring (its key port): the id and
// 32-byte key of the current key, and a lookup of older ids. mcpward never
// takes a key from a definition, a flag value or the DSN. Each key yields,
// by HKDF-SHA256, three independent subkeys: one seals tokens, one
// authenticates approvals and audit records, one makes a key check value.
//
// The key check value of each key id is stored in the keys table the
// first time the id is the current key. Open refuses a current key whose
// check value differs (ReasonKeyMismatch): a host started with a wrong key
// reads nothing and writes nothing. A row sealed under an older id whose
// Keyring bytes are wrong fails the same way; a row under an id the Keyring
// does not hold fails with ReasonKeyUnknown.
//
// Rotation: give the Keyring a new current key and keep the old ones for
// Lookup. New writes are sealed with the new key at once; rows under old
// keys still open. Store.Rekey re-seals every row under the current key;
// when it reports Remaining == 0 the old ids may leave the Keyring.
//
// # Tokens
//
// A token row holds the key (the record's identity, exact bytes), the key
// id, a random 96-bit nonce and the AES-256-GCM sealing of the value with
// the additional data (format, key id, key). A row edited, or copied or
// moved onto another key's row or key id, fails to open (ReasonCorrupt,
// wrapping ports.ErrCorrupt). Set never replaces a row it cannot open;
// Delete, an explicit request, removes whatever is there.
//
// # Approvals
//
// One row per exact identity (its primary key is the SHA-256 of the
// identity's canonical encoding, so two identities share a row only when
// every field is equal), with the approval's binary encoding and an
// HMAC-SHA256 of both under the current key. List authenticates every row
// it returns and fails whole (ReasonCorrupt) on a forged or edited one, so
// a row inserted by someone without the key is never matched.
//
// # Audit
//
// The audit log is append-only: row n holds record n and the MAC
// HMAC(key, MAC of row n-1, n, record n); the head row holds the last n and
// its MAC. Append locks the head row, so appends from every machine form one
// chain. Records and Verify check the whole chain and fail with
// ReasonAuditChainBroken when a record was edited, deleted, inserted or
// reordered. Rolling back the end of the chain (deleting the last records
// and the head together) needs an anchor from outside the database:
// Verify returns the head as a Checkpoint, which a host may record
// elsewhere and hand back to a later Verify.
//
// Retention: Prune(ctx, before) removes the oldest records appended before
// a time, always a prefix of the chain, after verifying it; the last removed
// record's number and MAC become the chain's base, from which the records
// kept still verify. Nothing is pruned unless the host calls Prune.
//
// # Locks
//
// Lock takes a session-level advisory lock (a 64-bit id derived from the
// schema and the key by SHA-256) on the Store's lock connection, a session
// of its own apart from the pool; the lock lives exactly as long as that
// session. A process that dies, even by SIGKILL, releases its locks when
// the server sees its connection close. While locks are held the Store
// waits on the lock connection's socket, so a session the server ends
// (pg_terminate_backend, a restart, a failover) is noticed at once: Hold's
// contexts are cancelled with ErrLockLost, and unlock returns ErrLockLost.
// A connection cut by the network is noticed by TCP keepalives (set on both
// sides of the lock connection) within about 25 seconds.
//
// A holder that lost its lock may still be running. The refresh rules of
// mcpward's OAuth client keep such a late writer harmless with nothing but
// this store's semantics: under the lock it re-reads the credential, and
// after its token request it saves only when the store still holds the
// credential it spent (a credential someone else rotated in is adopted,
// never overwritten), and it deletes only the credential whose refresh
// token was refused.
//
// # Shared across machines
//
// Everything in the schema is shared by every Store on it:
//
//   - tokens, by key: the OAuth client keys a credential by server id and
//     canonical URL, so every machine whose definition has the same name and
//     URL uses (and refreshes, once) the same sign-in;
//   - the audit trail, always one chain;
//   - refresh locks, by key;
//   - approvals, stored for everyone but matched only by an exact
//     identity: the server id, tier, origin, fingerprint and security
//     identity, and for project, local and plugin sources the repository
//     and workspace generation. Origin is the host's label of the source
//     (often a file path, which differs between machines with different
//     checkouts) and the generation is the host's trust state of one
//     workspace, so such approvals usually hold on the machine that granted
//     them; managed and user sources carry no workspace facts and are shared
//     whenever the origin label is the same.
//
// What stays local to each machine: the definitions themselves, workspace
// trust, the process authority's decisions and everything a stdio server
// does.
//
// # Errors
//
// Every error is an *Error: a *refusal.Error (Class, a Reason constant of
// this package, a fixed Detail) that also matches a ports sentinel with
// errors.Is.
package pgstore
