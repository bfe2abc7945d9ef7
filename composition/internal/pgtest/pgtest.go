// Package pgtest starts a private PostgreSQL cluster for the tests of
// composition and of the mcpward CLI: initdb and postgres on a temporary
// directory, listening only on a Unix socket in that directory, started
// once per test binary by the first test that needs it and stopped by the
// binary's TestMain (Stop). Every test works in a schema of its own
// (Need returns one). As root (CI) the server runs as the unprivileged
// "postgres" user, since initdb refuses root. Without PostgreSQL the tests
// that need it skip, unless MCPWARD_REQUIRE_PG=1, when they fail. It is a
// minimal copy of adapters/pgstore's test cluster (no TLS, no password
// role).
package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpward/mcpward/adapters/pgstore"
)

// Environment variables and the superuser of the cluster.
const (
	// RequireEnv=1 makes a missing PostgreSQL a failure.
	RequireEnv = "MCPWARD_REQUIRE_PG"
	// BinEnv names the directory of initdb and postgres (default: the
	// newest /usr/lib/postgresql/*/bin, else the PATH).
	BinEnv = "MCPWARD_PG_BIN"
	// Admin is the superuser of the cluster (trust over the socket).
	Admin = "mcpward_admin"
)

// pgCluster is the private server of this test binary.
type pgCluster struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

var (
	pgOnce    sync.Once
	pgRunning *pgCluster
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
	pgOnce.Do(func() { pgRunning, pgErr = startPG() })
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
	return fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable", pgRunning.dir, pgRunning.port, Admin),
		fmt.Sprintf("test_%d_%d", os.Getpid(), n)
}

// Stop stops the cluster if one was started and removes its directory;
// call it from TestMain after m.Run.
func Stop() {
	if pgRunning != nil {
		pgRunning.stop()
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

// pgBinDir finds the directory of initdb and postgres.
func pgBinDir() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
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
	return "", errors.New("initdb not found (install the postgresql package, or set " + BinEnv + ")")
}

func startPG() (*pgCluster, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errors.New("running as root and there is no postgres user to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "mcpward-composition-pg-")
	if err != nil {
		return nil, err
	}
	c := &pgCluster{dir: dir}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", Admin, "-A", "trust", "-E", "UTF8",
		"--no-locale", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, lastBytes(out))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c.port = l.Addr().(*net.TCPAddr).Port // the socket file's name only
	_ = l.Close()
	logf, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	cmd := command("postgres", "-D", data, "-k", dir, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=100", "-c", "shared_buffers=16MB",
		"-c", "log_min_messages=warning", "-c", "log_min_error_statement=panic")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("postgres: %w", err)
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if command("pg_isready", "-q", "-h", dir, "-p", strconv.Itoa(c.port), "-U", Admin, "-d", "postgres").Run() == nil {
			return c, nil
		}
		select {
		case <-c.exited:
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			c.stop()
			return nil, fmt.Errorf("postgres exited: %s", lastBytes(log))
		default:
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, errors.New("postgres did not accept connections within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop stops the server at once (SIGQUIT) and removes its directory.
func (c *pgCluster) stop() {
	if c.cmd != nil {
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.exited
		}
		c.cmd = nil
	}
	_ = os.RemoveAll(c.dir)
}

func lastBytes(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
