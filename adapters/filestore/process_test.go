//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// The child modes of TestHelperProcess, chosen by helperEnv.
const (
	helperEnv = "MCPWARD_FILESTORE_HELPER"
	modeWrite = "write" // grant and append N entries, then exit
	modeHold  = "hold"  // take the lock, say "locked", wait to be killed
	// modeQueue appends and enqueues audit records (see
	// TestAuditQueueSurvivesSIGKILL), says "locked", waits to be killed.
	modeQueue   = "queue"
	helperReady = "locked"
)

// helper starts this test binary as a child running TestHelperProcess.
func helper(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "--")
	cmd.Args = append(cmd.Args, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestHelperProcess is not a test: it is the child side of the
// multi-process tests, and does nothing unless helperEnv is set.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("child process helper")
	}
	args := os.Args
	for len(args) > 0 && args[0] != "--" {
		args = args[1:]
	}
	args = args[1:]
	if err := runHelper(mode, args); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

func runHelper(mode string, args []string) error {
	s, err := Open(args[0])
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch mode {
	case modeWrite:
		id, n := args[1], atoi(args[2])
		for i := range n {
			fp := fmt.Sprintf("%s-%d", id, i)
			if err := s.Grant(ctx, ports.Approval{Identity: ident("multi", fp), GrantedBy: id}); err != nil {
				return err
			}
			if err := s.Append(ctx, ports.AuditRecord{Action: ports.AuditGrant, Identity: ident("multi", fp), Actor: id}); err != nil {
				return err
			}
		}
		return nil
	case modeQueue:
		s.auditQ.delay = time.Hour // only a later write or Flush writes an enqueued record
		rec := func(reason string) ports.AuditRecord {
			return ports.AuditRecord{Action: ports.AuditCall, Identity: ident("srv", "fp"), Reason: reason}
		}
		steps := []func() error{
			func() error { return s.Append(ctx, rec("a1")) },
			func() error { return s.Enqueue(rec("e1")) },
			func() error { return s.Flush(ctx) },
			func() error { return s.Enqueue(rec("e2")) },
			func() error { return s.Append(ctx, rec("a2")) },
			func() error { return s.Enqueue(rec("e3")) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		fmt.Println(helperReady)
		select {} // until SIGKILL
	case modeHold:
		if _, err := s.Lock(ctx, args[1]); err != nil {
			return err
		}
		fmt.Println(helperReady)
		select {} // until SIGKILL
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestConcurrentWriterProcessesLoseNothing(t *testing.T) {
	_, dir := newStore(t)
	const procs, n = 4, 15
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helper(t, modeWrite, dir, fmt.Sprintf("p%d", p), strconv.Itoa(n))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}

	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	list, err := s.List(t.Context(), "multi")
	require.NoError(t, err)
	recs, err := s.Records(t.Context())
	require.NoError(t, err)
	require.Equal(t, procs*n, len(list), "approvals kept")
	require.Equal(t, procs*n, len(recs), "audit records kept")

	granted := map[string]bool{}
	for _, a := range list {
		assert.False(t, granted[a.Identity.Fingerprint], "duplicate %s", a.Identity.Fingerprint)
		granted[a.Identity.Fingerprint] = true
	}
	next := map[string]int{} // each child's records appear in its own order
	for _, r := range recs {
		want := fmt.Sprintf("%s-%d", r.Actor, next[r.Actor])
		assert.Equal(t, want, r.Identity.Fingerprint)
		next[r.Actor]++
	}
	for p := range procs {
		for i := range n {
			assert.True(t, granted[fmt.Sprintf("p%d-%d", p, i)], "lost grant p%d-%d", p, i)
		}
		assert.Equal(t, n, next[fmt.Sprintf("p%d", p)])
	}
}

func TestLockAcrossProcessesFailsClosedAndSurvivesSIGKILL(t *testing.T) {
	s, dir := newStore(t)
	const key = "oauth/https://example.com:443/../../refresh"

	cmd := helper(t, modeHold, dir, key)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, helperReady, strings.TrimSpace(line))

	// The child holds it: the parent waits, then fails closed.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	u, err := s.Lock(ctx, key)
	assert.Nil(t, u)
	require.ErrorIs(t, err, ports.ErrLockTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// A waiter started before the kill gets the lock promptly after it.
	type result struct {
		unlock func() error
		err    error
		at     time.Time
	}
	got := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		u, err := s.Lock(ctx, key)
		got <- result{u, err, time.Now()}
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("lock taken while the child holds it: %v", r.err)
	default:
	}

	killedAt := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	killed = true
	werr := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, werr, &ee)
	assert.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())

	select {
	case r := <-got:
		require.NoError(t, r.err)
		assert.Less(t, r.at.Sub(killedAt), time.Second, "lock taken promptly after the holder died")
		require.NoError(t, r.unlock())
	case <-time.After(5 * time.Second):
		t.Fatal("lock never released by the killed child")
	}
}

// TestAuditQueueSurvivesSIGKILL kills a process at a point where it has
// appended, enqueued and flushed records: what Append returned and what a
// Flush or a later Append wrote survives; a record only enqueued since
// the last write is lost (the crash window ports.AuditQueue states).
func TestAuditQueueSurvivesSIGKILL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	cmd := helper(t, modeQueue, dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, helperReady+"\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	recs, err := s.Records(t.Context())
	require.NoError(t, err, "a killed writer leaves no torn record")
	var got []string
	for _, r := range recs {
		got = append(got, r.Reason)
	}
	assert.Equal(t, []string{"a1", "e1", "e2", "a2"}, got,
		"appended (a1, a2), flushed (e1) and written with a later append (e2) survive; e3, only enqueued, does not")
}
