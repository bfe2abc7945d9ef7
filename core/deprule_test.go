package core_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modPrefix = "github.com/mcpward/mcpward/"

// TestDependencyRule enforces the dependency rule of DESIGN.md mechanically,
// over every module of the workspace: ports imports only the standard
// library; core only the standard library and ports; an adapter never
// imports another adapter; the go-sdk appears only under adapters/.
// Test-only imports are not counted (go list -deps without -test).
func TestDependencyRule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	mods := modules(t, root)
	require.Contains(t, mods, "ports")
	require.Contains(t, mods, "core")
	for _, mod := range mods {
		deps := nonStdDeps(t, filepath.Join(root, mod))
		for _, dep := range deps {
			if msg := violation(mod, dep); msg != "" {
				t.Errorf("module %s imports %s: %s", mod, dep, msg)
			}
		}
	}
}

// violation returns why module mod may not depend on package dep, or "".
func violation(mod, dep string) string {
	own := strings.HasPrefix(dep, modPrefix)
	rel := strings.TrimPrefix(dep, modPrefix)
	switch {
	case mod == "ports":
		if !(own && (rel == "ports" || strings.HasPrefix(rel, "ports/"))) {
			return "ports may import only the standard library"
		}
	case mod == "core":
		if !(own && (rel == "ports" || strings.HasPrefix(rel, "ports/") || rel == "core" || strings.HasPrefix(rel, "core/"))) {
			return "core may import only the standard library and ports"
		}
	case strings.HasPrefix(mod, "adapters/"):
		if own && strings.HasPrefix(rel, "adapters/") && !(rel == mod || strings.HasPrefix(rel, mod+"/")) {
			return "an adapter never imports another adapter"
		}
	}
	if strings.HasPrefix(dep, "github.com/modelcontextprotocol/go-sdk") && !strings.HasPrefix(mod, "adapters/") {
		return "the go-sdk lives only in adapters"
	}
	if own && strings.HasPrefix(rel, "ports/portstest") && mod != "ports" && mod != "conformance" {
		return "portstest fakes are for tests only"
	}
	return ""
}

func TestViolationRules(t *testing.T) {
	cases := []struct {
		mod, dep string
		bad      bool
	}{
		{"ports", "github.com/stretchr/testify/require", true},
		{"ports", modPrefix + "core/refusal", true},
		{"ports", modPrefix + "ports/portstest", false},
		{"core", modPrefix + "ports", false},
		{"core", modPrefix + "core/secret", false},
		{"core", modPrefix + "adapters/filestore", true},
		{"core", "golang.org/x/sync/singleflight", true},
		{"adapters/filestore", modPrefix + "adapters/keychainstore", true},
		{"adapters/filestore", modPrefix + "adapters/filestore/internal/x", false},
		{"adapters/filestore", modPrefix + "core/refusal", false},
		{"adapters/mcpsession", "github.com/modelcontextprotocol/go-sdk/mcp", false},
		{"composition", "github.com/modelcontextprotocol/go-sdk/mcp", true},
		{"core", "github.com/modelcontextprotocol/go-sdk/mcp", true},
		{"composition", modPrefix + "ports/portstest", true},
	}
	for _, c := range cases {
		t.Run(c.mod+"->"+c.dep, func(t *testing.T) {
			require.Equal(t, c.bad, violation(c.mod, c.dep) != "")
		})
	}
}

// modules lists the module directories of the workspace (relative paths).
func modules(t *testing.T, root string) []string {
	t.Helper()
	var mods []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel != "." {
				mods = append(mods, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	require.NoError(t, err)
	return mods
}

// nonStdDeps lists the non-standard packages the module's non-test packages
// depend on (its own packages included).
func nonStdDeps(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "matched no packages") {
		return nil
	}
	require.NoError(t, err, "go list in %s: %s", dir, out)
	var deps []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			deps = append(deps, l)
		}
	}
	return deps
}
