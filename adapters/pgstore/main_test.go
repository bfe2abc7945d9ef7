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
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
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
	envRequire = "MCPWARD_REQUIRE_PG"
	// envBin names the directory of initdb and postgres (default: the
	// newest /usr/lib/postgresql/*/bin, else the PATH).
	envBin = "MCPWARD_PG_BIN"
	// envTestDSN passes the cluster to the child processes the
	// conformance suites start (re-executions of this binary).
	envTestDSN = "MCPWARD_PGSTORE_TEST_DSN"
	envTestTLS = "MCPWARD_PGSTORE_TEST_TLS"
)

// Roles of the test cluster.
const (
	adminUser = "mcpward_admin"
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
	theCluster *cluster
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
	defer c.stop()
	testDSN = c.dsn()
	tlsBase = fmt.Sprintf("host=127.0.0.1 port=%d dbname=%s", c.port, testDB)
	caFile = filepath.Join(c.dir, "ca.crt")
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

// cluster is a private PostgreSQL server.
type cluster struct {
	bin, dir, data string
	port           int
	cred           *syscall.Credential
	cmd            *exec.Cmd
	exited         chan struct{}
}

func (c *cluster) dsn() string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.dir, c.port, adminUser, testDB)
}

// pgBin finds the directory of initdb and postgres.
func pgBin() (string, error) {
	if d := os.Getenv(envBin); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("initdb not found (install the postgresql package, or set " + envBin + ")")
}

// serverUser returns the credential to run the server with: none unless
// this process is root, which initdb refuses, then the "postgres" user.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root and there is no postgres user to run the server as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (c *cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// chown gives path to the server's user.
func (c *cluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	return os.Chown(path, int(c.cred.Uid), int(c.cred.Gid))
}

func (c *cluster) writeFile(name string, data []byte) error {
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return err
	}
	return c.chown(p)
}

func startCluster() (*cluster, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcpward-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data"), cred: cred}
	ok := false
	defer func() {
		if !ok {
			c.stop()
		}
	}()
	if err := c.chown(dir); err != nil {
		return nil, err
	}
	if out, err := c.command("initdb", "-D", c.data, "-U", adminUser, "-A", "trust", "-E", "UTF8",
		"--no-locale", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, tail(out))
	}
	if err := c.writeTLS(); err != nil {
		return nil, err
	}
	hba := strings.Join([]string{
		"local all " + pwUser + " scram-sha-256",
		"local all all trust",
		"hostssl all " + pwUser + " 127.0.0.1/32 scram-sha-256",
		"hostssl all all 127.0.0.1/32 trust",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(c.data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return nil, err
	}
	if err := c.chown(filepath.Join(c.data, "pg_hba.conf")); err != nil {
		return nil, err
	}
	if c.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable", dir, c.port, adminUser))
	if err != nil {
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
			return nil, fmt.Errorf("setup: %w", err)
		}
	}
	ok = true
	return c, nil
}

// start runs postgres in the foreground of a child process that dies with
// this one (SIGQUIT, an immediate shutdown), and waits until it accepts
// connections.
func (c *cluster) start() error {
	logf, err := os.OpenFile(filepath.Join(c.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := c.command("postgres", "-D", c.data, "-k", c.dir, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "ssl=on",
		"-c", "ssl_cert_file="+filepath.Join(c.dir, "server.crt"),
		"-c", "ssl_key_file="+filepath.Join(c.dir, "server.key"),
		// fsync=off only skips flushing to the disk: every commit is still
		// written to the WAL, so a crash of the server process (the restart
		// test stops it at once) loses nothing.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB",
		"-c", "log_min_messages=warning", "-c", "log_min_error_statement=panic")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	c.cmd = cmd
	c.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable", c.dir, c.port, adminUser))
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		select {
		case <-c.exited:
			log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			return fmt.Errorf("postgres exited: %s", tail(log))
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("postgres did not accept connections within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// halt stops the server at once (SIGQUIT: an immediate shutdown, every
// session cut) and waits for it.
func (c *cluster) halt() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
	c.cmd = nil
}

func (c *cluster) stop() {
	c.halt()
	_ = os.RemoveAll(c.dir)
}

// writeTLS writes a CA and a server certificate for 127.0.0.1 and
// localhost signed by it.
func (c *cluster) writeTLS() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpward test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caTmpl, &srvKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return err
	}
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	if err := c.writeFile("ca.crt", pemOf("CERTIFICATE", caDER)); err != nil {
		return err
	}
	if err := c.writeFile("server.crt", pemOf("CERTIFICATE", srvDER)); err != nil {
		return err
	}
	return c.writeFile("server.key", pemOf("EC PRIVATE KEY", keyDER))
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
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
