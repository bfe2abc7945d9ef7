package app

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository identity and the generation are composition's
// (composition.GitWorkspace, tested there); the CLI's Workspace keeps one
// generation per workspace root in its state directory.
func TestWorkspaceGeneration(t *testing.T) {
	state := t.TempDir()
	ws := newWorkspace(t.TempDir(), "", state, true)
	f, err := ws.Facts(context.Background())
	require.NoError(t, err)
	assert.True(t, f.Trusted)
	assert.Regexp(t, `^[0-9a-f]{32}$`, f.Generation)

	// Another run on the same workspace sees the same generation; another
	// workspace gets its own.
	again, err := newWorkspace(ws.Root, "", state, false).Facts(context.Background())
	require.NoError(t, err)
	assert.Equal(t, f.Generation, again.Generation)
	assert.False(t, again.Trusted)
	other, err := newWorkspace(t.TempDir(), "", state, false).Facts(context.Background())
	require.NoError(t, err)
	assert.NotEqual(t, f.Generation, other.Generation)

	// A corrupt generation file fails closed.
	require.NoError(t, os.WriteFile(ws.generationFile(), []byte("not hex!"), 0o600))
	_, err = newWorkspace(ws.Root, "", state, false).Facts(context.Background())
	assert.ErrorContains(t, err, ReasonGenerationUnavailable)
}
