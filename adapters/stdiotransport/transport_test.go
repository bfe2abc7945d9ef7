//go:build linux || darwin

package stdiotransport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestEchoRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)
	assert.Equal(t, "fixture", cs.InitializeResult().ServerInfo.Name)
	assert.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
	assert.Equal(t, "hello", mustCall(t, cs, "echo", map[string]any{"text": "hello"}))
	require.NoError(t, cs.Close())
	assert.True(t, tr.Stats().Exited)
	assert.Len(t, w.starts(t), 1)
	assert.Len(t, w.auth.Requests(), 2, "asked at Transport and again at Connect")
}

func TestAuthorityFirst(t *testing.T) {
	const secretArg, secretEnv = "ARG-SECRET-123", "ENV-SECRET-456"
	cases := []struct {
		name   string
		auth   func(*world) *portstest.ProcessAuthority
		target func(*world) ports.Target
		reason string
	}{
		{
			name: "refusal keeps its reason",
			auth: func(*world) *portstest.ProcessAuthority {
				return portstest.RefuseAllProcesses(refusal.New(refusal.Refused, "not_allowlisted", ""))
			},
			reason: "not_allowlisted",
		},
		{
			name: "plain error is process_refused",
			auth: func(*world) *portstest.ProcessAuthority {
				return portstest.RefuseAllProcesses(errors.New("boom " + secretArg))
			},
			reason: "process_refused",
		},
		{
			name: "non-Refused refusal is process_refused",
			auth: func(*world) *portstest.ProcessAuthority {
				return portstest.RefuseAllProcesses(refusal.New(refusal.Transient, "flaky", ""))
			},
			reason: "process_refused",
		},
		{
			name: "injected authority fault",
			auth: func(w *world) *portstest.ProcessAuthority {
				a := portstest.GrantAllProcesses(w.grant)
				a.Fail("Authorize", errors.New("fault"))
				return a
			},
			reason: "process_refused",
		},
		{
			// The environment is malformed, yet the answer is the
			// authority's: it was asked before the environment was read.
			name:   "asked before the environment is read",
			auth:   func(*world) *portstest.ProcessAuthority { return portstest.RefuseAllProcesses(nil) },
			target: func(w *world) ports.Target { tg := w.target(); tg.Env = map[string]string{"A=B": secretEnv}; return tg },
			reason: "process_refused",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			auth := tc.auth(w)
			tg := w.target(secretArg)
			tg.Cwd = "."
			tg.Env = map[string]string{"TOKEN": secretEnv}
			tg.Tier, tg.Origin, tg.Fingerprint = ports.TierProject, "/repo/.mcp.json", "fp-1"
			if tc.target != nil {
				tg = tc.target(w)
			}
			tr, err := New(auth, nil).Transport(context.Background(), tg)
			requireRefusal(t, err, refusal.Refused, tc.reason, secretArg, secretEnv, w.root)
			assert.Nil(t, tr, "nothing constructed on refusal")
			assert.Equal(t, 1, auth.Calls("Authorize"))
			assert.Empty(t, w.starts(t), "nothing spawned")
			reqs := auth.Requests()
			if auth.Calls("Authorize") == 1 && strings.Contains(tc.name, "fault") {
				assert.Empty(t, reqs, "a faulted call records nothing")
				return
			}
			require.Len(t, reqs, 1)
			assert.Equal(t, ports.LaunchRequest{ServerID: "fx", Tier: tg.Tier, Origin: tg.Origin, Fingerprint: tg.Fingerprint,
				Command: tg.Command, Args: tg.Args, Cwd: tg.Cwd}, reqs[0], "the authority sees the definition's provenance")
		})
	}
}

func TestRecheckBeforeSpawn(t *testing.T) {
	t.Run("authority flips to refuse", func(t *testing.T) {
		w := newWorld(t)
		var refuseNow atomic.Bool
		auth := portstest.GrantAllProcesses(w.grant)
		auth.Decide = func(ports.LaunchRequest) (ports.ProcessGrant, error) {
			if refuseNow.Load() {
				return ports.ProcessGrant{}, refusal.New(refusal.Refused, "process_refused", "")
			}
			return w.grant, nil
		}
		tr, err := New(auth, nil).Transport(context.Background(), w.target())
		require.NoError(t, err)
		refuseNow.Store(true)
		_, err = tr.Connect(context.Background())
		requireRefusal(t, err, refusal.Refused, "process_refused")
		assert.Equal(t, 2, auth.Calls("Authorize"))
		assert.Empty(t, w.starts(t), "nothing spawned")
		assert.NoError(t, tr.Close())
	})
	t.Run("new grant decides the cwd", func(t *testing.T) {
		w := newWorld(t)
		other, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		var n atomic.Int32
		auth := portstest.GrantAllProcesses(w.grant)
		auth.Decide = func(ports.LaunchRequest) (ports.ProcessGrant, error) {
			g := w.grant
			if n.Add(1) > 1 {
				g.AllowedRoot = other
			}
			return g, nil
		}
		tr, err := New(auth, fastOptions()).Transport(context.Background(), w.target())
		require.NoError(t, err)
		cs := connect(t, tr)
		assert.Equal(t, other, mustCall(t, cs, "cwd", map[string]any{}))
		require.NoError(t, cs.Close())
	})
	t.Run("cwd swapped for a symlink escape", func(t *testing.T) {
		w := newWorld(t)
		outside := t.TempDir()
		sub := filepath.Join(w.root, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		tg := w.target()
		tg.Cwd = "sub"
		tr, err := New(w.auth, nil).Transport(context.Background(), tg)
		require.NoError(t, err)
		require.NoError(t, os.Remove(sub))
		require.NoError(t, os.Symlink(outside, sub))
		_, err = tr.Connect(context.Background())
		requireRefusal(t, err, refusal.Refused, "cwd_outside_root", outside)
		assert.Empty(t, w.starts(t))
	})
	t.Run("cwd removed", func(t *testing.T) {
		w := newWorld(t)
		sub := filepath.Join(w.root, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		tg := w.target()
		tg.Cwd = "sub"
		tr, err := New(w.auth, nil).Transport(context.Background(), tg)
		require.NoError(t, err)
		require.NoError(t, os.Remove(sub))
		_, err = tr.Connect(context.Background())
		requireRefusal(t, err, refusal.Refused, "cwd_not_found")
		assert.Empty(t, w.starts(t))
	})
}

func TestCwd(t *testing.T) {
	type layout struct{ root, outside string }
	cases := []struct {
		name   string
		cwd    func(l layout) string
		root   func(l layout) string // nil: the world's root
		want   func(l layout) string // "" result: expect reason
		reason string
	}{
		{name: "absent is the root", cwd: func(layout) string { return "" }, want: func(l layout) string { return l.root }},
		{name: "dot is the root", cwd: func(layout) string { return "." }, want: func(l layout) string { return l.root }},
		{name: "relative is under the root", cwd: func(layout) string { return "sub/deeper" }, want: func(l layout) string { return filepath.Join(l.root, "sub", "deeper") }},
		{name: "absolute under the root", cwd: func(l layout) string { return filepath.Join(l.root, "sub") }, want: func(l layout) string { return filepath.Join(l.root, "sub") }},
		{name: "symlink inside the root", cwd: func(layout) string { return "inlink" }, want: func(l layout) string { return filepath.Join(l.root, "sub", "deeper") }},
		{name: "root given through a symlink", root: func(l layout) string { return filepath.Join(l.outside, "rootlink") }, cwd: func(layout) string { return "sub" }, want: func(l layout) string { return filepath.Join(l.root, "sub") }},
		{name: "dotdot", cwd: func(layout) string { return ".." }, reason: "cwd_invalid"},
		{name: "dotdot that stays inside", cwd: func(layout) string { return "sub/../sub" }, reason: "cwd_invalid"},
		{name: "absolute dotdot", cwd: func(l layout) string { return l.root + "/sub/.." }, reason: "cwd_invalid"},
		{name: "NUL", cwd: func(layout) string { return "sub\x00x" }, reason: "cwd_invalid"},
		{name: "symlink escape", cwd: func(layout) string { return "outlink" }, reason: "cwd_outside_root"},
		{name: "symlink escape deeper", cwd: func(layout) string { return "outlink/inner" }, reason: "cwd_outside_root"},
		{name: "absolute outside", cwd: func(l layout) string { return l.outside }, reason: "cwd_outside_root"},
		{name: "sibling sharing a prefix", cwd: func(l layout) string { return l.root + "-sibling" }, reason: "cwd_outside_root"},
		{name: "a file", cwd: func(layout) string { return "file" }, reason: "cwd_not_directory"},
		{name: "under a file", cwd: func(layout) string { return "file/x" }, reason: "cwd_not_directory"},
		{name: "missing", cwd: func(layout) string { return "nope" }, reason: "cwd_not_found"},
		{name: "relative root", root: func(layout) string { return "relative/root" }, cwd: func(layout) string { return "" }, reason: "root_invalid"},
		{name: "empty root", root: func(layout) string { return "" }, cwd: func(layout) string { return "" }, reason: "root_invalid"},
		{name: "root is a file", root: func(l layout) string { return filepath.Join(l.root, "file") }, cwd: func(layout) string { return "" }, reason: "root_invalid"},
		{name: "root with dotdot", root: func(l layout) string { return l.root + "/sub/.." }, cwd: func(layout) string { return "" }, reason: "root_invalid"},
		{name: "root with NUL", root: func(l layout) string { return l.root + "\x00" }, cwd: func(layout) string { return "" }, reason: "root_invalid"},
		{name: "missing root", root: func(l layout) string { return filepath.Join(l.root, "nope") }, cwd: func(layout) string { return "" }, reason: "root_invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := layout{root: w.root, outside: w.root + "-outside"}
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, "sub", "deeper"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(l.outside, "inner"), 0o755))
			require.NoError(t, os.MkdirAll(w.root+"-sibling", 0o755))
			t.Cleanup(func() { os.RemoveAll(l.outside); os.RemoveAll(w.root + "-sibling") })
			require.NoError(t, os.WriteFile(filepath.Join(w.root, "file"), nil, 0o644))
			require.NoError(t, os.Symlink(filepath.Join(w.root, "sub", "deeper"), filepath.Join(w.root, "inlink")))
			require.NoError(t, os.Symlink(l.outside, filepath.Join(w.root, "outlink")))
			require.NoError(t, os.Symlink(w.root, filepath.Join(l.outside, "rootlink")))
			g := w.grant
			if tc.root != nil {
				g.AllowedRoot = tc.root(l)
			}
			auth := portstest.GrantAllProcesses(g)
			tg := w.target()
			tg.Cwd = tc.cwd(l)
			tr, err := New(auth, fastOptions()).Transport(context.Background(), tg)
			if tc.want == nil {
				requireRefusal(t, err, refusal.Refused, tc.reason, w.root, l.outside)
				assert.Nil(t, tr)
				assert.Empty(t, w.starts(t))
				return
			}
			require.NoError(t, err)
			cs := connect(t, tr)
			assert.Equal(t, tc.want(l), mustCall(t, cs, "cwd", map[string]any{}))
			require.NoError(t, cs.Close())
		})
	}
}

func TestNoShell(t *testing.T) {
	w := newWorld(t)
	hostile := []string{"$(touch pwned1)", "; touch pwned2", "`touch pwned3`", "| touch pwned4", "a b", "*", "", "'\"", "$HOME"}
	tg := w.target(hostile...)
	tr, err := New(w.auth, fastOptions()).Transport(context.Background(), tg)
	require.NoError(t, err)
	cs := connect(t, tr)
	argv := callJSON[[]string](t, cs, "argv")
	require.NoError(t, cs.Close())
	assert.Equal(t, append([]string{tg.Command}, tg.Args...), argv, "argv passed exactly")
	for i := 1; i <= 4; i++ {
		assert.NoFileExists(t, filepath.Join(w.root, "pwned"+strconv.Itoa(i)))
	}
}

func TestEnvExact(t *testing.T) {
	const secret = "PARENT-SECRET-VALUE"
	t.Setenv("MCPWARD_PARENT_SECRET", secret)
	cases := []struct {
		name     string
		baseline map[string]string
		env      map[string]string
		want     []string
	}{
		{
			name:     "baseline plus definition, definition wins",
			baseline: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/x", "EMPTYKEY": "", "SHARED": "base"},
			env:      map[string]string{"SHARED": "def", "DEFVAR": "x=y", "DEFEMPTY": ""},
			want:     []string{"DEFEMPTY=", "DEFVAR=x=y", "EMPTYKEY=", "HOME=/home/x", "PATH=/usr/bin:/bin", "SHARED=def"},
		},
		{
			name: "nothing granted means an empty environment",
			want: []string{},
		},
		{
			name: "definition only",
			env:  map[string]string{"ONLY": "1"},
			want: []string{"ONLY=1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			g := w.grant
			g.BaselineEnv = tc.baseline
			tg := w.target()
			tg.Env = tc.env
			tr, err := New(portstest.GrantAllProcesses(g), fastOptions()).Transport(context.Background(), tg)
			require.NoError(t, err)
			cs := connect(t, tr)
			got := callJSON[[]string](t, cs, "env")
			require.NoError(t, cs.Close())
			slices.Sort(got)
			assert.Equal(t, tc.want, got)
			for _, kv := range got {
				assert.NotContains(t, kv, secret)
				assert.NotContains(t, kv, "MCPWARD_PARENT_SECRET")
			}
		})
	}
}

func TestDefinitionRefusals(t *testing.T) {
	const secret = "VALUE-SECRET-789"
	cases := []struct {
		name     string
		edit     func(*ports.Target)
		baseline map[string]string
		class    refusal.Class
		reason   string
	}{
		{name: "empty env key", edit: func(tg *ports.Target) { tg.Env = map[string]string{"": secret} }, class: refusal.Config, reason: "env_invalid"},
		{name: "env key with =", edit: func(tg *ports.Target) { tg.Env = map[string]string{"A=" + secret: "v"} }, class: refusal.Config, reason: "env_invalid"},
		{name: "env key with NUL", edit: func(tg *ports.Target) { tg.Env = map[string]string{"A\x00B": secret} }, class: refusal.Config, reason: "env_invalid"},
		{name: "env value with NUL", edit: func(tg *ports.Target) { tg.Env = map[string]string{"A": secret + "\x00"} }, class: refusal.Config, reason: "env_invalid"},
		{name: "baseline key with =", baseline: map[string]string{"A=B": secret}, class: refusal.Config, reason: "grant_env_invalid"},
		{name: "baseline value with NUL", baseline: map[string]string{"A": "\x00" + secret}, class: refusal.Config, reason: "grant_env_invalid"},
		{name: "NUL in an argument", edit: func(tg *ports.Target) { tg.Args = append(tg.Args, secret+"\x00") }, class: refusal.Config, reason: "argv_invalid"},
		{name: "NUL in the command", edit: func(tg *ports.Target) { tg.Command += "\x00" + secret }, class: refusal.Config, reason: "argv_invalid"},
		{name: "empty command", edit: func(tg *ports.Target) { tg.Command = "" }, class: refusal.Config, reason: "command_empty"},
		{name: "http kind", edit: func(tg *ports.Target) { tg.Kind = ports.TransportHTTP }, class: refusal.Config, reason: "transport_kind_mismatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			g := w.grant
			if tc.baseline != nil {
				g.BaselineEnv = tc.baseline
			}
			tg := w.target()
			if tc.edit != nil {
				tc.edit(&tg)
			}
			tr, err := New(portstest.GrantAllProcesses(g), nil).Transport(context.Background(), tg)
			requireRefusal(t, err, tc.class, tc.reason, secret)
			assert.Nil(t, tr)
			assert.Empty(t, w.starts(t))
		})
	}
}

func TestProgramResolution(t *testing.T) {
	binDir := filepath.Dir(fixtureBin)
	cases := []struct {
		name    string
		setup   func(t *testing.T, w *world) (command, childPath string)
		reason  string
		decoyed bool
	}{
		{
			name: "bare name on the child's PATH, not the parent's",
			setup: func(t *testing.T, w *world) (string, string) {
				return "mcpfixture", "/nonexistent:" + binDir
			},
			decoyed: true,
		},
		{
			name: "bare name only on the parent's PATH",
			setup: func(t *testing.T, w *world) (string, string) {
				t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
				return "mcpfixture", "/usr/bin:/bin"
			},
			reason: "program_not_found",
		},
		{
			name: "relative PATH entries are skipped",
			setup: func(t *testing.T, w *world) (string, string) {
				copyFixture(t, filepath.Join(w.root, "bin"))
				wd, err := os.Getwd()
				require.NoError(t, err)
				rel, err := filepath.Rel(wd, binDir) // found if resolved against the parent's cwd
				require.NoError(t, err)
				return "mcpfixture", rel + ":bin:.:"
			},
			reason: "program_not_found",
		},
		{
			name: "relative path resolves in the child's cwd",
			setup: func(t *testing.T, w *world) (string, string) {
				copyFixture(t, filepath.Join(w.root, "bin"))
				return "./bin/mcpfixture", ""
			},
		},
		{
			name: "not executable",
			setup: func(t *testing.T, w *world) (string, string) {
				p := filepath.Join(w.root, "plain")
				require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644))
				return p, ""
			},
			reason: "program_not_executable",
		},
		{
			name: "a directory",
			setup: func(t *testing.T, w *world) (string, string) {
				return w.root, ""
			},
			reason: "program_not_executable",
		},
		{
			name: "missing absolute",
			setup: func(t *testing.T, w *world) (string, string) {
				return filepath.Join(w.root, "missing"), ""
			},
			reason: "program_not_found",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			// A decoy of the same name on the parent's PATH would leave a
			// file if the parent's PATH were used.
			decoyDir := t.TempDir()
			decoyMark := filepath.Join(w.root, "decoy-ran")
			require.NoError(t, os.WriteFile(filepath.Join(decoyDir, "mcpfixture"), []byte("#!/bin/sh\ntouch "+decoyMark+"\n"), 0o755))
			if !strings.Contains(tc.name, "parent's PATH") || tc.decoyed {
				t.Setenv("PATH", decoyDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			command, childPath := tc.setup(t, w)
			g := w.grant
			g.BaselineEnv = map[string]string{"PATH": childPath}
			tg := w.target()
			tg.Command = command
			tr, err := New(portstest.GrantAllProcesses(g), fastOptions()).Transport(context.Background(), tg)
			if tc.reason != "" {
				requireRefusal(t, err, refusal.Config, tc.reason, command, binDir)
				assert.Empty(t, w.starts(t))
				return
			}
			require.NoError(t, err)
			cs := connect(t, tr)
			argv := callJSON[[]string](t, cs, "argv")
			require.NoError(t, cs.Close())
			assert.Equal(t, command, argv[0], "argv[0] is the command as given")
			assert.Len(t, w.starts(t), 1)
			assert.NoFileExists(t, decoyMark)
		})
	}
}

func copyFixture(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(fixtureBin)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mcpfixture"), b, 0o755))
}

// TestStderrFloodIsBounded drains a 100 MiB stderr flood from a real
// child and bounds what the drain itself allocates: only allocations made
// under the stderr sink (stderrTail's methods, on os/exec's copying
// goroutine) count, read from a heap profile of every allocation, so the
// session, the SDK and anything else the process does meanwhile do not. A
// drain that kept the flood, or allocated per read, allocates about
// 100 MiB here.
//
// The drain's refills of the shared read-buffer pool are counted apart:
// under the race detector sync.Pool drops a quarter of what is Put, so
// there they grow with the number of bursts the scheduler cuts the flood
// into (up to 4 MiB seen under load) and are bounded only without it.
func TestStderrFloodIsBounded(t *testing.T) {
	defer goleak.VerifyNone(t)
	const flood = 100 << 20
	w := newWorld(t)
	tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)

	var elapsed time.Duration
	own, refills := sinkAllocated(func() {
		start := time.Now()
		assert.Equal(t, "flooded", mustCall(t, cs, "flood", map[string]any{"n": flood}))
		elapsed = time.Since(start)
		require.NoError(t, cs.Close()) // waits for the drain to reach EOF
	})

	t.Logf("100 MiB of stderr drained in %v; the drain allocated %d KiB, and %d KiB refilling the read-buffer pool (race detector: %v)",
		elapsed, own>>10, refills>>10, raceEnabled)
	assert.Less(t, own, uint64(256<<10), "the drain allocates (it must not retain) the flood")
	if !raceEnabled {
		assert.Less(t, refills, uint64(256<<10), "the drain returns its pooled buffer")
	}
	assert.Equal(t, int64(flood), tr.Stats().StderrBytes, "every byte counted")
	assert.Less(t, elapsed, 20*time.Second)
}

// sinkAllocated runs f with every allocation profiled and returns the
// bytes allocated under a stderrTail method (the stderr sink, and the
// drain os/exec runs through its ReadFrom), whatever goroutine made them:
// own, and apart the refills of a sync.Pool called from there.
// Allocations elsewhere in the process do not count.
func sinkAllocated(f func()) (own, refills uint64) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	runtime.GC() // publishes the profile of everything allocated so far
	own0, refills0 := sinkProfiled()
	f()
	runtime.GC()
	own, refills = sinkProfiled()
	return own - own0, refills - refills0
}

// sinkProfiled sums the bytes the heap profile records as ever allocated
// (freed or not) under a stderrTail method: own, and refills through
// sync.Pool.Get.
func sinkProfiled() (own, refills uint64) {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	for _, r := range recs {
		var inSink, inPool bool
		frames := runtime.CallersFrames(r.Stack())
		for more := true; more; {
			var fr runtime.Frame
			fr, more = frames.Next()
			inSink = inSink || strings.Contains(fr.Function, "/adapters/stdiotransport.(*stderrTail).")
			inPool = inPool || fr.Function == "sync.(*Pool).Get"
		}
		switch {
		case inSink && inPool:
			refills += uint64(r.AllocBytes)
		case inSink:
			own += uint64(r.AllocBytes)
		}
	}
	return own, refills
}

func TestReceiveCap(t *testing.T) {
	defer goleak.VerifyNone(t)
	const limit = 64 << 10
	w := newWorld(t)
	opts := fastOptions()
	opts.MaxLineLength = limit
	tr, err := New(w.auth, opts).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)

	// A reply just under the cap passes.
	assert.Len(t, mustCall(t, cs, "big", map[string]any{"n": limit - 200}), limit-200)
	assert.NoError(t, tr.Err())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = callText(ctx, cs, "big", map[string]any{"n": limit + 1})
	re := requireRefusal(t, err, refusal.Protocol, "receive_cap_exceeded")
	assert.Contains(t, re.Detail, strconv.Itoa(limit))
	require.Error(t, tr.Err())
	assert.Equal(t, "receive_cap_exceeded", refusal.ReasonOf(tr.Err()))

	_, err = callText(ctx, cs, "echo", map[string]any{"text": "after"})
	assert.ErrorIs(t, err, mcp.ErrConnectionClosed, "the session is over")
	cs.Close()
	assert.Eventually(t, func() bool { return tr.Stats().Exited }, 5*time.Second, 10*time.Millisecond)
}

func TestCloseBound(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		opts     *Options
		min, max time.Duration // bounds on Close
	}{
		{
			// Well under CloseGrace: no signal was needed.
			name: "cooperative child exits on stdin EOF",
			opts: &Options{CloseGrace: 4 * time.Second, TermGrace: 4 * time.Second},
			max:  3 * time.Second,
		},
		{
			// CloseGrace + TermGrace, then SIGKILL; bounded by KillGrace more.
			name: "SIGTERM-ignoring child is killed",
			args: []string{"-ignore-term"},
			opts: fastOptions(),
			min:  800 * time.Millisecond, max: 800*time.Millisecond + 3*time.Second,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			w := newWorld(t)
			tr, err := New(w.auth, tc.opts).Transport(context.Background(), w.target(tc.args...))
			require.NoError(t, err)
			cs := connect(t, tr)
			mustCall(t, cs, "echo", map[string]any{"text": "x"})
			start := time.Now()
			require.NoError(t, cs.Close())
			elapsed := time.Since(start)
			t.Logf("Close took %v", elapsed)
			assert.GreaterOrEqual(t, elapsed, tc.min)
			assert.Less(t, elapsed, tc.max)
			assert.True(t, tr.Stats().Exited)
			pid := startedPid(t, w)
			assert.True(t, processGone(pid))
		})
	}
}

func startedPid(t *testing.T, w *world) int {
	t.Helper()
	for _, l := range w.starts(t) {
		if p, ok := strings.CutPrefix(l, "start "); ok {
			pid, err := strconv.Atoi(p)
			require.NoError(t, err)
			return pid
		}
	}
	t.Fatal("no child started")
	return 0
}

func TestGrandchildEnded(t *testing.T) {
	cases := []struct {
		name string
		args []string
		end  func(t *testing.T, tr *Transport, cs *mcp.ClientSession)
	}{
		{name: "Close of a cooperative child", end: func(t *testing.T, tr *Transport, cs *mcp.ClientSession) { require.NoError(t, cs.Close()) }},
		{name: "Close of a SIGTERM-ignoring child", args: []string{"-ignore-term"}, end: func(t *testing.T, tr *Transport, cs *mcp.ClientSession) { require.NoError(t, cs.Close()) }},
		{name: "Kill", end: func(t *testing.T, tr *Transport, cs *mcp.ClientSession) {
			require.NoError(t, tr.Kill())
			cs.Close()
		}},
		{name: "Transport.Close", end: func(t *testing.T, tr *Transport, cs *mcp.ClientSession) {
			require.NoError(t, tr.Close())
			cs.Close()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			w := newWorld(t)
			tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target(tc.args...))
			require.NoError(t, err)
			cs := connect(t, tr)
			gpid, err := strconv.Atoi(mustCall(t, cs, "spawn", map[string]any{}))
			require.NoError(t, err)
			w.waitNote(t, "sleeper "+strconv.Itoa(gpid))
			require.False(t, processGone(gpid))

			start := time.Now()
			tc.end(t, tr, cs)
			elapsed := time.Since(start)
			t.Logf("ended in %v", elapsed)
			assert.Less(t, elapsed, 5*time.Second, "a grandchild holding the pipes does not hang the end")
			assert.Eventually(t, func() bool { return processGone(gpid) }, 3*time.Second, 10*time.Millisecond, "grandchild ended with the group")
			assert.True(t, processGone(startedPid(t, w)))
		})
	}
}

// A grandchild that leaves the group (setsid) is outside what mcpward
// tracks, but holding the pipes it still cannot hang Close: WaitDelay
// bounds the stderr drain and Close closes stdout itself.
func TestEscapedGrandchildCannotHangClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	opts := &Options{CloseGrace: 4 * time.Second, TermGrace: 4 * time.Second, KillGrace: 500 * time.Millisecond}
	tr, err := New(w.auth, opts).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)
	gpid, err := strconv.Atoi(mustCall(t, cs, "spawn", map[string]any{"setsid": true}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL) })
	w.waitNote(t, "sleeper "+strconv.Itoa(gpid))

	start := time.Now()
	require.NoError(t, cs.Close())
	elapsed := time.Since(start)
	t.Logf("Close with an escaped grandchild holding the pipes took %v", elapsed)
	assert.Less(t, elapsed, 3*time.Second, "the child exited at once; WaitDelay (KillGrace), not the pipes, bounds the rest")
	assert.True(t, tr.Stats().Exited)
	assert.True(t, processGone(startedPid(t, w)))
	assert.False(t, processGone(gpid), "documented limit: a descendant outside the group is not tracked")
}

func TestKillFreesSessionClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	tr, err := New(w.auth, &Options{CloseGrace: 5 * time.Second, TermGrace: 5 * time.Second, KillGrace: 3 * time.Second}).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)

	callErr := make(chan error, 1)
	go func() {
		_, err := callText(context.Background(), cs, "hang", map[string]any{})
		callErr <- err
	}()
	w.waitNote(t, "hang")

	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	select {
	case <-closed:
		t.Fatal("ClientSession.Close returned while a call was in flight: the premise changed")
	case <-time.After(300 * time.Millisecond):
	}

	start := time.Now()
	require.NoError(t, tr.Kill())
	select {
	case err := <-callErr:
		requireRefusal(t, err, refusal.Transient, "child_killed")
	case <-time.After(5 * time.Second):
		t.Fatal("the in-flight call did not end after Kill")
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("ClientSession.Close still blocked after Kill")
	}
	t.Logf("ClientSession.Close returned %v after Kill", time.Since(start))
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.True(t, tr.Stats().Exited)
	assert.True(t, processGone(startedPid(t, w)))
}

func TestKillDuringAbortedConnect(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	tr, err := New(w.auth, &Options{CloseGrace: 5 * time.Second, TermGrace: 5 * time.Second}).Transport(context.Background(), w.target("-silent", "-ignore-term"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		done <- err
	}()
	require.Eventually(t, func() bool { return len(w.starts(t)) == 1 }, 10*time.Second, 5*time.Millisecond)
	// Abandoning initialize makes the SDK close the connection: a graceful
	// close that this child sits out.
	cancel()
	select {
	case <-done:
		t.Fatal("Connect returned before Kill: the premise changed")
	case <-time.After(200 * time.Millisecond):
	}
	start := time.Now()
	require.NoError(t, tr.Kill())
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Connect still blocked after Kill")
	}
	t.Logf("aborted Connect returned %v after Kill", time.Since(start))
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.True(t, processGone(startedPid(t, w)))
}

func TestLifecycleMisuse(t *testing.T) {
	cases := []struct {
		name   string
		before func(tr *Transport)
		class  refusal.Class
		reason string
	}{
		{name: "Close before Connect", before: func(tr *Transport) { require.NoError(t, tr.Close()) }, class: refusal.Transient, reason: "transport_closed"},
		{name: "Kill before Connect", before: func(tr *Transport) { require.NoError(t, tr.Kill()) }, class: refusal.Transient, reason: "transport_closed"},
		{name: "second Connect", before: func(tr *Transport) {
			conn, err := tr.Connect(context.Background())
			require.NoError(t, err)
			t.Cleanup(func() { conn.Close() })
		}, class: refusal.Internal, reason: "transport_reused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
			require.NoError(t, err)
			tc.before(tr)
			_, err = tr.Connect(context.Background())
			requireRefusal(t, err, tc.class, tc.reason)
		})
	}
	t.Run("canceled ctx", func(t *testing.T) {
		w := newWorld(t)
		ctx, cancel := context.WithCancel(context.Background())
		tr, err := New(w.auth, nil).Transport(ctx, w.target())
		require.NoError(t, err)
		cancel()
		_, err = tr.Connect(ctx)
		requireRefusal(t, err, refusal.Transient, "canceled")
		assert.Empty(t, w.starts(t))
	})
}

func TestConcurrentCloseAndKill(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	tr, err := New(w.auth, &Options{CloseGrace: 5 * time.Second, TermGrace: 5 * time.Second}).Transport(context.Background(), w.target("-ignore-term"))
	require.NoError(t, err)
	cs := connect(t, tr)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 6 {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				assert.NoError(t, tr.Close())
			case 1:
				assert.NoError(t, tr.Kill())
			default:
				cs.Close()
			}
		})
	}
	wg.Wait()
	t.Logf("concurrent Close/Kill finished in %v", time.Since(start))
	assert.Less(t, time.Since(start), 4*time.Second, "a Kill shortcuts a graceful Close in progress")
	assert.True(t, tr.Stats().Exited)
}

func TestNothingLeftBehind(t *testing.T) {
	w := newWorld(t)
	l := New(w.auth, fastOptions())
	run := func(end func(tr *Transport, cs *mcp.ClientSession)) {
		tr, err := l.Transport(context.Background(), w.target())
		require.NoError(t, err)
		cs := connect(t, tr)
		w.waitNote(t, "sleeper "+mustCall(t, cs, "spawn", map[string]any{}))
		end(tr, cs)
	}
	run(func(_ *Transport, cs *mcp.ClientSession) { cs.Close() }) // warm up runtime fds (poller, pidfd)
	goleak.VerifyNone(t)
	before := openFDs(t)
	for range 3 {
		run(func(_ *Transport, cs *mcp.ClientSession) { require.NoError(t, cs.Close()) })
		run(func(tr *Transport, cs *mcp.ClientSession) { require.NoError(t, tr.Kill()); cs.Close() })
	}
	goleak.VerifyNone(t)
	assert.Equal(t, before, openFDs(t), "no file descriptor left open")
	for _, l := range w.starts(t) {
		_, p, _ := strings.Cut(l, " ")
		pid, err := strconv.Atoi(p)
		require.NoError(t, err)
		assert.Eventually(t, func() bool { return processGone(pid) }, 3*time.Second, 10*time.Millisecond, "process %d left running", pid)
	}
	assert.Len(t, w.starts(t), 14, "7 children and 7 grandchildren")
}
