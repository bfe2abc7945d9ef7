package composition

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestCanonicalRemote(t *testing.T) {
	tests := []struct {
		name, remote, want string
	}{
		{"https", "https://github.com/acme/w.git", "https://github.com/acme/w.git"},
		{"userinfo, query and fragment dropped", "https://u:pass@GitHub.com/acme/w.git?token=x#frag", "https://github.com/acme/w.git"},
		{"ssh url", "ssh://git@github.com:22/acme/w.git", "ssh://github.com:22/acme/w.git"},
		{"scp-like", "git@github.com:acme/w.git", "ssh://github.com/acme/w.git"},
		{"scp-like with password", "u:p@host.example:repo.git", "ssh://host.example/repo.git"},
		{"scp-like with password and path", "u:p@host.example:acme/w.git", "ssh://host.example/acme/w.git"},
		{"path holding an at sign", "host.example:acme/a@b.git", "ssh://host.example/acme/a@b.git"},
		{"relative path", "../upstream", "file:///r/upstream"},
		{"absolute path", "/srv/git/w.git", "file:///srv/git/w.git"},
		{"unparseable url", "https://[::1/x", ""},
		{"control character", "https://github.com/acme/w.git\n[remote", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, canonicalRemote(tt.remote, "/r/w"))
		})
	}
}

// checkIdentity fails t when got, a repository identity, holds a
// credential (a password, a user but ssh's, a query, a fragment) or a
// control character: it is stored in approvals and audit records as is.
func checkIdentity(t *testing.T, got, from string) {
	t.Helper()
	if got == "" {
		return
	}
	if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		t.Fatalf("%q of %q: a control character", got, from)
	}
	u, err := url.Parse(got)
	require.NoError(t, err, "%q of %q", got, from)
	if u.User != nil {
		t.Fatalf("%q of %q keeps userinfo", got, from)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		t.Fatalf("%q of %q keeps a query or fragment", got, from)
	}
}

// FuzzCanonicalRemote: whatever a project writes as a remote URL, the
// repository identity holds no credential and no control character.
func FuzzCanonicalRemote(f *testing.F) {
	for _, s := range []string{"https://u:p@h/x?t=1#f", "git@h:x.git", "u:p@h:x", "../x", "/x", "https://[::1/x", "file:///x", "h:", "@:x", "a@b@c:d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		checkIdentity(t, canonicalRemote(remote, "/r"), remote)
	})
}

// FuzzParseRemote: whatever git config a project writes, the identity
// read from it is one line holding no credential (and reading it never
// panics).
func FuzzParseRemote(f *testing.F) {
	f.Add("[remote \"origin\"]\n\turl = https://a.example/x\n")
	f.Add("[remote \"zed\"]\nurl=z:p@h:x\n[remote \"up\"]\nURL = \"https://t@u/x?a#b\"\n")
	f.Add("[remote \"]\nurl=x\n[remote]\nurl=y\n")
	f.Fuzz(func(t *testing.T, config string) {
		path := filepath.Join(t.TempDir(), "config")
		require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
		remote := readRemote(path)
		if strings.ContainsAny(remote, "\r\n") {
			t.Fatalf("a remote of two lines: %q", remote)
		}
		checkIdentity(t, canonicalRemote(remote, "/r"), remote)
	})
}

func TestGitWorkspace(t *testing.T) {
	write := func(t *testing.T, p, data string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		dir   string
		root  string
		repo  string
	}{
		{
			name:  "outside git",
			setup: func(t *testing.T, root string) { require.NoError(t, os.MkdirAll(filepath.Join(root, "a"), 0o700)) },
			dir:   "a", root: "a", repo: "file://$ROOT/a",
		},
		{
			name: "origin wins over other remotes, from a subdirectory",
			setup: func(t *testing.T, root string) {
				write(t, filepath.Join(root, ".git", "config"), "[remote \"aaa\"]\n\turl = https://a.example/x\n[remote \"origin\"]\n\tURL = \"https://github.com/acme/w.git\"\n")
				require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", "dir"), 0o700))
			},
			dir: "sub/dir", root: "", repo: "https://github.com/acme/w.git",
		},
		{
			name: "first remote by name without origin",
			setup: func(t *testing.T, root string) {
				write(t, filepath.Join(root, ".git", "config"), "[remote \"zed\"]\nurl=https://z.example/x\n[remote \"up\"]\nurl=https://u.example/x\n")
			},
			dir: "", root: "", repo: "https://u.example/x",
		},
		{
			name: "no remote",
			setup: func(t *testing.T, root string) {
				write(t, filepath.Join(root, ".git", "config"), "[core]\n\tbare = false\n")
			},
			dir: "", root: "", repo: "file://$ROOT",
		},
		{
			name: "a token in the remote never reaches the identity",
			setup: func(t *testing.T, root string) {
				write(t, filepath.Join(root, ".git", "config"), "[remote \"origin\"]\n\turl = https://x:ghp_cnry0123456789@github.com/acme/w.git?auth=cnry#frag\n")
			},
			dir: "", root: "", repo: "https://github.com/acme/w.git",
		},
		{
			name: "linked worktree follows gitdir and commondir",
			setup: func(t *testing.T, root string) {
				write(t, filepath.Join(root, "main", ".git", "config"), "[remote \"origin\"]\n\turl = git@github.com:acme/w.git\n")
				write(t, filepath.Join(root, "main", ".git", "worktrees", "wt", "commondir"), "../..\n")
				write(t, filepath.Join(root, "wt", ".git"), "gitdir: ../main/.git/worktrees/wt\n")
			},
			dir: "wt", root: "wt", repo: "ssh://github.com/acme/w.git",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			tt.setup(t, base)
			w := GitWorkspace(filepath.Join(base, tt.dir), nil)
			assert.Equal(t, filepath.Join(base, tt.root), w.Root)
			want := tt.repo
			if rest, ok := strings.CutPrefix(want, "file://$ROOT"); ok {
				want = "file://" + filepath.ToSlash(base) + rest
			}
			assert.Equal(t, want, w.Repository)
			f, err := w.Facts(context.Background())
			require.NoError(t, err)
			assert.Equal(t, ports.WorkspaceFacts{Repository: want}, f, "untrusted, no generation without a state directory")
		})
	}
}

func TestGitWorkspaceGeneration(t *testing.T) {
	state := t.TempDir()
	ws := GitWorkspace(t.TempDir(), &WorkspaceOptions{Trusted: true, StateDir: state})
	f, err := ws.Facts(context.Background())
	require.NoError(t, err)
	assert.True(t, f.Trusted)
	assert.Regexp(t, `^[0-9a-f]{32}$`, f.Generation)
	assert.Equal(t, filepath.Join(state, "workspaces"), filepath.Dir(ws.GenerationFile()))

	// Another host on the same workspace sees the same generation; another
	// workspace gets its own; trust is the host's decision, changed later.
	again := GitWorkspace(ws.Root, &WorkspaceOptions{StateDir: state})
	g, err := again.Facts(context.Background())
	require.NoError(t, err)
	assert.Equal(t, f.Generation, g.Generation)
	assert.False(t, g.Trusted)
	again.SetTrusted(true)
	g, err = again.Facts(context.Background())
	require.NoError(t, err)
	assert.True(t, g.Trusted)
	other, err := GitWorkspace(t.TempDir(), &WorkspaceOptions{StateDir: state}).Facts(context.Background())
	require.NoError(t, err)
	assert.NotEqual(t, f.Generation, other.Generation)

	// Concurrent first runs agree on one generation.
	state2 := t.TempDir()
	var wg sync.WaitGroup
	gens := make([]string, 8)
	for i := range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := GitWorkspace(ws.Root, &WorkspaceOptions{StateDir: state2}).Facts(context.Background())
			assert.NoError(t, err)
			gens[i] = f.Generation
		}()
	}
	wg.Wait()
	for _, g := range gens {
		assert.Equal(t, gens[0], g)
	}

	// A corrupt generation file fails closed, at the next Facts already.
	require.NoError(t, os.WriteFile(ws.GenerationFile(), []byte("not hex!"), 0o600))
	f, err = ws.Facts(context.Background())
	assert.Equal(t, ReasonWorkspaceGenerationUnavailable, refusal.ReasonOf(err))
	assert.Equal(t, refusal.Internal, refusal.ClassOf(err))
	assert.Equal(t, ports.WorkspaceFacts{}, f)
}

func TestStaticTrust(t *testing.T) {
	want := ports.WorkspaceFacts{Trusted: true, Repository: "https://github.com/acme/w.git", Generation: "g1"}
	f, err := StaticTrust(want).Facts(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want, f)
}
