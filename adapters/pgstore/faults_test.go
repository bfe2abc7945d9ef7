package pgstore_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// requireReason fails t unless err is a *pgstore.Error of reason and class
// that matches sentinel.
func requireReason(t testing.TB, err error, reason string, class refusal.Class, sentinel error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	var pe *pgstore.Error
	require.ErrorAs(t, err, &pe, msgAndArgs...)
	assert.Equal(t, reason, refusal.ReasonOf(err), msgAndArgs...)
	assert.Equal(t, class, refusal.ClassOf(err), msgAndArgs...)
	if sentinel != nil {
		assert.ErrorIs(t, err, sentinel, msgAndArgs...)
	}
}

// table returns the quoted name of a table of schema.
func table(schema, name string) string { return pgx.Identifier{schema, name}.Sanitize() }

// snapshot returns every row of every table of schema, as text, so a test
// can show that nothing changed.
func snapshot(t *testing.T, schema string) string {
	t.Helper()
	a := admin(t)
	var b strings.Builder
	for _, tbl := range []string{"schema_migrations", "keys", "tokens", "approvals", "approval_sets", "audit", "audit_head"} {
		rows, err := a.Query(t.Context(), `SELECT to_jsonb(x)::text FROM `+table(schema, tbl)+` x ORDER BY 1`)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		fmt.Fprintf(&b, "%s: %s\n", tbl, strings.Join(lines, "\n"))
	}
	return b.String()
}

// TestOpenDatabaseDown: no server at the DSN's address is a named
// store_unavailable at once (Transient, ports.ErrUnavailable), with no
// fallback, and the DSN's password is in no form of the error.
func TestOpenDatabaseDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for name, dsn := range map[string]string{
		"socket": "host=" + t.TempDir() + " port=5432 user=agent dbname=mcpward password=" + pwSecret,
		"tcp":    "postgres://agent:" + pwSecret + "@127.0.0.1:1/mcpward?sslmode=disable",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := pgstore.Open(ctx, dsn, pgstore.Options{Keyring: testRing(t)})
			require.Nil(t, s)
			requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
			assertNoSecret(t, err, pwSecret)
		})
	}
}

// assertNoSecret fails t when secret appears in any rendering of err.
func assertNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	for _, form := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		assert.NotContains(t, fmt.Sprintf(form, err), secret, "the error rendered with %s shows the password", form)
	}
	for e := range allErrors(err) {
		assert.NotContains(t, fmt.Sprintf("%#v", e), secret, "a wrapped error shows the password")
	}
}

// allErrors yields err and everything it wraps.
func allErrors(err error) func(func(error) bool) {
	return func(yield func(error) bool) {
		var walk func(error) bool
		walk = func(e error) bool {
			if e == nil {
				return true
			}
			if !yield(e) {
				return false
			}
			switch u := e.(type) {
			case interface{ Unwrap() error }:
				return walk(u.Unwrap())
			case interface{ Unwrap() []error }:
				for _, x := range u.Unwrap() {
					if !walk(x) {
						return false
					}
				}
			}
			return true
		}
		walk(err)
	}
}

// TestPasswordIsASecret: a wrong password is store_auth_refused, an
// unparsable DSN store_config_invalid, and neither error (nor a
// successful Store's) shows the password; the right password over SCRAM
// works.
func TestPasswordIsASecret(t *testing.T) {
	needPG(t)
	ctx := t.Context()
	host, port := dsnField(testDSN, "host"), dsnField(testDSN, "port")
	base := "host=" + host + " port=" + port + " dbname=" + testDB + " user=" + pwUser + " sslmode=disable"

	_, err := pgstore.Open(ctx, base+" password=wrong-"+pwSecret, pgstore.Options{Keyring: testRing(t), Schema: newSchema()})
	requireReason(t, err, pgstore.ReasonAuthRefused, refusal.Config, ports.ErrUnavailable)
	assertNoSecret(t, err, pwSecret)

	_, err = pgstore.Open(ctx, "postgres://"+pwUser+":"+pwSecret+"@["+"/mcpward", pgstore.Options{Keyring: testRing(t)})
	requireReason(t, err, pgstore.ReasonConfigInvalid, refusal.Config, ports.ErrUnavailable)
	assertNoSecret(t, err, pwSecret)

	_, err = pgstore.Open(ctx, base+" password="+pwSecret+" connect_timeout=notanumber", pgstore.Options{Keyring: testRing(t)})
	requireReason(t, err, pgstore.ReasonConfigInvalid, refusal.Config, ports.ErrUnavailable)
	assertNoSecret(t, err, pwSecret)

	schema := newSchema()
	a := admin(t)
	_, err = a.Exec(ctx, "CREATE SCHEMA "+schema+" AUTHORIZATION "+pwUser)
	require.NoError(t, err)
	s, err := pgstore.Open(ctx, base+" password="+pwSecret, pgstore.Options{Keyring: testRing(t), Schema: schema})
	require.NoError(t, err, "the right password over SCRAM, in a schema an administrator created")
	defer s.Close()
	require.NoError(t, s.Set(ctx, "k", []byte("v")))
	_, err = s.Get(ctx, "missing")
	requireReason(t, err, pgstore.ReasonNotFound, refusal.Config, ports.ErrNotFound)
	assertNoSecret(t, err, pwSecret)
}

// dsnField returns the value of key in a key=value DSN.
func dsnField(dsn, key string) string {
	for f := range strings.FieldsSeq(dsn) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestTLS: sslmode=verify-full against the server's CA works (the cluster
// takes TCP only over TLS); against another CA it is store_tls_failed, and
// a plaintext TCP connection is refused by the server.
func TestTLS(t *testing.T) {
	needPG(t)
	ctx := t.Context()
	good := tlsBase + " user=" + adminUser + " sslmode=verify-full sslrootcert=" + caFile
	s, err := pgstore.Open(ctx, good, pgstore.Options{Keyring: testRing(t), Schema: newSchema()})
	require.NoError(t, err, "verify-full with the CA that signed the server's certificate")
	require.NoError(t, s.Set(ctx, "k", []byte("over TLS")))
	u, err := s.Lock(ctx, "k")
	require.NoError(t, err, "the lock connection follows the DSN's TLS too")
	require.NoError(t, u())
	require.NoError(t, s.Close())

	other := t.TempDir() + "/other-ca.crt"
	require.NoError(t, writeOtherCA(other))
	_, err = pgstore.Open(ctx, tlsBase+" user="+adminUser+" sslmode=verify-full sslrootcert="+other,
		pgstore.Options{Keyring: testRing(t), Schema: newSchema()})
	requireReason(t, err, pgstore.ReasonTLSFailed, refusal.Config, ports.ErrUnavailable, "a server certificate from another CA")

	_, err = pgstore.Open(ctx, tlsBase+" user="+adminUser+" sslmode=disable",
		pgstore.Options{Keyring: testRing(t), Schema: newSchema()})
	requireReason(t, err, pgstore.ReasonAuthRefused, refusal.Config, ports.ErrUnavailable, "plaintext TCP has no pg_hba entry")
}

// TestConnectionLostMidOperation: a Set whose session is terminated while it
// waits inside its transaction fails with store_unavailable and changes
// nothing; the pool replaces the session and the next Set works.
func TestConnectionLostMidOperation(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, "k", []byte("old")))

	a := admin(t)
	tx, err := a.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM `+table(schema, "tokens")+` FOR UPDATE`)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- s.Set(ctx, "k", []byte("new")) }()
	var pid int
	require.Eventually(t, func() bool {
		err := admin(t).QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE application_name = 'mcpward' AND wait_event_type = 'Lock' AND datname = $1`, testDB).Scan(&pid)
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "the Set waits on the row lock")
	_, err = admin(t).Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
	require.NoError(t, err)
	select {
	case err := <-done:
		requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
	case <-time.After(20 * time.Second):
		t.Fatal("Set did not return after its session was terminated")
	}
	require.NoError(t, tx.Rollback(ctx))
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "old", string(got), "the interrupted Set changed nothing")
	require.NoError(t, s.Set(ctx, "k", []byte("new")), "the pool replaced the terminated session")
	got, err = s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
}

// TestDatabaseRestart: with the server down every operation fails with
// store_unavailable (no fallback, nothing cached), a held lock is lost and
// its holder told; once the server is back the Store works again with
// nothing lost.
func TestDatabaseRestart(t *testing.T) {
	needPG(t)
	if theCluster == nil {
		t.Skip("the cluster belongs to another process")
	}
	schema := newSchema()
	s := openStore(t, schema, nil)
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, "k", []byte("kept")))
	require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide, Outcome: "allowed"}))
	held, unlock, err := s.Hold(ctx, "lock")
	require.NoError(t, err)

	theCluster.Halt()
	restarted := false
	defer func() {
		if !restarted {
			require.NoError(t, theCluster.Start())
		}
	}()
	select {
	case <-held.Done():
		assert.ErrorIs(t, context.Cause(held), pgstore.ErrLockLost)
	case <-time.After(20 * time.Second):
		t.Fatal("the holder's context was not cancelled when the server went down")
	}
	_, err = s.Get(ctx, "k")
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable, "Get")
	requireReason(t, s.Set(ctx, "k", []byte("x")), pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable, "Set")
	_, err = s.Records(ctx)
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable, "Records")
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = s.Lock(lctx, "other")
	cancel()
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable, "Lock")
	assert.ErrorIs(t, unlock(), pgstore.ErrLockLost, "unlock of a lock the restart released")

	require.NoError(t, theCluster.Start())
	restarted = true
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		v, err := s.Get(ctx, "k")
		if err == nil {
			require.Equal(t, "kept", string(v))
			break
		}
		require.True(t, time.Now().Before(deadline), "the Store works again once the server is back (last error: %v)", err)
	}
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	assert.Len(t, recs, 1)
	u, err := s.Lock(ctx, "lock")
	require.NoError(t, err, "the lock connection is made again")
	require.NoError(t, u())
}

// TestSchemaTooNew: a schema migrated by a newer version is refused with
// store_schema_too_new and left exactly as it was.
func TestSchemaTooNew(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	require.NoError(t, s.Set(t.Context(), "k", []byte("v")))
	require.NoError(t, s.Close())
	_, err := admin(t).Exec(t.Context(), `INSERT INTO `+table(schema, "schema_migrations")+` (version) VALUES ($1)`, pgstore.SchemaVersion()+1)
	require.NoError(t, err)
	before := snapshot(t, schema)
	_, err = pgstore.Open(t.Context(), testDSN, pgstore.Options{Keyring: testRing(t), Schema: schema})
	requireReason(t, err, pgstore.ReasonSchemaTooNew, refusal.Config, ports.ErrUnavailable)
	assert.Equal(t, before, snapshot(t, schema), "a refused newer schema is not changed")
}

// TestConcurrentFirstOpen: Stores opening a fresh schema at the same time
// (separate sessions, as separate processes would be) all succeed and
// apply each migration exactly once.
func TestConcurrentFirstOpen(t *testing.T) {
	needPG(t)
	schema := newSchema()
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			s, err := pgstore.Open(t.Context(), testDSN, pgstore.Options{Keyring: testRing(t), Schema: schema, MaxConns: 1})
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var versions, keys int
	a := admin(t)
	require.NoError(t, a.QueryRow(t.Context(), `SELECT count(*) FROM `+table(schema, "schema_migrations")).Scan(&versions))
	require.NoError(t, a.QueryRow(t.Context(), `SELECT count(*) FROM `+table(schema, "keys")).Scan(&keys))
	assert.Equal(t, pgstore.SchemaVersion(), versions, "each migration applied once")
	assert.Equal(t, 1, keys, "the key check value stored once")
	s := openStore(t, schema, nil)
	require.NoError(t, s.Set(t.Context(), "k", []byte("v")))
}

// TestOptionsInvalid: Open refuses what it cannot use before connecting.
func TestOptionsInvalid(t *testing.T) {
	for name, opts := range map[string]pgstore.Options{
		"no keyring":     {},
		"upper schema":   {Keyring: testRing(t), Schema: "Mcpward"},
		"quoted schema":  {Keyring: testRing(t), Schema: `a"b`},
		"digit first":    {Keyring: testRing(t), Schema: "1abc"},
		"too long":       {Keyring: testRing(t), Schema: strings.Repeat("a", 64)},
		"dotted schema":  {Keyring: testRing(t), Schema: "public.x"},
		"space in name":  {Keyring: testRing(t), Schema: "a b"},
		"empty DSN host": {Keyring: brokenRing{}},
	} {
		t.Run(name, func(t *testing.T) {
			dsn := "host=/nonexistent/" + t.Name()
			_, err := pgstore.Open(t.Context(), dsn, opts)
			require.Error(t, err)
			var pe *pgstore.Error
			require.ErrorAs(t, err, &pe)
			if name == "empty DSN host" {
				// A keyring is only asked once the database answered.
				requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
				return
			}
			requireReason(t, err, pgstore.ReasonConfigInvalid, refusal.Config, ports.ErrUnavailable)
		})
	}
}

// brokenRing is a Keyring that fails.
type brokenRing struct{}

func (brokenRing) Current() (string, []byte, error) { return "", nil, errors.New("keyring locked") }
func (brokenRing) Lookup(string) ([]byte, error)    { return nil, errors.New("keyring locked") }

// TestKeyringFailure: a Keyring that fails is store_keyring_failed.
func TestKeyringFailure(t *testing.T) {
	needPG(t)
	_, err := pgstore.Open(t.Context(), testDSN, pgstore.Options{Keyring: brokenRing{}, Schema: newSchema()})
	requireReason(t, err, pgstore.ReasonKeyringFailed, refusal.Config, ports.ErrUnavailable)
}

// writeOtherCA writes a CA certificate that signed nothing of the cluster.
func writeOtherCA(path string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

// TestCtxEnded: an operation whose ctx has ended is store_unavailable
// wrapping ctx.Err().
func TestCtxEnded(t *testing.T) {
	s := openStore(t, newSchema(), nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Get(ctx, "k")
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.Lock(ctx, "k")
	requireReason(t, err, pgstore.ReasonLockTimeout, refusal.Transient, ports.ErrLockTimeout)
	assert.ErrorIs(t, err, context.Canceled)
}
