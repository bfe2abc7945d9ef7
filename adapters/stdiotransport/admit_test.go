//go:build linux || darwin

package stdiotransport

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// Admit runs Transport's checks and spawns nothing; the program is looked
// up on the child's PATH (the grant's), never the parent's.
func TestLauncherAdmit(t *testing.T) {
	w := newWorld(t)
	bin := filepath.Join(w.root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "tool-on-child-path"), []byte("#!/bin/sh\n"), 0o755))
	w.grant.BaselineEnv["PATH"] = bin
	l := New(portstest.GrantAllProcesses(w.grant), nil)

	require.NoError(t, l.Admit(context.Background(), w.target()))
	assert.Empty(t, w.starts(t), "nothing spawned")

	tg := ports.Target{ServerID: "fx", Kind: ports.TransportStdio, Command: "tool-on-child-path"}
	require.NoError(t, l.Admit(context.Background(), tg))

	tg.Command = "go" // on the parent's PATH, not the child's
	requireRefusal(t, l.Admit(context.Background(), tg), refusal.Config, "program_not_found")

	tg.Command, tg.Cwd = "tool-on-child-path", "missing-dir"
	requireRefusal(t, l.Admit(context.Background(), tg), refusal.Refused, "cwd_not_found")

	tg.Kind = ports.TransportHTTP
	requireRefusal(t, l.Admit(context.Background(), tg), refusal.Config, "transport_kind_mismatch")
}
