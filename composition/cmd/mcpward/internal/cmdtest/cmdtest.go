// Package cmdtest helps the commands' unit tests: a throwaway world on
// disk (workspace, configuration files, state directory, environment), a
// factory on test streams and a fake clock, and a way to execute one
// command under a root that has the global flags.
package cmdtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// World is a throwaway machine: Root holds a workspace (WS), a home, the
// XDG directories and whatever files the test wrote.
type World struct {
	Root, WS string
	Vars     map[string]string
}

// NewWorld writes files (paths relative to the world's root; "ws/" is the
// workspace) and returns the world. vars are extra environment variables
// ("NAME=value").
func NewWorld(t testing.TB, files map[string]string, vars ...string) *World {
	t.Helper()
	root := t.TempDir()
	w := &World{Root: root, WS: filepath.Join(root, "ws"), Vars: map[string]string{
		"HOME":            filepath.Join(root, "home"),
		"XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"XDG_STATE_HOME":  filepath.Join(root, "state"),
	}}
	must(t, os.MkdirAll(w.WS, 0o700))
	for name, data := range files {
		w.Write(t, name, data)
	}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		w.Vars[k] = v
	}
	return w
}

// Write writes one file of the world.
func (w *World) Write(t testing.TB, name, data string) {
	t.Helper()
	p := filepath.Join(w.Root, name)
	must(t, os.MkdirAll(filepath.Dir(p), 0o700))
	must(t, os.WriteFile(p, []byte(data), 0o600))
}

// Env is the world's app.Env: its variables, its workspace as the working
// directory, no managed file.
func (w *World) Env() app.Env {
	return app.Env{
		Lookup:      func(k string) (string, bool) { v, ok := w.Vars[k]; return v, ok },
		Cwd:         w.WS,
		ManagedPath: filepath.Join(w.Root, "etc", "managed-mcp.json"),
	}
}

// Private is the world's private (local scope) file: outside the
// workspace, under the world's configuration directory, named by a hash
// of the workspace root (so a golden file writes it as a placeholder).
func (w *World) Private() string { return app.DefaultLocalPath(w.Env()) }

// Run is a factory and what a test reads of it.
type Run struct {
	F      *cmdutil.Factory
	IO     *iostreams.IOStreams
	Out    *iostreams.Buffer
	ErrOut *iostreams.Buffer
	Clock  *clock.Fake
}

// Factory returns a factory on the world, with test streams (no terminal)
// and a fake clock.
func (w *World) Factory(t testing.TB) *Run {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := cmdutil.New(ios, w.Env(), clk)
	t.Cleanup(f.Close)
	return &Run{F: f, IO: ios, Out: out, ErrOut: errOut, Clock: clk}
}

// Execute runs cmd with args under a root that has the global flags of
// f, as the CLI would, and returns cmd's error.
func Execute(f *cmdutil.Factory, cmd *cobra.Command, args ...string) error {
	root := &cobra.Command{Use: "mcpward", SilenceErrors: true, SilenceUsage: true}
	cmdutil.BindGlobalFlags(root.PersistentFlags(), f.Globals)
	root.SetFlagErrorFunc(cmdutil.FlagErrorFunc)
	root.AddCommand(cmd)
	root.SetArgs(append([]string{cmd.Name()}, args...))
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	_, err := root.ExecuteC()
	return err
}

// JSONString quotes s as a JSON string.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Executable is the running test binary (a stdio server when its
// environment names a testserver mode).
func Executable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	return exe
}

// TimedOutAfter finds in s the words of a timeout, "timed out after D"
// (progress.TimedOut), between the regular expressions prefix and suffix,
// and returns D; ok is false when s holds none. A test checks D against
// the limit from below only: a timed-out attempt or call ran at least its
// limit (D, rounded to 0.1 s, is the limit or more), while how soon a
// loaded machine reports the timeout is no contract of the CLI's.
func TimedOutAfter(s, prefix, suffix string) (d time.Duration, ok bool) {
	m := regexp.MustCompile(prefix + `timed out after (\d+\.\ds|\d+m\d+s)` + suffix).FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	return d, err == nil
}

// must fails t on err. (This package is not a test file, so it keeps to
// the standard library: testify is for tests.)
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
