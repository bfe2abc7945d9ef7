package cmdutil

import (
	"log/slog"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
)

func parse(t *testing.T, args ...string) (*Globals, error) {
	t.Helper()
	g := NewGlobals()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SetOutput(nopWriter{})
	BindGlobalFlags(fs, g)
	err := fs.Parse(args)
	if err != nil {
		err = FlagErrorFunc(nil, err)
	}
	return g, err
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func TestGlobalFlags(t *testing.T) {
	g, err := parse(t, "--managed", "/a", "--managed", "/b", "--local", "l.json", "--project", "p.json", "--user", "u.json",
		"--plugin", "x.json", "--state-dir", "st", "--profile", "desktop", "--trust-workspace", "--json",
		"--allow-header-helper", `["/usr/bin/token","--for","api"]`)
	require.NoError(t, err)
	assert.Equal(t, []string{"/a", "/b"}, g.Managed)
	assert.Equal(t, app.Path{Value: "l.json", Set: true}, g.Local)
	assert.Equal(t, app.Path{Value: "st", Set: true}, g.StateDir)
	assert.Equal(t, app.ProfileDesktop, g.Profile)
	assert.True(t, g.TrustWorkspace)
	assert.True(t, g.JSON)
	assert.Equal(t, [][]string{{"/usr/bin/token", "--for", "api"}}, g.AllowHelpers)

	g, err = parse(t)
	require.NoError(t, err)
	assert.Equal(t, app.ProfileHeadless, g.Profile)
	assert.False(t, g.User.Set)
}

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "cnry-cloud"}, "invalid value for --profile: unknown profile (want headless or desktop)"},
		{[]string{"--json=cnry-x"}, "invalid value for --json: invalid syntax"},
		{[]string{"--allow-header-helper", "cnry"}, "invalid value for --allow-header-helper: takes a JSON array of strings, the helper's exact argv"},
		{[]string{"--allow-header-helper", "[]"}, "takes a JSON array of strings"},
		{[]string{"--local", ""}, "invalid value for --local: empty path"},
		{[]string{"--state-dir"}, "--state-dir needs a value"},
		{[]string{"--nope"}, "unknown flag: --nope"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := parse(t, tt.args...)
			require.Error(t, err)
			assert.True(t, IsUsage(err))
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "cnry", "the value is never echoed")
		})
	}
}

func TestDurationValue(t *testing.T) {
	d := time.Second
	v := DurationValue{D: &d}
	require.NoError(t, v.Set("2m"))
	assert.Equal(t, 2*time.Minute, d)
	require.NoError(t, v.Set("0"))
	assert.Zero(t, d)
	assert.Error(t, v.Set("-1s"))
	assert.Error(t, v.Set("soon"))
	assert.Equal(t, "duration", v.Type())
}

func TestStripQuoted(t *testing.T) {
	assert.Equal(t, "invalid argument for flag: x", stripQuoted(`invalid argument "se\"cret" for flag: x`))
	assert.Equal(t, "a", stripQuoted(`a"unterminated`))
}

func TestLogLevelFlag(t *testing.T) {
	g, err := parse(t)
	require.NoError(t, err)
	assert.Equal(t, slog.LevelError, g.LogLevel, "the default")
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError} {
		g, err := parse(t, "--log-level", in)
		require.NoError(t, err, in)
		assert.Equal(t, want, g.LogLevel, in)
	}
	_, err = parse(t, "--log-level", "loud")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want debug, info, warn or error")
}
