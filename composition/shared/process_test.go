package shared

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/oauthtest"
	"github.com/mcpward/mcpward/composition/internal/pgtest"
)

// Environment of a TestSharedChildConnect process.
const (
	sharedChildDSNEnv    = "MCPWARD_SHARED_CHILD_DSN"
	sharedChildSchemaEnv = "MCPWARD_SHARED_CHILD_SCHEMA"
	childURLEnv          = "MCPWARD_SHARED_CHILD_URL"
	childCertEnv         = "MCPWARD_SHARED_CHILD_CERT"
)

// whoamiHandler is the Streamable HTTP handler of an MCP server whose
// tool whoami says "signed in".
func whoamiHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says who is signed in."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// childConfig is the Config of a machine that only has the guarded
// server's certificate (PEM) at certFile: OAuth on, https to loopback
// admitted.
func childConfig(t *testing.T, certFile string) composition.Config {
	return composition.Config{
		Egress: oauthtest.Egress(t),
		HTTP:   &httptransport.Options{TLSConfig: &tls.Config{RootCAs: oauthtest.CertPool(t, certFile)}, MaxRetries: -1},
		OAuth:  &composition.OAuthConfig{},
	}
}

// TestSharedChildConnect is one "machine" of the distributed refresh
// tests: a Shared Host on the database they share, connecting the guarded
// server and calling whoami. It does nothing unless started by them.
func TestSharedChildConnect(t *testing.T) {
	dsn := os.Getenv(sharedChildDSNEnv)
	if dsn == "" {
		t.Skip("run by TestSharedRefreshAcrossMachines and TestSharedRefreshHolderKilled")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, cleanup, err := Open(ctx, Config{Store: Store{DSN: dsn, Keyring: pgtest.Keyring(t), Schema: os.Getenv(sharedChildSchemaEnv)},
		Config: childConfig(t, os.Getenv(childCertEnv))})
	require.NoError(t, err)
	defer cleanup()
	f := h.Connect(ctx, oauthtest.Sources(os.Getenv(childURLEnv)), nil)
	defer f.Close()
	sr := f.Servers()[0]
	require.Equal(t, composition.StateConnected, sr.State, "%s %s", sr.Class, sr.Reason)
	res, err := f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	require.Contains(t, string(res.Content), "signed in")
}

// sharedMachines is the setup of the distributed refresh tests: the OAuth
// server (access tokens from a sign-in expire at once, refresh tokens
// rotate), the database schema the machines share, signed in once.
type sharedMachines struct {
	o           *oauthtest.Server
	dsn, schema string
	certFile    string
}

func newSharedMachines(t *testing.T) *sharedMachines {
	t.Helper()
	if os.Getenv(sharedChildDSNEnv) != "" {
		t.Skip("a child")
	}
	dsn, schema := pgtest.Need(t)
	m := &sharedMachines{o: oauthtest.New(t, whoamiHandler()), dsn: dsn, schema: schema}
	m.o.SignInExpiresIn = oauthtest.ExpiresAtOnce
	m.certFile = filepath.Join(t.TempDir(), "cert.pem")
	m.o.WriteCert(t, m.certFile)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, cleanup, err := Open(ctx, Config{Store: Store{DSN: dsn, Keyring: pgtest.Keyring(t), Schema: schema}, Config: childConfig(t, m.certFile)})
	require.NoError(t, err)
	require.NoError(t, h.SignIn(ctx, oauthtest.Sources(m.o.TS.URL), "guarded", oauthtest.Browser(m.o.TS)))
	cleanup()
	return m
}

// machine returns the command of one machine: a TestSharedChildConnect
// process with a home, state and temporary directory of its own, so
// nothing is shared through files (no flock), only through the database.
func (m *sharedMachines) machine(t *testing.T) *exec.Cmd {
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedChildConnect$", "-test.count=1", "-test.v")
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "XDG_STATE_HOME" && k != "TMPDIR" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "TMPDIR="+home,
		sharedChildDSNEnv+"="+m.dsn, sharedChildSchemaEnv+"="+m.schema,
		childURLEnv+"="+m.o.TS.URL, childCertEnv+"="+m.certFile)
	return cmd
}

// run runs cmds at once and returns their combined outputs and errors.
func runAll(cmds []*exec.Cmd) ([]string, []error) {
	outs, errs := make([]string, len(cmds)), make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	return outs, errs
}

// TestSharedRefreshAcrossMachines: several processes, each with its own
// state directory (separate machines), share one database; the access
// token has expired and the authorization server rotates refresh tokens.
// Exactly one token request is made (a second one with the spent refresh
// token would be refused, signing that machine out), and all connect.
func TestSharedRefreshAcrossMachines(t *testing.T) {
	m := newSharedMachines(t)
	const n = 4
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = m.machine(t)
	}
	outs, errs := runAll(cmds)
	for i := range n {
		require.NoError(t, errs[i], "machine %d:\n%s", i, outs[i])
		assert.Contains(t, outs[i], "--- PASS: TestSharedChildConnect", "machine %d ran", i)
	}
	m.o.Mu.Lock()
	defer m.o.Mu.Unlock()
	assert.Equal(t, 1, m.o.Refreshed, "one refresh for %d machines", n)
	assert.Zero(t, m.o.Spent, "no spent refresh token was sent")
	assert.False(t, strings.Contains(fmt.Sprint(outs), "token-"), "no token in any output")
}

// TestSharedRefreshHolderKilled: the machine holding the refresh lock is
// killed (SIGKILL) while its token request hangs at the authorization
// server, which has not spent the refresh token. The database sees its
// connection drop and releases the lock; one of the machines waiting for
// it takes over, refreshes once, and every one connects: nobody is signed
// out.
func TestSharedRefreshHolderKilled(t *testing.T) {
	m := newSharedMachines(t)
	arrived := make(chan struct{})
	var first atomic.Bool
	m.o.Mu.Lock()
	m.o.BeforeRefresh = func(r *http.Request) bool {
		if !first.CompareAndSwap(false, true) {
			return true
		}
		close(arrived)
		<-r.Context().Done() // until the holder is gone
		return false
	}
	m.o.Mu.Unlock()

	victim := m.machine(t)
	var victimOut strings.Builder
	victim.Stdout, victim.Stderr = &victimOut, &victimOut
	require.NoError(t, victim.Start())
	victimDone := make(chan error, 1)
	go func() { victimDone <- victim.Wait() }()
	select {
	case <-arrived:
	case err := <-victimDone:
		t.Fatalf("the first machine ended before refreshing (%v):\n%s", err, victimOut.String())
	case <-time.After(60 * time.Second):
		_ = victim.Process.Kill()
		t.Fatal("the first machine never sent its token request")
	}

	// The others start and wait for the lock the victim holds.
	const others = 3
	cmds := make([]*exec.Cmd, others)
	for i := range cmds {
		cmds[i] = m.machine(t)
	}
	type done struct {
		outs []string
		errs []error
	}
	finished := make(chan done, 1)
	go func() { o, e := runAll(cmds); finished <- done{o, e} }()
	waitLockSessions(t, m.dsn, others+1)

	require.NoError(t, victim.Process.Kill())
	require.Error(t, <-victimDone, "the lock holder was killed")

	var d done
	select {
	case d = <-finished:
	case <-time.After(90 * time.Second):
		t.Fatal("the other machines did not finish after the holder was killed")
	}
	for i := range others {
		require.NoError(t, d.errs[i], "machine %d:\n%s", i, d.outs[i])
		assert.Contains(t, d.outs[i], "--- PASS: TestSharedChildConnect", "machine %d ran", i)
	}
	m.o.Mu.Lock()
	defer m.o.Mu.Unlock()
	assert.Equal(t, 1, m.o.Refreshed, "one refresh served, by the machine that took over")
	assert.Zero(t, m.o.Spent, "no spent refresh token was sent: nobody is signed out")
}

// waitLockSessions waits until at least n sessions of the database of
// dsn are Store lock connections (application_name "mcpward-lock"): a
// Store opens its lock connection when it first asks for a lock, so with
// the holder's lock taken the others are then trying the lock in turn.
func waitLockSessions(t *testing.T, dsn string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	for {
		var sessions int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mcpward-lock'`).Scan(&sessions))
		if sessions >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("only %d lock sessions, want %d", sessions, n)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
