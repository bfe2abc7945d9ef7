// Package pgstore keeps mcpward's tokens, approvals, audit trail and refresh
// locks in PostgreSQL, so that many hosts on many machines share one
// sign-in per server, one set of approvals, one audit trail and one refresh
// lock per credential.
//
// A *Store returned by Open implements ports.TokenStore, ports.Locker,
// ports.ApprovalStore and ports.AuditLog (a ports.AuditQueue), with the semantics the
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
// keys still open (the store's head row stays under the key it was last
// MACed with until a Rekey). Store.Rekey re-seals every row, the head
// included, under the current key; when it reports Remaining == 0 the old
// ids may leave the Keyring.
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
// HMAC-SHA256 of both under the current key. A row inserted or edited by
// someone without the key fails that MAC (ReasonCorrupt).
//
// A row's MAC cannot tell a current approval from one the store held once,
// so the store also records which approvals it holds now: per server, a
// set (approval_sets) of each approval's identity hash and the SHA-256 of
// its record, and, in the store's head row, a sequence number every Grant
// and Revoke advances and the digest of every server's set, the whole head
// row MACed. Grant, Revoke and RemoveReplayed change a row and its set and
// the head in one transaction holding the head's row lock. List reads the
// server's rows, its set, every set's digest and the head in one statement
// and fails whole (fail closed) on anything that does not verify; such an
// approval is never matched.
//
// # Replay
//
// The threat: someone who can write the database (its owner, a backup
// restored by hand, an operator's script) but has no store key, and who
// keeps copies of rows to put them back later. What it can and cannot do:
//
//   - put back a revoked approval (issue 22's attack: save the row, wait
//     for the revoke, insert the row again), or an older grant over a
//     newer one: its row authenticates but is not in its server's set, so
//     List fails with ReasonApprovalReplayed naming the server
//     (ports.ErrReplayed), in every process; VerifyApprovals, which a
//     host's health check (mcpward doctor) calls, reports it;
//   - put back the server's set as well: the head's digest of the sets
//     differs (ReasonApprovalReplayed);
//   - put back the head row as well: the audit records appended since lie
//     beyond that head (ReasonRolledBack), and a Store that read a later
//     head refuses an older one (ReasonRolledBack) for as long as it runs;
//   - remove the head's approvals state to have Open adopt the rows anew:
//     Open adopts only when no audit record of this schema version exists
//     (ReasonRolledBack otherwise);
//   - delete an approval's row: the approval is gone (removing never
//     widens anything); List does not return it.
//
// The documented limit: rolling back everything together — the approvals,
// their sets, the head row and the end of the audit chain (every record
// appended since) — leaves a store that is consistent on its own. Every
// revoke is followed by its audit record (core/activation appends one),
// so this is rolling back the audit tail. A process that saw the later
// state refuses it; a new process cannot tell, unless the host anchors the
// chain outside the database: Verify returns the head as a Checkpoint
// (sequence number and MAC, no secret); a host that writes it where the
// database's writers cannot (its own log, a file, another system) after
// each approval change or on a schedule, and hands the last one to Verify
// at start (mcpward could do this in a host's health check), detects the
// rollback (ReasonAuditChainBroken). A rollback to a state older than the
// last checkpoint is the only one that passes.
//
// RemoveReplayed(ctx, server) removes the rows of server the store does
// not hold now (never one it holds), so a server refused for a replayed
// row can be revoked and approved again; it refuses when the sets or the
// head do not verify (the store cannot tell which rows are current).
//
// Upgrading: approvals stored by a version of this package before the
// sets existed (schema version 1) are adopted by Open, once, as the ones
// the store holds: a replay written before the upgrade is adopted with
// them. Revoke what should not be there after upgrading.
//
// # Audit
//
// The audit log is append-only: row n holds record n, the approvals'
// sequence number at the time it was appended, and the MAC HMAC(key, MAC
// of row n-1, n, record n, that sequence number); the head row holds the
// last n and its MAC. Append locks the head row, so appends from every
// machine form one chain. Records and Verify check the whole chain and
// fail with ReasonAuditChainBroken when a record was edited, deleted,
// inserted or reordered, or the head row edited. Rolling back the end of
// the chain (deleting the last records and putting back an older copy of
// the head) needs an anchor from outside the database: Verify returns the
// head as a Checkpoint, which a host may record elsewhere and hand back to
// a later Verify (see Replay).
//
// Enqueue (ports.AuditQueue) takes a record without waiting: the Store
// writes the records waiting, in one transaction on the same chain, with
// its next Append (before Append's record) or on its own at most 5 ms
// later; Flush and Close wait for that write. At most QueueLimit records
// wait at once (Enqueue refuses more with ReasonUnavailable). Records of
// one Store are stored in the order of its Append and Enqueue calls.
//
// Retention: Prune(ctx, before) removes the oldest records appended before
// a time, always a prefix of the chain and never its last record, after
// verifying it; the last removed record's number and MAC become the
// chain's base, from which the records kept still verify. Nothing is
// pruned unless the host calls Prune.
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
