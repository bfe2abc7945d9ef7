package pgstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpward/mcpward/ports"
)

// Compile-time proof that *Store implements the ports.
var (
	_ ports.TokenStore    = (*Store)(nil)
	_ ports.Locker        = (*Store)(nil)
	_ ports.ApprovalStore = (*Store)(nil)
	_ ports.AuditLog      = (*Store)(nil)
	_ ports.AuditQueue    = (*Store)(nil)
)

// Defaults of Options.
const (
	// DefaultSchema is the PostgreSQL schema the tables live in.
	DefaultSchema = "mcpward"
	// DefaultMaxConns is the size of the connection pool (the lock
	// connection is apart).
	DefaultMaxConns = 4
	// DefaultConnectTimeout bounds one connection attempt when the DSN
	// sets no connect_timeout.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultApplicationName is the application_name of the Store's
	// sessions when the DSN sets none; the lock connection adds "-lock".
	DefaultApplicationName = "mcpward"
)

// Options configures a Store. Keyring is required; every other zero value
// means the documented default.
type Options struct {
	// Keyring supplies the keys tokens are sealed with and approvals and
	// audit records authenticated with. Required.
	Keyring Keyring
	// Schema is the schema holding the tables: 1 to 63 bytes of
	// [a-z0-9_], not starting with a digit. "" means DefaultSchema.
	// Stores on the same database and schema share everything.
	Schema string
	// MaxConns is the pool size; 0 means DefaultMaxConns.
	MaxConns int32
}

// schemaName is what Options.Schema must match.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Store is a TokenStore, Locker, ApprovalStore and AuditQueue on one
// PostgreSQL database and schema. It is safe for concurrent use, and any
// number of Stores in any number of processes on any number of machines may
// share the schema. Make one with Open; the zero Store is not usable.
type Store struct {
	pool   *pgxpool.Pool
	schema string
	keys   *keys
	locks  *locker
	q      queries
	// seen is the newest head this Store verified (head.go).
	seen seen
	// aq holds the records Enqueue took until they are written
	// (auditqueue.go).
	aq *auditQueue
}

// Open connects to the database the DSN names (a libpq connection string
// or URL; TLS as its sslmode says, see the package doc), applies the
// embedded schema migrations that are missing (under an advisory lock, so
// several processes may start at once), and checks the Keyring's current
// key against the key check value stored for its id (registering it the
// first time that id is used). On a schema that has never held the
// approvals' authenticated state (one migrated from version 1, or a new
// one) it adopts the approvals stored there as the ones the store holds
// (see the package doc, Replay); it never adopts again once an audit
// record shows the state existed.
//
// It fails with an *Error: ReasonConfigInvalid for an unparsable DSN or
// invalid Options; ReasonUnavailable when the database cannot be reached
// (there is no fallback); ReasonAuthRefused or ReasonTLSFailed;
// ReasonSchemaTooNew when a newer version of this package migrated the
// schema (nothing is changed); ReasonKeyringFailed; ReasonKeyMismatch when
// the current key is not the one its id was first used with. The error
// never holds the DSN or its password. ctx bounds Open only. The caller
// closes the Store with Close.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.Keyring == nil {
		return nil, fail(ReasonConfigInvalid, "no keyring")
	}
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if !schemaName.MatchString(schema) {
		return nil, fail(ReasonConfigInvalid, "schema name must be [a-z_][a-z0-9_]*, at most 63 bytes")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fail(ReasonConfigInvalid, "the DSN cannot be parsed")
	}
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = DefaultConnectTimeout
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	if cc.RuntimeParams["application_name"] == "" {
		cc.RuntimeParams["application_name"] = DefaultApplicationName
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.MinConns = 0
	lockCfg := cc.Copy()
	lockCfg.RuntimeParams["application_name"] += "-lock"
	// Ask the server to notice a silent peer on the lock connection
	// (ignored on Unix sockets): a holder cut off by the network loses
	// its locks within about 25 s instead of the kernel default of hours.
	lockCfg.RuntimeParams["tcp_keepalives_idle"] = "10"
	lockCfg.RuntimeParams["tcp_keepalives_interval"] = "5"
	lockCfg.RuntimeParams["tcp_keepalives_count"] = "3"
	// And notice a silent server the same way on this side.
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 5 * time.Second, Count: 3}}
	lockCfg.DialFunc = d.DialContext

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fail(ReasonConfigInvalid, "the DSN cannot be used")
	}
	s := &Store{pool: pool, schema: schema, keys: &keys{ring: opts.Keyring}, q: newQueries(schema)}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, dbFail(err, "open")
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	cur, err := s.keys.current()
	if err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.verifyKey(ctx, pool, cur, true); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.adopt(ctx, cur); err != nil {
		pool.Close()
		return nil, err
	}
	s.locks = newLocker(lockCfg, schema)
	s.startAuditQueue()
	return s, nil
}

// Close writes the audit records still enqueued (see Enqueue; their write
// is bounded by 30 s and a failure is reported by Flush), then closes the
// pool and the lock connection, which releases every lock
// the Store holds (their holders' contexts are cancelled). Operations after
// Close fail with ReasonUnavailable. Safe to call more than once.
func (s *Store) Close() error {
	s.closeAuditQueue()
	s.locks.close()
	s.pool.Close()
	return nil
}

// Schema returns the schema the Store uses.
func (s *Store) Schema() string { return s.schema }

// verifyKey checks sealer's key against the key check value stored for its
// id: ReasonKeyMismatch when they differ. When no value is stored yet and
// register is set (the current key), it stores it; an old key with no
// stored value is left to its rows' authentication.
func (s *Store) verifyKey(ctx context.Context, q querier, sl *sealer, register bool) error {
	s.keys.mu.Lock()
	checked := sl.checked
	s.keys.mu.Unlock()
	if checked {
		return nil
	}
	var stored []byte
	err := q.QueryRow(ctx, s.q.keyCheck, sl.id).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		if !register {
			return nil
		}
		if _, err := q.Exec(ctx, s.q.keyRegister, sl.id, sl.check); err != nil {
			return dbFail(err, "key check")
		}
		err = q.QueryRow(ctx, s.q.keyCheck, sl.id).Scan(&stored)
	}
	if err != nil {
		return dbFail(err, "key check")
	}
	if !hmac.Equal(stored, sl.check) {
		return fail(ReasonKeyMismatch, "the keyring's key for a key id is not the one the store was sealed with")
	}
	s.keys.mu.Lock()
	sl.checked = true
	s.keys.mu.Unlock()
	return nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// opener returns the checked sealer of a row's key id, querying through q.
func (s *Store) opener(ctx context.Context, q querier, id string) (*sealer, error) {
	sl, err := s.keys.lookup(id)
	if err != nil {
		return nil, err
	}
	if err := s.verifyKey(ctx, q, sl, false); err != nil {
		return nil, err
	}
	return sl, nil
}

// sealerNow returns the checked sealer of the current key.
func (s *Store) sealerNow(ctx context.Context) (*sealer, error) {
	sl, err := s.keys.current()
	if err != nil {
		return nil, err
	}
	if err := s.verifyKey(ctx, s.pool, sl, true); err != nil {
		return nil, err
	}
	return sl, nil
}

// advisoryID derives a 64-bit advisory lock id from a purpose, the schema
// and a key.
func advisoryID(purpose, schema, key string) int64 {
	h := sha256.New()
	h.Write([]byte("mcpward pgstore " + purpose + "\x00" + schema + "\x00"))
	h.Write([]byte(key))
	return int64(binary.BigEndian.Uint64(h.Sum(nil)))
}

// queries holds the statements, with the schema quoted in.
type queries struct {
	keyCheck, keyRegister string

	tokenGet, tokenGetForUpdate, tokenUpsert, tokenDelete, tokenNotCurrent, tokenReseal string

	approvalList, approvalAll, approvalOfServerForUpdate, approvalGetForUpdate, approvalUpsert, approvalDelete, approvalNotCurrent, approvalReseal string

	setPairs, setMembers, setUpsert, setDelete, setDeleteAll, approvalRowsAll string

	headForUpdate, head, headApprovals, auditInsert, headUpdate, auditRows, auditFirstAfter, auditMacAt, auditDeleteUpTo, headBase, auditRemac, auditV2Exists string

	countNotCurrent string
}

func newQueries(schema string) queries {
	t := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	seq := t("approvals_seq")
	headSelect := `SELECT ` + headColumns + `, EXISTS (SELECT 1 FROM ` + t("audit") + ` a WHERE a.seq > h.seq) FROM ` + t("audit_head") + ` h WHERE h.id = 1`
	// Every approval in (server, grant) order, each column an array in the
	// same order, with the head and the sets: one statement, so one
	// snapshot (List reads one server's the same way).
	all := func(col string) string {
		return `ARRAY(SELECT ` + col + ` FROM ` + t("approvals") + ` ORDER BY server_hash, seq, id_hash)`
	}
	return queries{
		keyCheck:    `SELECT check_value FROM ` + t("keys") + ` WHERE key_id = $1`,
		keyRegister: `INSERT INTO ` + t("keys") + ` (key_id, check_value) VALUES ($1, $2) ON CONFLICT (key_id) DO NOTHING`,

		tokenGet:          `SELECT key_id, nonce, sealed FROM ` + t("tokens") + ` WHERE key = $1`,
		tokenGetForUpdate: `SELECT key_id, nonce, sealed FROM ` + t("tokens") + ` WHERE key = $1 FOR UPDATE`,
		tokenUpsert: `INSERT INTO ` + t("tokens") + ` (key, key_id, nonce, sealed) VALUES ($1, $2, $3, $4)
			ON CONFLICT (key) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce, sealed = EXCLUDED.sealed, updated_at = now()`,
		tokenDelete:     `DELETE FROM ` + t("tokens") + ` WHERE key = $1`,
		tokenNotCurrent: `SELECT key FROM ` + t("tokens") + ` WHERE key_id <> $1`,
		tokenReseal:     `UPDATE ` + t("tokens") + ` SET key_id = $2, nonce = $3, sealed = $4 WHERE key = $1`,

		approvalList: `SELECT ` + headColumns + `, EXISTS (SELECT 1 FROM ` + t("audit") + ` a WHERE a.seq > h.seq),
			(SELECT string_agg(server_hash || digest, ''::bytea) FROM ` + t("approval_sets") + `),
			(SELECT members FROM ` + t("approval_sets") + ` WHERE server_hash = $1),
			r.seqs, r.ids, r.records, r.keys, r.macs
			FROM ` + t("audit_head") + ` h
			CROSS JOIN LATERAL (SELECT array_agg(seq) AS seqs, array_agg(id_hash) AS ids, array_agg(record) AS records,
				array_agg(key_id) AS keys, array_agg(mac) AS macs FROM ` + t("approvals") + ` WHERE server_hash = $1) r
			WHERE h.id = 1`,
		approvalAll: `SELECT ` + headColumns + `, EXISTS (SELECT 1 FROM ` + t("audit") + ` a WHERE a.seq > h.seq),
			ARRAY(SELECT server_hash FROM ` + t("approval_sets") + ` ORDER BY server_hash), ARRAY(SELECT digest FROM ` + t("approval_sets") + ` ORDER BY server_hash),
			ARRAY(SELECT members FROM ` + t("approval_sets") + ` ORDER BY server_hash),
			` + all("id_hash") + `, ` + all("server_hash") + `, ` + all("record") + `, ` + all("key_id") + `, ` + all("mac") + `
			FROM ` + t("audit_head") + ` h WHERE h.id = 1`,
		approvalOfServerForUpdate: `SELECT id_hash, record, key_id, mac FROM ` + t("approvals") + ` WHERE server_hash = $1 ORDER BY seq, id_hash FOR UPDATE`,
		approvalGetForUpdate:      `SELECT record, key_id, mac FROM ` + t("approvals") + ` WHERE id_hash = $1 FOR UPDATE`,
		approvalUpsert: `INSERT INTO ` + t("approvals") + ` (id_hash, server_hash, seq, record, key_id, mac)
			VALUES ($1, $2, nextval('` + seq + `'), $3, $4, $5)
			ON CONFLICT (id_hash) DO UPDATE SET seq = EXCLUDED.seq, record = EXCLUDED.record, key_id = EXCLUDED.key_id, mac = EXCLUDED.mac`,
		approvalDelete:     `DELETE FROM ` + t("approvals") + ` WHERE id_hash = $1`,
		approvalNotCurrent: `SELECT id_hash FROM ` + t("approvals") + ` WHERE key_id <> $1`,
		approvalReseal:     `UPDATE ` + t("approvals") + ` SET key_id = $2, mac = $3 WHERE id_hash = $1`,
		approvalRowsAll:    `SELECT id_hash, server_hash, record, key_id, mac FROM ` + t("approvals"),

		setPairs:     `SELECT server_hash, digest FROM ` + t("approval_sets"),
		setMembers:   `SELECT members FROM ` + t("approval_sets") + ` WHERE server_hash = $1`,
		setUpsert:    `INSERT INTO ` + t("approval_sets") + ` (server_hash, members, digest) VALUES ($1, $2, $3) ON CONFLICT (server_hash) DO UPDATE SET members = EXCLUDED.members, digest = EXCLUDED.digest`,
		setDelete:    `DELETE FROM ` + t("approval_sets") + ` WHERE server_hash = $1`,
		setDeleteAll: `DELETE FROM ` + t("approval_sets"),

		headForUpdate:   headSelect + ` FOR UPDATE OF h`,
		head:            headSelect,
		headApprovals:   `UPDATE ` + t("audit_head") + ` SET approvals_seq = $1, approvals_digest = $2, key_id = $3, head_mac = $4 WHERE id = 1`,
		auditInsert:     `INSERT INTO ` + t("audit") + ` (seq, record, key_id, mac, approvals_seq) VALUES ($1, $2, $3, $4, $5)`,
		headUpdate:      `UPDATE ` + t("audit_head") + ` SET seq = $1, mac = $2, key_id = $3, head_mac = $4 WHERE id = 1`,
		auditRows:       `SELECT seq, record, key_id, mac, approvals_seq FROM ` + t("audit") + ` ORDER BY seq`,
		auditFirstAfter: `SELECT min(seq) FROM ` + t("audit") + ` WHERE appended_at >= $1`,
		auditMacAt:      `SELECT mac FROM ` + t("audit") + ` WHERE seq = $1`,
		auditDeleteUpTo: `DELETE FROM ` + t("audit") + ` WHERE seq <= $1`,
		headBase:        `UPDATE ` + t("audit_head") + ` SET base_seq = $1, base_mac = $2, key_id = $3, head_mac = $4 WHERE id = 1`,
		auditRemac:      `UPDATE ` + t("audit") + ` SET key_id = $2, mac = $3 WHERE seq = $1`,
		auditV2Exists:   `SELECT EXISTS (SELECT 1 FROM ` + t("audit") + ` WHERE approvals_seq IS NOT NULL)`,

		countNotCurrent: `SELECT (SELECT count(*) FROM ` + t("tokens") + ` WHERE key_id <> $1)
			+ (SELECT count(*) FROM ` + t("approvals") + ` WHERE key_id <> $1)
			+ (SELECT count(*) FROM ` + t("audit") + ` WHERE key_id <> $1)
			+ (SELECT count(*) FROM ` + t("audit_head") + ` WHERE key_id IS DISTINCT FROM $1)`,
	}
}
