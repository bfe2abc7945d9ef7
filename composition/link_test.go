package composition_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heavy are the modules only some profiles may link: the OS keychain and
// its D-Bus client (desktop), the PostgreSQL driver (shared).
var heavy = map[string][]string{
	"keychain": {"github.com/99designs/keyring", "github.com/godbus/dbus", "github.com/mcpward/mcpward/adapters/keychainstore"},
	"postgres": {"github.com/jackc/", "github.com/mcpward/mcpward/adapters/pgstore"},
}

// deps returns every non-standard package a program importing pkgs links.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	require.NoError(t, err, "go list -deps")
	return strings.Fields(string(out))
}

// links returns the packages of ds under any of the prefixes.
func links(ds []string, prefixes []string) []string {
	var hit []string
	for _, d := range ds {
		for _, p := range prefixes {
			if strings.HasPrefix(d, p) {
				hit = append(hit, d)
			}
		}
	}
	return hit
}

// TestProfilesLinkOnlyTheirStores: a headless or in-memory host links
// neither the keychain and D-Bus code nor the PostgreSQL driver; each
// heavy dependency comes only with the profile that uses it.
func TestProfilesLinkOnlyTheirStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	const mod = "github.com/mcpward/mcpward/composition"
	for _, tt := range []struct {
		pkgs []string
		may  []string
	}{
		{[]string{mod, mod + "/headless", mod + "/memory"}, nil},
		{[]string{mod + "/desktop"}, []string{"keychain"}},
		{[]string{mod + "/shared"}, []string{"postgres"}},
	} {
		ds := deps(t, tt.pkgs...)
		for kind, prefixes := range heavy {
			got := links(ds, prefixes)
			if slices.Contains(tt.may, kind) {
				assert.NotEmpty(t, got, "%v links the %s code", tt.pkgs, kind)
			} else {
				assert.Empty(t, got, "%v must not link the %s code", tt.pkgs, kind)
			}
		}
	}
}
