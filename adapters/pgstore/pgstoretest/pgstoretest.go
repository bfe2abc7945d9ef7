// Package pgstoretest starts a private PostgreSQL cluster for tests: initdb
// and postgres on a temporary directory, listening on a Unix socket in that
// directory and, with Options.TLS, on 127.0.0.1 with TLS only. As root
// (CI) the server runs as the unprivileged "postgres" user, since initdb
// refuses root. The server dies with the process that started it
// (SIGQUIT, an immediate shutdown, sent by the kernel when the parent
// exits).
//
// It serves the tests of adapters/pgstore and of the modules that wire it
// (composition, the CLI). It is not meant for production code.
package pgstoretest

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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the tests of every module read, and the cluster's
// superuser.
const (
	// RequireEnv=1 makes a missing PostgreSQL a failure rather than a skip.
	RequireEnv = "MCPWARD_REQUIRE_PG"
	// BinEnv names the directory of initdb and postgres (default: the
	// newest /usr/lib/postgresql/*/bin, else the PATH).
	BinEnv = "MCPWARD_PG_BIN"
	// Admin is the cluster's superuser, trusted over the Unix socket
	// without a password.
	Admin = "mcpward_admin"
)

// Options shape a cluster. The zero value is a socket-only cluster with
// initdb's default pg_hba.conf.
type Options struct {
	// TLS also listens on 127.0.0.1 with a certificate for 127.0.0.1 and
	// localhost, signed by a CA written to CAFile.
	TLS bool
	// HBA, when not empty, replaces pg_hba.conf.
	HBA string
	// MaxConnections is postgres's max_connections; 0 means 100.
	MaxConnections int
}

// Cluster is a private PostgreSQL server. Its methods are not safe for
// concurrent use.
type Cluster struct {
	// Dir is the cluster's temporary directory, which holds its Unix
	// socket (the "host" of a socket DSN).
	Dir string
	// Port is the server's port (of its socket file, and on 127.0.0.1
	// with Options.TLS).
	Port int

	bin, data string
	tls       bool
	maxConns  int
	cred      *syscall.Credential
	cmd       *exec.Cmd
	exited    chan struct{}
}

// BinDir finds the directory of initdb and postgres.
func BinDir() (string, error) {
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

// Start creates and starts a cluster, and waits until it accepts
// connections (60 s at most). Stop removes it.
func Start(o Options) (*Cluster, error) {
	bin, err := BinDir()
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
	c := &Cluster{Dir: dir, bin: bin, data: filepath.Join(dir, "data"), tls: o.TLS, maxConns: o.MaxConnections, cred: cred}
	if c.maxConns == 0 {
		c.maxConns = 100
	}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	if err := c.chown(dir); err != nil {
		return nil, err
	}
	if out, err := c.command("initdb", "-D", c.data, "-U", Admin, "-A", "trust", "-E", "UTF8",
		"--no-locale", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, tail(out))
	}
	if o.TLS {
		if err := c.writeTLS(); err != nil {
			return nil, err
		}
	}
	if o.HBA != "" {
		if err := c.writeFile(filepath.Join("data", "pg_hba.conf"), []byte(o.HBA)); err != nil {
			return nil, err
		}
	}
	if c.Port, err = freePort(); err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// AdminDSN is the DSN of database db as Admin over the Unix socket.
func (c *Cluster) AdminDSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.Dir, c.Port, Admin, db)
}

// CAFile is the CA that signed the server's certificate (Options.TLS).
func (c *Cluster) CAFile() string { return filepath.Join(c.Dir, "ca.crt") }

// Start runs postgres (again, after Halt) in a child process that dies
// with this one, and waits until it accepts connections.
func (c *Cluster) Start() error {
	logf, err := os.OpenFile(filepath.Join(c.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-D", c.data, "-k", c.Dir, "-p", strconv.Itoa(c.Port)}
	if c.tls {
		args = append(args, "-c", "listen_addresses=127.0.0.1", "-c", "ssl=on",
			"-c", "ssl_cert_file="+filepath.Join(c.Dir, "server.crt"),
			"-c", "ssl_key_file="+filepath.Join(c.Dir, "server.key"))
	} else {
		args = append(args, "-c", "listen_addresses=")
	}
	// fsync=off only skips flushing to the disk: every commit is still
	// written to the WAL, so a crash of the server process (Halt) loses
	// nothing.
	args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections="+strconv.Itoa(c.maxConns), "-c", "shared_buffers=32MB",
		"-c", "log_min_messages=warning", "-c", "log_min_error_statement=panic")
	cmd := c.command("postgres", args...)
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
		conn, err := pgx.Connect(ctx, c.AdminDSN("postgres"))
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		select {
		case <-c.exited:
			log, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
			return fmt.Errorf("postgres exited: %s", tail(log))
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("postgres did not accept connections within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Halt stops the server at once (SIGQUIT: an immediate shutdown, every
// session cut) and waits for it; Start starts it again.
func (c *Cluster) Halt() {
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

// Stop halts the server and removes its directory.
func (c *Cluster) Stop() {
	c.Halt()
	_ = os.RemoveAll(c.Dir)
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

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// chown gives path to the server's user.
func (c *Cluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	return os.Chown(path, int(c.cred.Uid), int(c.cred.Gid))
}

// writeFile writes name (relative to Dir) for the server's user only.
func (c *Cluster) writeFile(name string, data []byte) error {
	p := filepath.Join(c.Dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return err
	}
	return c.chown(p)
}

// writeTLS writes a CA and a server certificate for 127.0.0.1 and
// localhost signed by it.
func (c *Cluster) writeTLS() error {
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

// tail is the end of a server's output, for an error.
func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
