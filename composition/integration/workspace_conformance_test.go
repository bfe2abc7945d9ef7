package integration_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/conformance"
	"github.com/mcpward/mcpward/ports"
)

// TestWorkspaceTrustConformance runs conformance.RunWorkspaceTrust against
// composition's workspace trusts. GitWorkspace: a git workspace whose
// origin remote carries a password, a query and a fragment (the
// Repository holds none of them), its generation in a state directory;
// Decide is the host's SetTrusted, which changes one field only, so the
// harness has none (the suite's decisions differ in every field); Break
// makes the generation file unreadable. StaticTrust reports its facts.
func TestWorkspaceTrustConformance(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		name := "GitWorkspace/untrusted"
		if trusted {
			name = "GitWorkspace/trusted"
		}
		t.Run(name, func(t *testing.T) {
			conformance.RunWorkspaceTrust(t, func(t *testing.T) conformance.WorkspaceTrustHarness {
				root := t.TempDir()
				ws := filepath.Join(root, "ws")
				require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o700))
				require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "config"),
					[]byte("[remote \"origin\"]\n\turl = https://x:cnry-pass@GitHub.com/acme/w.git?auth=cnry-q#frag\n"), 0o600))
				w := composition.GitWorkspace(filepath.Join(ws, "sub"), &composition.WorkspaceOptions{Trusted: trusted, StateDir: filepath.Join(root, "state")})
				const gen = "0123456789abcdef0123456789abcdef"
				p := w.GenerationFile()
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
				require.NoError(t, os.WriteFile(p, []byte(gen+"\n"), 0o600))
				return conformance.WorkspaceTrustHarness{
					Trust: w,
					Want:  ports.WorkspaceFacts{Trusted: trusted, Repository: "https://github.com/acme/w.git", Generation: gen},
					Break: func() { require.NoError(t, os.WriteFile(p, []byte("not a generation\n"), 0o600)) },
				}
			})
		})
	}
	t.Run("StaticTrust", func(t *testing.T) {
		conformance.RunWorkspaceTrust(t, func(t *testing.T) conformance.WorkspaceTrustHarness {
			want := ports.WorkspaceFacts{Trusted: true, Repository: "https://github.com/acme/w.git", Generation: "g1"}
			return conformance.WorkspaceTrustHarness{Trust: composition.StaticTrust(want), Want: want}
		})
	})
}
