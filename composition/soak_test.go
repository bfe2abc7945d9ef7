package composition

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// The soak tests run many connect/close cycles and many calls through the
// whole Host (Evaluate, supervisor, mcpsession, transports) against the
// example server, then check that nothing was left behind: goroutines
// (goleak), file descriptors of this process, child processes and the
// process groups of the example server. They log their rates; nothing
// asserts a rate. -short runs a twentieth of the work.

// Full soak sizes (divided by 20 under -short).
const (
	soakCycles  = 1000
	soakCalls   = 10000
	soakServers = 20
	soakCallers = 8
	// soakHTTPServers of the soakServers are Streamable HTTP sessions to
	// one example server; the others are stdio children.
	soakHTTPServers = 4
)

// soakSize returns n, or n/20 under -short.
func soakSize(n int) int {
	if testing.Short() {
		return max(1, n/20)
	}
	return n
}

// usage is what the process holds at one moment.
type usage struct {
	goroutines int
	fds        int
	// children are the processes whose parent is this one (zombies
	// included: an unreaped child is a leak too).
	children int
	// servers are the live processes running the soak's private example
	// binary, and groups their distinct process groups.
	servers, groups int
}

func (u usage) String() string {
	return fmt.Sprintf("goroutines=%d fds=%d children=%d servers=%d groups=%d", u.goroutines, u.fds, u.children, u.servers, u.groups)
}

// measure takes the usage of this process; bin is the soak's example
// binary.
func measure(bin string) usage {
	u := usage{goroutines: runtime.NumGoroutine()}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		u.fds = len(fds)
	}
	self := os.Getpid()
	groups := map[int]bool{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		if ppid == self {
			u.children++
		}
		if exe, err := os.Readlink(filepath.Join(filepath.Dir(p), "exe")); err == nil && exe == bin {
			u.servers++
			groups[pgrp] = true
		}
	}
	u.groups = len(groups)
	return u
}

// baseline returns the usage once two measures 50 ms apart agree (at most
// 2 s), so what a warm-up left winding down is not counted.
func baseline(bin string) usage {
	u := measure(bin)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		v := measure(bin)
		if v == u {
			break
		}
		u = v
	}
	return u
}

// settle waits (at most 10 s) until the usage is back to before, and
// returns the last measure.
func settle(before usage, bin string) usage {
	deadline := time.Now().Add(10 * time.Second)
	for {
		u := measure(bin)
		back := u.goroutines <= before.goroutines && u.fds <= before.fds && u.children <= before.children &&
			u.servers <= before.servers && u.groups <= before.groups
		if back || time.Now().After(deadline) {
			return u
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkNothingLeft logs before and after and fails on any leak; ignore
// are the goroutines that ran before the soak.
func checkNothingLeft(t *testing.T, before usage, bin string, ignore goleak.Option) {
	t.Helper()
	after := settle(before, bin)
	t.Logf("before: %v", before)
	t.Logf("after:  %v", after)
	goleak.VerifyNone(t, ignore)
	assert.LessOrEqual(t, after.fds, before.fds, "file descriptors left open")
	assert.LessOrEqual(t, after.children, before.children, "child processes left")
	assert.LessOrEqual(t, after.servers, before.servers, "example servers left running")
	assert.LessOrEqual(t, after.groups, before.groups, "process groups left")
}

// soakConnectClose connects and closes the one server of srcs cycles
// times and returns how long it took.
func soakConnectClose(t *testing.T, r *rig, srcs []definition.Source, cycles int) time.Duration {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	for i := range cycles {
		f := r.host.Connect(ctx, srcs, nil)
		s := f.Servers()
		if len(s) != 1 || s[0].State != StateConnected || len(s[0].Tools) == 0 {
			_ = f.Close()
			t.Fatalf("cycle %d: %+v", i, s)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", i, err)
		}
	}
	return time.Since(began)
}

func TestSoakConnectCloseStdio(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"example": {"command": ` + string(b) + `}}}`)
	// One cycle first, so what is started once per process (pools, the
	// reaper) is in the "before" figures.
	soakConnectClose(t, r, srcs, 1)
	before := baseline(bin)
	ignore := goleak.IgnoreCurrent()

	cycles := soakSize(soakCycles)
	took := soakConnectClose(t, r, srcs, cycles)
	t.Logf("%d stdio connect/close cycles in %v: %.1f cycles/s", cycles, took.Round(time.Millisecond), float64(cycles)/took.Seconds())
	checkNothingLeft(t, before, bin, ignore)
}

func TestSoakConnectCloseHTTP(t *testing.T) {
	bin := privateExample(t)
	url := startHTTPExample(t, bin)
	r := newRig(t, Config{})
	srcs := userSrc(`{"mcpServers": {"example": {"type": "http", "url": "` + url + `"}}}`)
	soakConnectClose(t, r, srcs, 1)
	before := baseline(bin)
	ignore := goleak.IgnoreCurrent()

	cycles := soakSize(soakCycles)
	took := soakConnectClose(t, r, srcs, cycles)
	t.Logf("%d HTTP connect/close cycles in %v: %.1f cycles/s (%d dials)", cycles, took.Round(time.Millisecond),
		float64(cycles)/took.Seconds(), r.dials.n.Load())
	checkNothingLeft(t, before, bin, ignore)
	assert.Equal(t, 1, measure(bin).servers, "the HTTP server itself is still running")
}

func TestSoakCalls(t *testing.T) {
	bin := privateExample(t)
	url := startHTTPExample(t, bin)
	before := baseline(bin)
	ignore := goleak.IgnoreCurrent()

	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	var doc bytes.Buffer
	doc.WriteString(`{"mcpServers": {`)
	names := make([]string, soakServers)
	for i := range soakServers {
		names[i] = fmt.Sprintf("s%02d", i)
		if i > 0 {
			doc.WriteString(",")
		}
		if i < soakHTTPServers {
			fmt.Fprintf(&doc, `%q: {"type": "http", "url": %q}`, names[i], url)
		} else {
			fmt.Fprintf(&doc, `%q: {"command": %s}`, names[i], b)
		}
	}
	doc.WriteString(`}}`)

	ctx := context.Background()
	began := time.Now()
	f := r.host.Connect(ctx, userSrc(doc.String()), nil)
	connected := time.Since(began)
	for _, s := range f.Servers() {
		require.Equal(t, StateConnected, s.State, "%s: class %v reason %s", s.Name, s.Class, s.Reason)
	}
	assert.Equal(t, before.servers+soakServers-soakHTTPServers, measure(bin).servers, "one child per stdio server")

	calls := soakSize(soakCalls)
	var next, failed atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	began = time.Now()
	for range soakCallers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= calls {
					return
				}
				want := "call-" + strconv.Itoa(i)
				res, err := f.CallServerTool(ctx, names[i%soakServers], "echo", json.RawMessage(`{"text":"`+want+`"}`))
				if err == nil && (res.IsError || echoed(res) != want) {
					err = fmt.Errorf("result %s", res.Content)
				}
				if err != nil {
					failed.Add(1)
					firstErr.Do(func() { t.Errorf("call %d to %s: %v", i, names[i%soakServers], err) })
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	require.NoError(t, f.Close())
	t.Logf("%d servers (%d stdio, %d HTTP) connected in %v", soakServers, soakServers-soakHTTPServers, soakHTTPServers, connected.Round(time.Millisecond))
	t.Logf("%d calls by %d callers in %v: %.0f calls/s, %d failed", calls, soakCallers, took.Round(time.Millisecond),
		float64(calls)/took.Seconds(), failed.Load())
	assert.Zero(t, failed.Load())
	checkNothingLeft(t, before, bin, ignore)
}

// echoed returns the text of a one-text-item result, or "" (it may run
// outside the test goroutine, so it does not fail the test itself).
func echoed(res ports.ToolResult) string {
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(res.Content, &items) != nil || len(items) != 1 || items[0].Type != "text" {
		return ""
	}
	return items[0].Text
}
