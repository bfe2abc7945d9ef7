// Package pgtest gives the tests of composition and of the mcpward CLI a
// private PostgreSQL cluster (adapters/pgstore/pgstoretest: initdb and
// postgres on a temporary directory, listening only on a Unix socket in
// that directory), started once per test binary by the first test that
// needs it and stopped by the binary's TestMain (Stop). Every test works
// in a schema of its own (Need returns one). Without PostgreSQL the tests
// that need it skip, unless MCPWARD_REQUIRE_PG=1, when they fail.
package pgtest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/adapters/pgstore/pgstoretest"
)

// RequireEnv=1 makes a missing PostgreSQL a failure.
const RequireEnv = pgstoretest.RequireEnv

var (
	pgOnce    sync.Once
	pgRunning *pgstoretest.Cluster
	pgErr     error
	pgSchemas struct {
		sync.Mutex
		n int
	}
)

// Need returns the DSN of the private cluster (over its Unix socket, as
// a superuser without a password; database "postgres") and a schema no
// other test uses, starting the cluster on first use. It skips t without
// PostgreSQL, or fails it when MCPWARD_REQUIRE_PG=1. Safe for concurrent
// use.
func Need(t testing.TB) (dsn, schema string) {
	t.Helper()
	pgOnce.Do(func() { pgRunning, pgErr = pgstoretest.Start(pgstoretest.Options{}) })
	if pgErr != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("PostgreSQL is required (%s=1) but unavailable: %v", RequireEnv, pgErr)
		}
		t.Skipf("no PostgreSQL: %v", pgErr)
	}
	pgSchemas.Lock()
	pgSchemas.n++
	n := pgSchemas.n
	pgSchemas.Unlock()
	return pgRunning.AdminDSN("postgres"), fmt.Sprintf("test_%d_%d", os.Getpid(), n)
}

// Stop stops the cluster if one was started and removes its directory;
// call it from TestMain after m.Run.
func Stop() {
	if pgRunning != nil {
		pgRunning.Stop()
	}
}

// Keyring returns a keyring of one fixed key, id "k1".
func Keyring(t testing.TB) pgstore.Keyring {
	t.Helper()
	key := make([]byte, pgstore.KeyLen)
	for i := range key {
		key[i] = byte(i*7 + 1)
	}
	ring, err := pgstore.NewKeyring("k1", map[string][]byte{"k1": key})
	if err != nil {
		t.Fatal(err)
	}
	return ring
}
