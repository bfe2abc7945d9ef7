package pgstore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/adapters/pgstore/pgstoretest"
)

// The tests run against a real PostgreSQL: TestMain starts one private
// cluster per test binary (initdb and postgres on a temporary directory,
// listening on a Unix socket in that directory and, for the TLS test, on
// 127.0.0.1 only), and every test works in a schema of its own. As root
// (CI), the server runs as the unprivileged "postgres" user (initdb
// refuses root). Without PostgreSQL the tests skip, unless
// MCPWARD_REQUIRE_PG=1, when they fail.
const (
	// envRequire makes a missing PostgreSQL a failure.
	envRequire = pgstoretest.RequireEnv
	// envTestDSN passes the cluster to the child processes the
	// conformance suites start (re-executions of this binary).
	envTestDSN = "MCPWARD_PGSTORE_TEST_DSN"
	envTestTLS = "MCPWARD_PGSTORE_TEST_TLS"
)

// Roles of the test cluster.
const (
	adminUser = pgstoretest.Admin
	pwUser    = "mcpward_pw"
	pwSecret  = "s3cret-Pa55word-never-shown"
	testDB    = "mcpward_test"
)

var (
	// testDSN is the DSN of the test database over the Unix socket.
	testDSN string
	// tlsBase is "host=127.0.0.1 port=N dbname=..." for the TLS test, and
	// caFile the CA that signed the server's certificate.
	tlsBase, caFile string
	// skipWhy is why PostgreSQL is unavailable ("" when it is).
	skipWhy string
	// theCluster is the cluster this process started (nil in a child).
	theCluster *pgstoretest.Cluster
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	if dsn := os.Getenv(envTestDSN); dsn != "" {
		testDSN = dsn
		tlsBase, caFile, _ = strings.Cut(os.Getenv(envTestTLS), "|")
		return m.Run()
	}
	c, err := startCluster()
	if err != nil {
		if os.Getenv(envRequire) == "1" {
			fmt.Fprintf(os.Stderr, "pgstore tests: PostgreSQL is required (%s=1) but unavailable: %v\n", envRequire, err)
			return 1
		}
		skipWhy = err.Error()
		return m.Run()
	}
	theCluster = c
	defer c.Stop()
	testDSN = c.AdminDSN(testDB)
	tlsBase = fmt.Sprintf("host=127.0.0.1 port=%d dbname=%s", c.Port, testDB)
	caFile = c.CAFile()
	os.Setenv(envTestDSN, testDSN)
	os.Setenv(envTestTLS, tlsBase+"|"+caFile)
	return m.Run()
}

// needPG skips t when there is no PostgreSQL (TestMain already failed the
// binary when it is required).
func needPG(t testing.TB) {
	t.Helper()
	if skipWhy != "" {
		t.Skip("no PostgreSQL: " + skipWhy)
	}
}

// startCluster starts the private cluster with TLS on 127.0.0.1, a
// password role (pwUser, scram over both) and the test database.
func startCluster() (*pgstoretest.Cluster, error) {
	c, err := pgstoretest.Start(pgstoretest.Options{TLS: true, MaxConnections: 200, HBA: strings.Join([]string{
		"local all " + pwUser + " scram-sha-256",
		"local all all trust",
		"hostssl all " + pwUser + " 127.0.0.1/32 scram-sha-256",
		"hostssl all all 127.0.0.1/32 trust",
		"",
	}, "\n")})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, c.AdminDSN("postgres"))
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{
		"CREATE DATABASE " + testDB,
		"CREATE ROLE " + pwUser + " LOGIN PASSWORD '" + pwSecret + "'",
		"ALTER DATABASE " + testDB + " OWNER TO " + adminUser,
		"GRANT ALL ON DATABASE " + testDB + " TO " + pwUser,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			c.Stop()
			return nil, fmt.Errorf("setup: %w", err)
		}
	}
	return c, nil
}

// ---- helpers of every test ----

// testKey returns a fixed 32-byte key derived from seed.
func testKey(seed byte) []byte {
	k := make([]byte, pgstore.KeyLen)
	for i := range k {
		k[i] = seed + byte(i)*7
	}
	return k
}

// testRing is the keyring of most tests.
func testRing(t testing.TB) pgstore.Keyring {
	t.Helper()
	k, err := pgstore.NewKeyring("k1", map[string][]byte{"k1": testKey(1)})
	require.NoError(t, err)
	return k
}

var schemaSeq atomic.Int64

// newSchema returns a schema name no other test uses.
func newSchema() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("t%d_%x", schemaSeq.Add(1), b)
}

// openStore opens a Store on schema with ring (testRing when nil), closed
// when t ends.
func openStore(t testing.TB, schema string, ring pgstore.Keyring) *pgstore.Store {
	t.Helper()
	needPG(t)
	if ring == nil {
		ring = testRing(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, testDSN, pgstore.Options{Keyring: ring, Schema: schema})
	require.NoError(t, err, "pgstore.Open")
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// admin returns a superuser connection to the test database, closed when t
// ends.
func admin(t testing.TB) *pgx.Conn {
	t.Helper()
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, testDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}
