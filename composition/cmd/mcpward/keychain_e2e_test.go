package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionBus is the test process's own session bus address, read before
// TestMain points the process at no bus. Only TestDesktopKeychain passes
// it on, and only under scripts/keyring-session.sh.
var sessionBus = os.Getenv("DBUS_SESSION_BUS_ADDRESS")

// TestDesktopKeychain runs the desktop profile against a real OS keychain:
// a fresh gnome-keyring Secret Service started by scripts/keyring-session.sh
// (make test-keychain), which sets MCPWARD_TEST_SECRET_SERVICE=1. doctor
// probes the token store (a write, a read and a delete on the keychain), so
// "ok" proves the desktop Host reached it.
func TestDesktopKeychain(t *testing.T) {
	if os.Getenv("MCPWARD_TEST_SECRET_SERVICE") != "1" {
		t.Skip("needs a real Secret Service: run under scripts/keyring-session.sh (make test-keychain)")
	}
	require.NotEmpty(t, sessionBus)
	example := exampleBinary(t)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"files": {"command": "files-mcp"}}}`,
		"ws/.mcp.json":            `{"mcpServers": {"example": {"command": ` + jsonString(example) + `}}}`,
	}, "DBUS_SESSION_BUS_ADDRESS="+sessionBus, "XDG_RUNTIME_DIR="+os.Getenv("XDG_RUNTIME_DIR"))

	r := w.run(t, "--profile", "desktop", "doctor", "--json")
	var got struct {
		Profile string `json:"profile"`
		Stores  []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"stores"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stderr)
	assert.Equal(t, "desktop", got.Profile)
	found := false
	for _, s := range got.Stores {
		assert.True(t, s.OK, "store %s not ok on a real keychain", s.Name)
		found = found || s.Name == "tokens"
	}
	assert.True(t, found, "doctor probed no token store")

	// Every other command, in the desktop profile, on the real keychain.
	desktop := func(args ...string) result { return w.run(t, append([]string{"--profile", "desktop"}, args...)...) }
	r = desktop("list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"files"`)
	r = desktop("show", "example")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "example: denied")
	r = desktop("approve", "example")
	require.Equal(t, 0, r.code, r.stderr)
	r = desktop("tools", "example")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "mcp__example__echo")
	r = desktop("call", "example", "echo", "--args", `{"text":"from the desktop profile"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "from the desktop profile\n", r.stdout)
	r = desktop("revoke", "example")
	require.Equal(t, 0, r.code, r.stderr)
	r = desktop("call", "example", "echo", "--args", `{"text":"x"}`)
	assert.Equal(t, 1, r.code, "a revoked server is not connected")
}
