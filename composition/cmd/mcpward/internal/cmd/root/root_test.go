package root

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/core/refusal"
)

// main runs a command line on a fresh world and returns its exit code,
// stdout and stderr.
func main(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	run := cmdtest.NewWorld(t, nil).Factory(t)
	code := Main(context.Background(), run.F, args, "v1.2.3-test")
	return code, run.Out.String(), run.ErrOut.String()
}

func TestEveryCommandIsDocumented(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	root := NewCmdRoot(run.F, "test")
	for _, c := range root.Commands() {
		t.Run(c.Name(), func(t *testing.T) {
			assert.NotEmpty(t, c.Short)
			assert.NotEmpty(t, c.Long)
			assert.NotEmpty(t, c.Example)
			assert.NotNil(t, c.Args, "arguments are checked")
		})
	}
}

func TestHelp(t *testing.T) {
	code, help, _ := main(t, "help", "call")
	require.Equal(t, 0, code)
	code, flag, _ := main(t, "call", "--help")
	require.Equal(t, 0, code)
	assert.Equal(t, help, flag, "help X and X --help agree")
	assert.Contains(t, help, "Usage:\n  mcpward call (SERVER TOOL | SERVER/TOOL | mcp__SERVER__TOOL) [--args JSON] [flags]\n")
	assert.Regexp(t, `(?m)^Flags:\n +--arg KEY=VALUE`, help)
	assert.Contains(t, help, "--args JSON")
	assert.Contains(t, help, "--call-timeout duration")
	assert.Contains(t, help, "Global flags:")
	assert.Contains(t, help, "--state-dir DIR")
	assert.Contains(t, help, "-h, --help")
	assert.Contains(t, help, "Examples:\n  $ mcpward call")
	assert.NotContains(t, help, "Every problem found", "only that command's help")
	assert.NotContains(t, help, "Exit codes: 0 ok", "not the overview")

	code, list, _ := main(t, "list", "-h")
	require.Equal(t, 0, code)
	assert.Contains(t, list, "\nFlags:\n      --wide ", "list's one flag of its own (#25 item 8)")

	code, bare, stderr := main(t)
	assert.Equal(t, 0, code, "bare mcpward shows the help")
	assert.Empty(t, stderr)
	code, root, _ := main(t, "--help")
	require.Equal(t, 0, code)
	assert.Equal(t, root, bare)
	for _, want := range []string{"Commands:\n  list ", "  completion ", "Global flags", "--version", "Exit codes:", "130"} {
		assert.Contains(t, root, want)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		code, out, _ := main(t, args...)
		assert.Equal(t, 0, code)
		assert.Equal(t, "mcpward v1.2.3-test\n", out)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"lsit"}, "mcpward: unknown command; did you mean \"list\"?\nRun \"mcpward --help\" for usage.\n"},
		{[]string{"cnry-secret-typo"}, "mcpward: unknown command\nRun \"mcpward --help\" for usage.\n"},
		{[]string{"help", "shwo"}, "mcpward: unknown help topic; did you mean \"show\"?\nRun \"mcpward help --help\" for usage.\n"},
		{[]string{"--json=cnry-bool", "list"}, "mcpward: invalid value for --json: invalid syntax\nRun \"mcpward list --help\" for usage.\n"},
		{[]string{"--allow-header-helper", "cnry not json", "list"}, "takes a JSON array of strings"},
		{[]string{"show", "a", "b"}, "mcpward: show takes 1 argument(s), got 2\nRun \"mcpward show --help\" for usage.\n"},
		{[]string{"list", "--args", "{}"}, "mcpward: unknown flag: --args\n"},
		{[]string{"--profile", "cloud", "list"}, "invalid value for --profile: unknown profile (want headless or desktop)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, stderr := main(t, tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tt.stderr)
			assert.NotContains(t, stderr, "cnry", "a value typed is never echoed")
		})
	}
}

func TestReport(t *testing.T) {
	unknown := &refusal.Error{Class: refusal.Config, Reason: "unknown_server", Server: "ghost", Detail: "de\x1b]0;x\x07tail\u202e"}
	tests := []struct {
		name        string
		err         error
		json        bool
		code        int
		out, stderr string
	}{
		{name: "ok", err: nil, code: 0},
		{name: "silent", err: cmdutil.ErrSilent, code: 1},
		{name: "cancelled", err: fmt.Errorf("x: %w", cmdutil.ErrCancelled), code: 1},
		{name: "usage", err: cmdutil.FlagErrorf("bad"), code: 2, stderr: "mcpward: bad\nRun \"mcpward --help\" for usage.\n"},
		{name: "refusal", err: unknown, code: 1, stderr: "mcpward: config: unknown_server (server \"ghost\"): de\\x1b]0;x\\x07tail\\u202e\n"},
		{name: "refusal json", err: unknown, json: true, code: 1,
			out: "{\n  \"error\": {\n    \"class\": \"config\",\n    \"reason\": \"unknown_server\",\n    \"server\": \"ghost\",\n    \"detail\": \"de\\u001b]0;x\\u0007tail\\u202e\"\n  }\n}\n"},
		{name: "noted", err: &cmdutil.NotedError{Err: unknown, Note: "timed out after 1.0s"}, code: 1,
			stderr: "mcpward: config: unknown_server (server \"ghost\"): de\\x1b]0;x\\x07tail\\u202e\nmcpward: timed out after 1.0s\n"},
		{name: "any other error", err: errors.New("secret https://u:p@host/path"), code: 1, stderr: "mcpward: internal: internal\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := cmdtest.NewWorld(t, nil).Factory(t)
			run.F.Globals.JSON = tt.json
			assert.Equal(t, tt.code, Report(run.F, nil, tt.err))
			assert.Equal(t, tt.out, run.Out.String())
			assert.Equal(t, tt.stderr, run.ErrOut.String())
		})
	}
}
