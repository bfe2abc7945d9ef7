package stdiotransport

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// osThreads is this process's count of OS threads (/proc/self/status).
func osThreads(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no Threads line")
	return 0
}

// TestIdleChildrenHoldNoThreads: a connected, idle child costs no OS
// thread (its reaper used to block one in waitid for the child's whole
// life). Skipped where pidfds are missing: the reaper blocks there.
func TestIdleChildrenHoldNoThreads(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Skip("no pidfd on this kernel")
	}
	unix.Close(fd)
	const n = 16
	w := newWorld(t)
	l := New(w.auth, fastOptions())
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			_ = cs.Close()
		}
	}()
	cs := connectFresh(t, l, w)
	sessions = append(sessions, cs)
	before := osThreads(t)
	for range n {
		sessions = append(sessions, connectFresh(t, l, w))
	}
	for _, cs := range sessions {
		assert.Equal(t, "hello", mustCall(t, cs, "echo", map[string]any{"text": "hello"}))
	}
	assert.Less(t, osThreads(t)-before, n/2, "threads grew with the idle children")
}

func connectFresh(t *testing.T, l *Launcher, w *world) *mcp.ClientSession {
	t.Helper()
	tr, err := l.Transport(context.Background(), w.target())
	require.NoError(t, err)
	return connect(t, tr)
}
