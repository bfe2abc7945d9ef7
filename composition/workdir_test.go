package composition

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// runWhere starts t (a /bin/sh child that writes its working directory and
// what that directory holds to $OUT) through the rig's Dialer, waits for
// the child to write, releases the connection and returns the two lines.
func runWhere(t *testing.T, r *rig, tg ports.Target) (dir string, entries string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	tg.Kind = ports.TransportStdio
	tg.Command = "/bin/sh"
	tg.Args = []string{"-c", `pwd -P > "$OUT.tmp"; echo "entries: $(ls -A | tr '\n' ' ')" >> "$OUT.tmp"; mv "$OUT.tmp" "$OUT"; exec cat`}
	tg.Env = map[string]string{"OUT": out}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := r.host.Dialer().Dial(ctx, tg)
	require.NoError(t, err)
	_, err = conn.Transport.Connect(ctx)
	require.NoError(t, err)
	var b []byte
	require.Eventually(t, func() bool {
		b, err = os.ReadFile(out)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	conn.Release()
	lines := strings.SplitN(strings.TrimRight(string(b), "\n"), "\n", 2)
	require.Len(t, lines, 2)
	return lines[0], strings.TrimSpace(strings.TrimPrefix(lines[1], "entries:"))
}

// TestWorkingDirectoryWrittenOrNeutral: a managed, user or plugin stdio
// server without cwd runs in a fresh, empty, private directory that is
// removed after it, never in the workspace the person opened; a project or
// local one runs in the workspace root (issue 22, attack 11).
func TestWorkingDirectoryWrittenOrNeutral(t *testing.T) {
	workspace, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(workspace, "mod.py"), []byte("import os\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(workspace, ".npmrc"), []byte("registry=http://127.0.0.1:9/\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(workspace, "tools"), 0o700))
	r := newRig(t, Config{Authority: NewRootAuthority(workspace, map[string]string{"PATH": os.Getenv("PATH")})})
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	require.NoError(t, err)

	for _, tier := range []ports.Tier{ports.TierManaged, ports.TierUser, ports.TierPlugin} {
		t.Run(string(tier)+" without cwd", func(t *testing.T) {
			dir, entries := runWhere(t, r, ports.Target{ServerID: "s", Tier: tier})
			assert.NotEqual(t, workspace, dir)
			assert.Equal(t, tmp, filepath.Dir(dir), "a directory of its own under the temporary directory")
			assert.True(t, strings.HasPrefix(filepath.Base(dir), "mcpward-cwd-"))
			assert.Empty(t, entries, "the neutral directory is empty: no mod.py, no .npmrc")
			_, err := os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "the neutral directory is removed with the connection")
		})
	}
	for _, tier := range []ports.Tier{ports.TierProject, ports.TierLocal} {
		t.Run(string(tier)+" without cwd", func(t *testing.T) {
			dir, entries := runWhere(t, r, ports.Target{ServerID: "s", Tier: tier})
			assert.Equal(t, workspace, dir)
			assert.Contains(t, entries, "mod.py")
		})
	}
	t.Run("user with cwd", func(t *testing.T) {
		dir, _ := runWhere(t, r, ports.Target{ServerID: "s", Tier: ports.TierUser, Cwd: "tools"})
		assert.Equal(t, filepath.Join(workspace, "tools"), dir)
	})
}

// TestNeutralDirectoryMode: the neutral directory is private (0700).
func TestNeutralDirectoryMode(t *testing.T) {
	dir, err := makeNeutralDir("s")
	require.NoError(t, err)
	defer removeNeutralDir(dir)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	_, held := neutralDirs.Load(dir)
	assert.True(t, held)
	removeNeutralDir(dir)
	_, held = neutralDirs.Load(dir)
	assert.False(t, held)
}

// TestLaunchCheckInNeutralDirectory: a relative program written for a
// user-tier server is looked up in its neutral directory, not in the
// workspace, so a repository's own ./tool never runs through it; a
// project server finds it in the workspace.
func TestLaunchCheckInNeutralDirectory(t *testing.T) {
	workspace := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(workspace, "tool"), []byte("#!/bin/sh\n"), 0o700))
	r := newRig(t, Config{Authority: NewRootAuthority(workspace, map[string]string{"PATH": "/usr/bin:/bin"})})
	for tier, want := range map[ports.Tier]string{ports.TierUser: "program_not_found", ports.TierProject: ""} {
		srcs := []definition.Source{{Tier: tier, Origin: "/o", Data: []byte(`{"mcpServers":{"s":{"command":"./tool"}}}`)}}
		res, ok := r.host.Evaluate(context.Background(), srcs).Server("s")
		require.True(t, ok)
		assert.Equal(t, want, res.Launch, tier)
	}
}

// TestHostReview: the review is what the file wrote, for the winning
// definition; no value from the lookup reaches it.
func TestHostReview(t *testing.T) {
	r := newRig(t, Config{Lookup: func(string) (string, bool) { return "looked-up-value", true }})
	srcs := []definition.Source{{Tier: ports.TierProject, Origin: "/w/.mcp.json", Data: []byte(`{"mcpServers":{
		"s":{"command":"node","args":["--root=${HOME}"],"env":{"PYTHONPATH":"/tmp/evil","API_KEY":"literal-one"}},
		"bad":{"command":1}}}`)}}
	rv, ok := r.host.Review(srcs, "s")
	require.True(t, ok)
	assert.Equal(t, []string{"--root=${HOME}"}, rv.Args)
	assert.Equal(t, definition.WorkdirWorkspace, rv.WorkingDirectory)
	assert.Equal(t, "/tmp/evil", rv.Env[1].Value)
	assert.NotContains(t, rv.Env[0].Value, "literal-one")
	_, ok = r.host.Review(srcs, "bad")
	assert.False(t, ok, "a malformed entry has no review")
	_, ok = r.host.Review(srcs, "nope")
	assert.False(t, ok)
}

// neutralSince returns the neutral directories this process holds now
// that it did not hold at before.
func neutralSince(before map[string]bool) []string {
	var out []string
	neutralDirs.Range(func(k, _ any) bool {
		if !before[k.(string)] {
			out = append(out, k.(string))
		}
		return true
	})
	return out
}

func neutralNow() map[string]bool {
	m := map[string]bool{}
	neutralDirs.Range(func(k, _ any) bool { m[k.(string)] = true; return true })
	return m
}

// TestAdmissionDirectoriesRemoved: the neutral directory the evaluation
// makes to admit a user-tier stdio launch is gone when Evaluate returns,
// and when Connect or a background Connect returns (the Fleet removes it
// beside its connects); while connected only the launch's own directory
// exists, and after Close none.
func TestAdmissionDirectoriesRemoved(t *testing.T) {
	bin, err := exampleServer()
	require.NoError(t, err)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"LANG": "C"})})
	q, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"ex": {"command": ` + string(q) + `}}}`)
	ctx := context.Background()

	before := neutralNow()
	ev, ok := r.host.Evaluate(ctx, srcs).Server("ex")
	require.True(t, ok)
	require.Equal(t, StateAllowed, ev.State)
	assert.Empty(t, neutralSince(before), "Evaluate leaves no directory")

	for _, background := range []bool{false, true} {
		f := r.host.Connect(ctx, srcs, &ConnectOptions{Background: background})
		left := neutralSince(before)
		assert.LessOrEqual(t, len(left), 1, "at most the launch's own directory (background %v)", background)
		require.NoError(t, f.Wait(ctx))
		s := f.Servers()
		require.Len(t, s, 1)
		require.Equal(t, StateConnected, s[0].State)
		left = neutralSince(before)
		require.Len(t, left, 1, "the launch's directory alone (background %v)", background)
		_, err := os.Stat(left[0])
		require.NoError(t, err, "it exists while connected")
		require.NoError(t, f.Close())
		assert.Empty(t, neutralSince(before), "none after Close (background %v)", background)
	}
}

// TestFirstLaunchInAdmissionDirectory: a Fleet's first launch of a
// user-tier stdio server runs in the neutral directory its evaluation
// admitted it in, not in a second one: the authority, asked at the
// evaluation, at the transport and right before the spawn, sees one and
// the same neutral directory each time, and it is the launch's own while
// connected; a later Fleet's launch gets a fresh one.
func TestFirstLaunchInAdmissionDirectory(t *testing.T) {
	bin, err := exampleServer()
	require.NoError(t, err)
	root := NewRootAuthority(t.TempDir(), map[string]string{"LANG": "C"})
	var mu sync.Mutex
	var before map[string]bool
	var seen [][]string
	auth := AuthorityFunc(func(ctx context.Context, req ports.LaunchRequest) (ports.ProcessGrant, error) {
		mu.Lock()
		seen = append(seen, neutralSince(before))
		mu.Unlock()
		return root.Authorize(ctx, req)
	})
	r := newRig(t, Config{Authority: auth})
	q, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"ex": {"command": ` + string(q) + `}}}`)
	ctx := context.Background()

	var first string
	for round := range 2 {
		mu.Lock()
		before, seen = neutralNow(), nil
		mu.Unlock()
		f := r.host.Connect(ctx, srcs, nil)
		s := f.Servers()
		require.Len(t, s, 1)
		require.Equal(t, StateConnected, s[0].State)
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		require.Len(t, got, 3, "asked at the evaluation, the transport and the spawn")
		for i, dirs := range got {
			require.Len(t, dirs, 1, "one neutral directory at ask %d (round %d)", i, round)
			require.Equal(t, got[0][0], dirs[0], "the same directory at ask %d (round %d)", i, round)
		}
		left := neutralSince(before)
		require.Equal(t, []string{got[0][0]}, left, "the admitted directory is the launch's own")
		if round == 0 {
			first = left[0]
		} else {
			assert.NotEqual(t, first, left[0], "a later Fleet launches in a fresh directory")
		}
		require.NoError(t, f.Close())
		assert.Empty(t, neutralSince(before), "none after Close")
		_, err := os.Stat(left[0])
		assert.ErrorIs(t, err, fs.ErrNotExist, "removed with its connection")
	}
}
